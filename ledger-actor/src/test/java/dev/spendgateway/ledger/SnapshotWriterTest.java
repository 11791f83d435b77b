package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.LoggingTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.pattern.Patterns;
import org.apache.pekko.persistence.Persistence;
import org.apache.pekko.persistence.SnapshotProtocol;
import org.apache.pekko.persistence.SnapshotSelectionCriteria;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The snapshot writer saves through the configured store, and skips a snapshot the heap has no room
 * for (saying what it needs) instead of running out of heap in the middle of the write.
 */
class SnapshotWriterTest {
  private static final long MIB = 1L << 20;
  @TempDir Path snapshots;
  private ActorTestKit kit;

  @BeforeEach
  void start() {
    kit =
        ActorTestKit.create(
            ConfigFactory.parseMap(
                    Map.of(
                        "pekko.persistence.snapshot-store.plugin",
                        "pekko.persistence.snapshot-store.local",
                        "pekko.persistence.snapshot-store.local.dir",
                        snapshots.toString(),
                        "pekko.persistence.journal.plugin",
                        "pekko.persistence.journal.inmem"))
                .withFallback(ConfigFactory.load()));
  }

  @AfterEach
  void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void aSnapshotTheHeapHasNoRoomForIsSkippedAndTheNextOneWritten() throws Exception {
    // The heap in use as the writer reads it, one value per snapshot: full at the first, not at
    // the second.
    ArrayDeque<Long> inUse = new ArrayDeque<>(List.of(250 * MIB, 10 * MIB));
    SnapshotHeadroom headroom = new SnapshotHeadroom(inUse::poll, 256 * MIB);
    // What metrics are told: each snapshot's outcome and row, in order.
    Queue<String> observed = new ConcurrentLinkedQueue<>();
    LedgerObserver observer =
        new LedgerObserver() {
          @Override
          public void snapshot(SnapshotOutcome outcome, long sequenceNr) {
            observed.add(outcome.wireName() + "@" + sequenceNr);
          }
        };
    ActorRef<Object> writer =
        kit.spawn(SnapshotWriter.create(Clock.systemUTC(), headroom, observer));
    LedgerState state = SnapshotHeadroomTest.ledgerWith(2_000, 5);

    LoggingTestKit.warn("ledger snapshot at journal row 1 skipped: writing a snapshot of 2,005")
        .withMessageContains("Raise the heap (-Xmx in JAVA_OPTS)")
        .expect(
            kit.system(),
            () -> {
              writer.tell(new SnapshotWriter.Save(1, state.forSnapshot(), 2_005));
              return null;
            });
    LoggingTestKit.info("ledger snapshot at journal row 2 written")
        .expect(
            kit.system(),
            () -> {
              writer.tell(new SnapshotWriter.Save(2, state.forSnapshot(), 2_005));
              return null;
            });

    assertEquals(2, latestSnapshotAtOrBefore(Long.MAX_VALUE));
    assertEquals(-1, latestSnapshotAtOrBefore(1), "the skipped snapshot was written after all");
    assertTrue(inUse.isEmpty(), "the heap was read once per snapshot");
    assertEquals(List.of("skipped@1", "written@2"), List.copyOf(observed));
    try (var files = Files.list(snapshots)) {
      assertEquals(1, files.count());
    }
  }

  /** The sequence number of the store's latest snapshot up to {@code maxSequenceNr}, or -1. */
  private long latestSnapshotAtOrBefore(long maxSequenceNr) throws Exception {
    var store =
        Persistence.get(Adapter.toClassic(kit.system()))
            .snapshotStoreFor("", ConfigFactory.empty());
    Object reply =
        Patterns.ask(
                store,
                new SnapshotProtocol.LoadSnapshot(
                    GlobalBudget.PERSISTENCE_ID.id(),
                    SnapshotSelectionCriteria.create(maxSequenceNr, Long.MAX_VALUE),
                    Long.MAX_VALUE),
                Duration.ofSeconds(10))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    var result = (SnapshotProtocol.LoadSnapshotResult) reply;
    return result.snapshot().isDefined() ? result.snapshot().get().metadata().sequenceNr() : -1;
  }
}
