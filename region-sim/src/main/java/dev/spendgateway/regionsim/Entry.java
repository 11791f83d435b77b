package dev.spendgateway.regionsim;

import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.policy.caps.CapKey;
import java.time.Instant;

/**
 * One row of a region's simulated journal: a ledger fact exactly as the real ledger writes it, or
 * one half of an allowance transfer. The transfer records have the shape the ledger's {@code
 * AllowanceOut} / {@code AllowanceIn} events are designed with (docs/MULTI-REGION.md), so that what
 * the simulation proves is about the events the ledger is to journal, not about something else.
 */
sealed interface Entry {

  /** A fact decided by the real {@code Decider} and folded by the real {@code LedgerState}. */
  record LedgerFact(Event event) implements Entry {}

  /** Both halves of a transfer carry the same facts; only which journal they are in differs. */
  sealed interface TransferHalf extends Entry {
    String transferId();

    int from();

    int to();

    CapKey key();

    long micros();

    /** Why it moved (operator-visible): which policy, or which operator and why. */
    String reason();

    Instant at();
  }

  /**
   * Journaled in the source region first: its allowance of {@code key} is lower from here on, and
   * the amount is in flight until the destination journals the matching {@link AllowanceIn}.
   */
  record AllowanceOut(
      String transferId, int from, int to, CapKey key, long micros, String reason, Instant at)
      implements TransferHalf {}

  /** Journaled in the destination once per {@code transferId}: its allowance rises. */
  record AllowanceIn(
      String transferId, int from, int to, CapKey key, long micros, String reason, Instant at)
      implements TransferHalf {
    static AllowanceIn of(AllowanceOut out, Instant at) {
      return new AllowanceIn(
          out.transferId(), out.from(), out.to(), out.key(), out.micros(), out.reason(), at);
    }
  }
}
