package dev.spendgateway.ledger.journal;

import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.actor.AbstractExtensionId;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Extension;

/**
 * What the durable journal did in this actor system: committed writes, syncs and their time. One
 * per actor system (a Pekko extension) because the journal plugin creates its DAO reflectively,
 * out of the ledger's reach; metrics and tests read it here.
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
   * For bench output and logs only. The two decimals are a ratio (writes per sync) and a mean time;
   * no money passes through here, so doubles are fine (amounts stay in exact micros elsewhere).
   */
  @Override
  public String toString() {
    long n = syncs();
    return String.format("%d writes, %d syncs (%d failed), %.2f writes per sync, mean sync %.3f ms", writes(), n,
        failedSyncs(), n == 0 ? 0.0 : (double) syncedWrites() / n, n == 0 ? 0.0 : syncNanos() / 1e6 / n);
  }

  private static final class Id extends AbstractExtensionId<JournalSyncStats> {
    @Override
    public JournalSyncStats createExtension(ExtendedActorSystem system) {
      return new JournalSyncStats();
    }
  }
}
