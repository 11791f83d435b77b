package dev.spendgateway.ledger;

import dev.spendgateway.ledger.Decider.Decision;
import dev.spendgateway.ledger.LedgerEvents.AllowanceIn;
import dev.spendgateway.ledger.LedgerEvents.AllowanceOut;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapLimits;
import dev.spendgateway.policy.caps.CapName;
import dev.spendgateway.policy.caps.CapUse;
import dev.spendgateway.policy.caps.CapWindows;
import dev.spendgateway.policy.caps.Spend;
import java.time.Instant;
import java.util.Optional;

/**
 * The decisions of a regional allowance transfer (docs/MULTI-REGION.md), pure like {@link Decider}:
 * {@code (state, command, now) -> (events, reply)}. A transfer is taken out in the lending region
 * ({@link #takeOut}) before it is taken in where it goes ({@link #takeIn}), never the reverse, and
 * each half is written once per transfer id; so the allowances of all regions never sum above the
 * cap, whatever is retried, lost or crashed in between.
 *
 * <p>Not wired to the actor yet: the rebalancer and the transport between regions are still to
 * build. The rules live here so that the journal's events, the audit and the simulation ({@code
 * region-sim}) rest on one definition.
 */
public final class AllowanceTransfers {
  private AllowanceTransfers() {}

  /**
   * Lend {@code micros} of {@code key}'s window from this region ({@code fromRegion}) to {@code
   * toRegion}, under {@code transferId}; {@code operator} when a person asks, else {@code null}.
   */
  public record Lend(
      String transferId,
      String fromRegion,
      String toRegion,
      CapKey key,
      long micros,
      String reason,
      String operator) {}

  /** What a transfer's half answers. */
  public sealed interface Reply {}

  /** Taken out (now, or by an earlier identical request): send {@code out} to its destination. */
  public record TakenOut(AllowanceOut out) implements Reply {}

  /** Taken in now: acknowledge it. */
  public record TakenIn(AllowanceIn in) implements Reply {}

  /** Taken in before: acknowledge it again; nothing is written. */
  public record AlreadyIn(String transferId) implements Reply {}

  /** Not taken: {@code reason} says why; {@code headroomMicros} when the headroom was short. */
  public record NotTaken(String transferId, String reason, long headroomMicros) implements Reply {}

  /**
   * Takes a loan out of this region's allowance. Refused when the window is not current, the cap is
   * not split between regions, or the amount is above the headroom (allowance − settled − held):
   * what is lent must be what this region could still have reserved, or the two regions' spend
   * could pass the cap together. A repeat of the same transfer answers the first out.
   */
  public static Decision<Reply> takeOut(
      LedgerState state, CapLimits configured, String region, Lend cmd, Instant now) {
    Optional<String> invalid = invalidLend(region, cmd);
    if (invalid.isPresent()) {
      return Decision.answer(new NotTaken(cmd.transferId(), invalid.get(), 0));
    }
    Optional<AllowanceOut> known = state.allowanceOut(cmd.transferId());
    if (known.isPresent()) {
      AllowanceOut first = known.get();
      return Decision.answer(
          first.toRegion().equals(cmd.toRegion())
                  && first.key().equals(cmd.key())
                  && first.micros() == cmd.micros()
              ? new TakenOut(first)
              : new NotTaken(
                  cmd.transferId(), "transfer id already used for a different transfer", 0));
    }
    if (state.allowanceIn(cmd.transferId()).isPresent()) {
      return Decision.answer(
          new NotTaken(cmd.transferId(), "transfer id is one this region took in", 0));
    }
    CapKey key = cmd.key();
    if (!key.window().equals(CapWindows.windowOf(key.cap(), now))) {
      return Decision.answer(
          new NotTaken(cmd.transferId(), "window " + key.window() + " is not the current one", 0));
    }
    long headroom = headroom(state, configured, key);
    if (cmd.micros() > headroom) {
      return Decision.answer(
          new NotTaken(cmd.transferId(), "above this region's headroom", Math.max(0, headroom)));
    }
    AllowanceOut out =
        new AllowanceOut(
            cmd.transferId(),
            cmd.fromRegion(),
            cmd.toRegion(),
            key.cap(),
            key.subject(),
            key.window(),
            cmd.micros(),
            cmd.reason(),
            cmd.operator(),
            now);
    return Decision.of(out, new TakenOut(out));
  }

