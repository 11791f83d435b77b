package dev.spendgateway.ledger.journal;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.AbstractExtensionId;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Extension;

/**
 * What the durable journal did in this actor system: committed writes, syncs and their time. One
 * per actor system (a Pekko extension) because the journal plugin creates its DAO reflectively, out
 * of the ledger's reach; metrics and tests read it here.
 */
public final class JournalSyncStats implements Extension {
  private static final Id ID = new Id();

  private final AtomicLong writes = new AtomicLong();
  private final AtomicLong syncs = new AtomicLong();
  private final AtomicLong failedSyncs = new AtomicLong();
  private final AtomicLong syncedWrites = new AtomicLong();
  private final AtomicLong syncNanos = new AtomicLong();

  /** The stats of {@code system} (a typed system: {@code system.classicSystem()}). */
  public static JournalSyncStats get(ActorSystem system) {
    return ID.get(system);
  }

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

  private static final class Id extends AbstractExtensionId<JournalSyncStats> {
    @Override
    public JournalSyncStats createExtension(ExtendedActorSystem system) {
      return new JournalSyncStats();
    }
  }
}
