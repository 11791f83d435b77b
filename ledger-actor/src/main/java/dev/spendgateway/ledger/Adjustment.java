package dev.spendgateway.ledger;

import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapWindows;
import java.time.Instant;
import java.util.Objects;

/**
 * One operator adjustment as the ledger remembers it, so a repeat of its id gets the first answer
 * and changes nothing (adjustments are rare: their ids are kept for good, never compacted).
 *
 * @param subject brand id (app) or preview id (trial); {@code null} on the free lane
 * @param deltaMicros settled spend added to the caps it moves; negative = credit
 * @param window the day ({@code 2026-11-29}) or month ({@code 2026-11}) it corrects
 * @param scope whether it moved only the subject's caps or every cap of the lane
 */
public record Adjustment(
    String id,
    String operator,
    String reason,
    Lane lane,
    String subject,
    long deltaMicros,
    Instant at,
    String window,
    AdjustmentScope scope) {

  /**
   * Read from a snapshot written before adjustments named their window: as its event reads (see
   * there).
   */
  public Adjustment {
    window = window == null && at != null ? CapWindows.dayKey(at) : window;
    scope = scope == null ? AdjustmentScope.REFUND : scope;
  }

  /** The adjustment an event records. */
  static Adjustment of(LedgerEvents.SpendAdjusted e) {
    return new Adjustment(
        e.adjustmentId(),
        e.operator(),
        e.reason(),
        e.lane(),
        e.subject(),
        e.deltaMicros(),
        e.at(),
        e.window(),
        e.scope());
  }

  /**
   * Whether a repeated adjustment asks exactly what this one did (else it is a conflicting reuse).
   * The reason is free text and not compared: the first one stays in the journal.
   */
  public boolean sameAdjustmentAs(
      Lane lane,
      String subject,
      long deltaMicros,
      String operator,
      String window,
      AdjustmentScope scope) {
    return this.lane == lane
        && Objects.equals(this.subject, subject)
        && this.deltaMicros == deltaMicros
        && Objects.equals(this.operator, operator)
        && Objects.equals(this.window, window)
        && this.scope == scope;
  }
}
