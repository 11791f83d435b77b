package dev.spendgateway.regionsim;

/**
 * How much a region may lend of one cap window: never more than it asked for, never from below its
 * floor, never faster than its rate. Pure, so the rule the simulation proves is the one a ledger
 * would decide an {@code AllowanceOut} with.
 */
final class AllowanceRules {
  private AllowanceRules() {}

  /**
   * The amount to take out, or 0 to lend nothing.
   *
   * @param headroomMicros allowance − settled − held: what this region could still reserve
   * @param floorMicros headroom this region keeps for its own callers
   * @param wantMicros what the borrower asked for
   * @param rateLeftMicros what this region may still lend of this window in the current minute
   */
  static long lendable(
      long headroomMicros, long floorMicros, long wantMicros, long rateLeftMicros) {
    long spare = headroomMicros - floorMicros;
    return Math.max(0, Math.min(Math.min(spare, wantMicros), rateLeftMicros));
  }
}
