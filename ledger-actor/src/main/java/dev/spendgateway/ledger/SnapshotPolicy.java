package dev.spendgateway.ledger;

/**
 * When the ledger writes a snapshot: once the facts written since the last one reach both {@code
 * minFacts} ({@code ledger.snapshot-every}) and half the ids the state holds (open reservations
 * plus the idempotency window's ids).
 *
 * <p>Facts, not journal rows: a row is one group commit, one fact when calls come one at a time and
 * hundreds under load, so counting rows let a busy ledger go tens of millions of facts without a
 * snapshot, all of them replayed by the next recovery. Half the ids held, because a snapshot is the
 * whole state: a fact folds in 2.4-3.5 µs and an id of a snapshot loads in 1.2-1.6 µs
 * (RecoveryBench), so replaying what came after a snapshot then takes about as long as loading it
 * (a recovery is at most about twice a snapshot's load), while a large window (millions of ids,
 * hundreds of MB) is written once per that many facts instead of every {@code minFacts}.
 */
record SnapshotPolicy(long minFacts) {

  SnapshotPolicy {
    if (minFacts < 1) {
      throw new IllegalArgumentException("ledger.snapshot-every must be at least 1");
    }
  }

  /**
   * Whether a snapshot is due after {@code factsSince} facts, the state holding {@code idsHeld}.
   */
  boolean due(long factsSince, long idsHeld) {
    return factsSince >= Math.max(minFacts, idsHeld / 2);
  }
}