  /**
   * Takes a delivered transfer in, once per transfer id: a repeat (a retry, a duplicate, a re-send
   * after the lender's crash) is acknowledged again and writes nothing. An in for a window that has
   * ended is still taken: the lender has already given it up, and no reserve uses it any more.
   */
  public static Decision<Reply> takeIn(
      LedgerState state, String region, AllowanceOut delivered, Instant now) {
    if (!region.equals(delivered.toRegion()) || region.equals(delivered.fromRegion())) {
      return Decision.answer(
          new NotTaken(delivered.transferId(), "transfer is not to this region", 0));
    }
    if (delivered.micros() <= 0) {
      return Decision.answer(new NotTaken(delivered.transferId(), "amount must be positive", 0));
    }
    Optional<AllowanceIn> known = state.allowanceIn(delivered.transferId());
    if (known.isPresent()) {
      AllowanceIn first = known.get();
      return Decision.answer(
          first.fromRegion().equals(delivered.fromRegion())
                  && first.key().equals(delivered.key())
                  && first.micros() == delivered.micros()
              ? new AlreadyIn(delivered.transferId())
              : new NotTaken(
                  delivered.transferId(), "transfer id already used for a different transfer", 0));
    }
    if (state.allowanceOut(delivered.transferId()).isPresent()) {
      return Decision.answer(
          new NotTaken(delivered.transferId(), "transfer id is one this region took out", 0));
    }
    AllowanceIn in = AllowanceIn.of(delivered, now);
    return Decision.of(in, new TakenIn(in));
  }

  /**
   * What this region could still reserve in {@code key}'s window: its configured share, plus what
   * transfers moved in, minus settled and held spend.
   */
  public static long headroom(LedgerState state, CapLimits configured, CapKey key) {
    Spend s = state.spendOn(key);
    return new CapUse(
            key,
            configuredLimit(configured, key.cap()) + state.allowanceMovedIn(key),
            s.settledMicros(),
            s.reservedMicros())
        .headroomMicros();
  }

  /** The configured limit of a pool cap; per-subject caps are not split between regions yet. */
  static long configuredLimit(CapLimits limits, CapName cap) {
    return switch (cap) {
      case GLOBAL_DAILY -> limits.globalDailyMicros();
      case GLOBAL_MONTHLY -> limits.globalMonthlyMicros();
      case FREE_DAILY -> limits.freeDailyMicros();
      case TRIAL_DAILY -> limits.trialDailyMicros();
      case PREVIEW_LIFETIME, BRAND_DAILY, BRAND_MONTHLY ->
          throw new IllegalArgumentException(cap.wireName() + " is not split between regions");
    };
  }

  private static Optional<String> invalidLend(String region, Lend cmd) {
    if (cmd.transferId() == null
        || cmd.transferId().isBlank()
        || cmd.transferId().length() > CommandValidation.MAX_ID_LENGTH) {
      return Optional.of("transferId is missing or too long");
    }
    if (!region.equals(cmd.fromRegion())) {
      return Optional.of("a region lends only its own allowance");
    }
    if (cmd.toRegion() == null || cmd.toRegion().isBlank() || cmd.toRegion().equals(region)) {
      return Optional.of("toRegion must be another region");
    }
    if (cmd.micros() <= 0) {
      return Optional.of("amount must be positive");
    }
    if (cmd.reason() == null || cmd.reason().isBlank()) {
      return Optional.of("a transfer needs a reason (operators read it)");
    }
    if (cmd.key() == null || cmd.key().cap().perSubject()) {
      return Optional.of("only pool caps are split between regions");
    }
    return Optional.empty();
  }
}
