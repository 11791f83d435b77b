package dev.spendgateway.ledger.journal;

import java.util.concurrent.atomic.AtomicLong;

/**
 * What the durable journal did: committed writes, syncs and their time. Kept by the ledger's {@link
 * JournalWriter}; metrics, the bench and tests read it there.
 */
public final class JournalSyncStats {

  private final AtomicLong writes = new AtomicLong();
  private final AtomicLong syncs = new AtomicLong();
  private final AtomicLong failedSyncs = new AtomicLong();
  private final AtomicLong syncedWrites = new AtomicLong();
  private final AtomicLong syncNanos = new AtomicLong();

  /** Journal writes committed to the database (each waits for a sync before it is confirmed). */
  public long writes() {
    return writes.get();
  }

  /** Syncs that finished and reached the disk. */
  public long syncs() {
    return syncs.get();
  }

  /** Syncs that failed (their writes were failed, never confirmed). */
  public long failedSyncs() {
    return failedSyncs.get();
  }

  /** Writes confirmed after a successful sync. */
  public long syncedWrites() {
    return syncedWrites.get();
  }

  /** Total time spent in successful syncs, in nanoseconds. */
  public long syncNanos() {
    return syncNanos.get();
  }

  void writeCommitted() {
    writes.incrementAndGet();
  }

  void synced(int coveredWrites, long nanos, boolean ok) {
    if (ok) {
      syncs.incrementAndGet();
      syncedWrites.addAndGet(coveredWrites);
      syncNanos.addAndGet(nanos);
    } else {
      failedSyncs.incrementAndGet();
    }
  }

  /**
   * For bench output and logs only. Integer arithmetic throughout, like every figure in the ledger:
   * writes per sync in hundredths, the mean sync in microseconds.
   */
  @Override
  public String toString() {
    long n = syncs();
    long perSyncHundredths = n == 0 ? 0 : syncedWrites() * 100 / n;
    long meanSyncMicros = n == 0 ? 0 : syncNanos() / 1_000 / n;
    return String.format(
        "%d writes, %d syncs (%d failed), %d.%02d writes per sync, mean sync %d µs",
        writes(),
        n,
        failedSyncs(),
        perSyncHundredths / 100,
        perSyncHundredths % 100,
        meanSyncMicros);
  }
}
