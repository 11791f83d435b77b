package dev.spendgateway.ledger.bench;

import dev.spendgateway.ledger.LedgerState;
import dev.spendgateway.ledger.SettledThenOpen;
import dev.spendgateway.ledger.SnapshotHeadroom;
import dev.spendgateway.ledger.journal.JournalSchema;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.pattern.Patterns;
import org.apache.pekko.persistence.Persistence;
import org.apache.pekko.persistence.SaveSnapshotFailure;
import org.apache.pekko.persistence.SnapshotMetadata;
import org.apache.pekko.persistence.SnapshotProtocol;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;

/**
 * How much heap a ledger holding many ids needs, and how much more while a snapshot of it is
 * serialized. The snapshot store turns the whole state into one byte array (its packed form, then
 * CBOR): for a moment the heap holds the state and that copy of it, so a heap sized only for the
 * state fails at the first snapshot.
 *
 * <p>Builds a state of {@code bench.ids} closed ids inside the idempotency window (default
 * 2,000,000) and {@code bench.open} open reservations (default 1,000), prints the live heap after a
 * full GC, then serializes the state as the snapshot store does (Pekko serialization, Jackson CBOR)
 * and prints the snapshot's size. Exits 0 when both fit in the heap it was given and 3 on an {@code
 * OutOfMemoryError}, naming the phase; {@code loadtest/snapshot-heap.sh} runs it with smaller and
 * smaller heaps to find the least each phase needs.
 *
 * <p>With {@code bench.store=true} the snapshot is saved through the shipped H2 snapshot store (a
 * temporary data dir) as the ledger's writer saves it, first asking {@link SnapshotHeadroom} as the
 * writer does ({@code bench.headroom=off} skips that), then {@code bench.after} (1) small snapshots
 * show whether the database still works: H2 closes it when its store ran out of heap mid-write.
 * {@code bench.data-dir} names the data dir instead of a temporary one and keeps it, so that a
 * gateway started on it ({@code GATEWAY_DATA_DIR}) recovers from that snapshot: how much heap a
 * restart needs to load it back.
 */
public final class SnapshotHeapBench {
  private static final Instant START = Instant.parse("2026-11-30T10:00:00Z");

  public static void main(String[] args) throws Exception {
    int ids = Integer.getInteger("bench.ids", 2_000_000);
    int open = Integer.getInteger("bench.open", 1_000);
    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    long max = Runtime.getRuntime().maxMemory() >> 20;
    boolean throughStore = Boolean.getBoolean("bench.store");
    String keptDir = System.getProperty("bench.data-dir");
    Path dataDir =
        keptDir == null
            ? Files.createTempDirectory("snapshot-heap")
            : Files.createDirectories(Path.of(keptDir));
    ActorSystem<Void> system =
        ActorSystem.create(Behaviors.empty(), "snapshot-heap", LedgerBench.ledgerConfig(dataDir));
    String phase = "building the state";
    try {
      Serialization serialization = SerializationExtension.get(Adapter.toClassic(system));
      LedgerState state = ledgerWith(ids, open);
      long steady = liveHeap(memory);
      System.out.printf(
          "state: %,d closed ids, %,d open; live heap %,d MB (%.1f bytes per id; heap max %,d MB)%n",
          ids, open, steady >> 20, (double) steady / ids, max);
      phase = "serializing the snapshot";
      long start = System.nanoTime();
      if (throughStore) {
        // As the ledger's snapshot writer does, unless bench.headroom=off: skip a snapshot the
        // heap has no room for.
        Optional<String> shortfall =
            "off".equals(System.getProperty("bench.headroom"))
                ? Optional.empty()
                : SnapshotHeadroom.ofThisJvm().shortfall(state);
        if (shortfall.isPresent()) {
          System.out.printf("store: skipped (%s); heap max %,d MB%n", shortfall.get(), max);
        } else {
          Object reply = saveThroughStore(system, state, 1);
          System.out.printf(
              "store: %s in %,d ms; heap max %,d MB%n",
              reply, (System.nanoTime() - start) / 1_000_000, max);
        }
        state = null;
        // Whether the database still works after that: small snapshots right after.
        for (int i = 0; i < Integer.getInteger("bench.after", 1); i++) {
          Thread.sleep(i * 1000L); // time is the point: how the store does i seconds later
          System.out.printf(
              "store afterwards: %s%n", saveThroughStore(system, LedgerState.empty(), 2 + i));
        }
        return;
      }
      byte[] snapshot = serialization.serialize(state).get();
      long millis = (System.nanoTime() - start) / 1_000_000;
      System.out.printf(
          "snapshot: %,d bytes (%.1f per id) in %,d ms; heap max %,d MB%n",
          snapshot.length, (double) snapshot.length / ids, millis, max);
    } catch (OutOfMemoryError e) {
      System.out.printf("OutOfMemoryError while %s (heap max %,d MB)%n", phase, max);
      System.exit(3);
    } finally {
      system.terminate();
    }
  }

  /**
   * Saves {@code state} through the configured snapshot store (the shipped H2 one, in a temporary
   * data dir), as the ledger's snapshot writer does; returns the store's reply (its class and, for
   * a failure, the cause).
   */
  private static Object saveThroughStore(ActorSystem<Void> system, LedgerState state, long seqNr)
      throws Exception {
    JournalSchema.createIfNotExists(system).toCompletableFuture().get(60, TimeUnit.SECONDS);
    org.apache.pekko.actor.ActorRef store =
        Persistence.get(Adapter.toClassic(system))
            .snapshotStoreFor("", com.typesafe.config.ConfigFactory.empty());
    SnapshotMetadata metadata = new SnapshotMetadata("global", seqNr, System.currentTimeMillis());
    Object reply =
        Patterns.ask(
                store, new SnapshotProtocol.SaveSnapshot(metadata, state), Duration.ofMinutes(5))
            .toCompletableFuture()
            .get(5, TimeUnit.MINUTES);
    return reply instanceof SaveSnapshotFailure f
        ? "SaveSnapshotFailure(" + f.cause() + ")"
        : reply.getClass().getSimpleName();
  }

  /** {@code closed} ids reserved and settled, then {@code open} left open, one per millisecond. */
  private static LedgerState ledgerWith(int closed, int open) {
    return SettledThenOpen.ledger(START, closed, open, i -> "gw-" + i, i -> null);
  }

  private static long liveHeap(MemoryMXBean memory) {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return memory.getHeapMemoryUsage().getUsed();
  }
}
