package dev.spendgateway.ledger;

/**
 * The snapshot codec's steps one at a time, for benchmarks outside this package ({@code
 * bench.RecoveryBench} times parsing a snapshot apart from building the state from it).
 */
public final class SnapshotCodec {
  private SnapshotCodec() {}

  /** The state a parsed snapshot holds (what Jackson's delegating creator calls after parsing). */
  public static LedgerState stateOf(LedgerSnapshot snapshot) {
    return snapshot.toState();
  }
}
