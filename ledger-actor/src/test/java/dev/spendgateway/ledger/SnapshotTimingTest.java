package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerProtocol.Batch;
import dev.spendgateway.ledger.LedgerProtocol.BatchWritten;
import dev.spendgateway.ledger.LedgerProtocol.Batchable;
import dev.spendgateway.ledger.LedgerProtocol.Command;
import dev.spendgateway.ledger.LedgerProtocol.Reserve;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.policy.access.Lane;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * When the ledger snapshots, counted in facts: a row of hundreds of facts (a group commit under
 * load) counts as hundreds, and the facts a recovery replayed count towards the next snapshot. With
 * snapshots every N journal rows, a busy ledger went tens of millions of facts without one (every
 * one of them replayed after a crash), and a ledger restarted more often than every N rows never
 * took one.
 */
@ExtendWith(TestKitJUnit5Extension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SnapshotTimingTest {

  @JUnit5TestKit
  final ActorTestKit testKit =
      new JUnit5TestKitBuilder()
          .withCustomConfig(EventSourcedBehaviorTestKit.config().withFallback(ConfigFactory.load()))
          .build();

  private final TestClock clock = TestClock.at("2026-11-30T10:00:00Z");

  private EventSourcedBehaviorTestKit<Command, Event, LedgerState> ledger(int snapshotEvery) {
    EventSourcedBehaviorTestKit<Command, Event, LedgerState> kit =
        EventSourcedBehaviorTestKit.create(
            testKit.system(),
            GlobalBudget.create(GlobalBudgetTest.settings(snapshotEvery), clock),
            EventSourcedBehaviorTestKit.enabledSerializationSettings().withVerifyCommands(false));
    kit.clear();
    kit.snapshotTestKit().orElseThrow().clearAll();
    return kit;
  }

  /** One group commit (one journal row) of {@code count} one-cent reserves. */
  private void oneRow(
      EventSourcedBehaviorTestKit<Command, Event, LedgerState> kit, String prefix, int count) {
    TestProbe<ReserveReply> callers = testKit.createTestProbe();
    List<Batchable> commands = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      commands.add(new Reserve(prefix + i, Lane.FREE, null, 10_000, 0, 0, callers.ref()));
    }
    kit.<BatchWritten>runCommand(replyTo -> new Batch(commands, replyTo));
  }

  /** The snapshots written, once {@code expected} are (they are written beside the ledger). */
  private List<Long> snapshotRows(
      EventSourcedBehaviorTestKit<Command, Event, LedgerState> kit, int expected)
      throws InterruptedException {
    Eventually.until(
        expected + " snapshots are written",
        Duration.ofSeconds(5),
        () -> snapshotRows(kit),
        rows -> rows.size() >= expected);
    // Time is the point: no more than expected, a non-event watched over a short window.
    Thread.sleep(100);
    return snapshotRows(kit);
  }

  private List<Long> snapshotRows(EventSourcedBehaviorTestKit<Command, Event, LedgerState> kit) {
    return kit
        .snapshotTestKit()
        .orElseThrow()
        .persistedInStorage(GlobalBudget.PERSISTENCE_ID.id())
        .stream()
        .map(p -> p.first().sequenceNr())
        .toList();
  }

  @Test
  void aRowOfManyFactsCountsAsManyFacts() throws Exception {
    EventSourcedBehaviorTestKit<Command, Event, LedgerState> kit = ledger(100);
    oneRow(kit, "a", 60);
    assertEquals(List.of(), snapshotRows(kit, 0), "60 facts: not yet");
    oneRow(kit, "b", 60);
    // Row 2 brought the facts to 120: due (at least 100, and at least half the 120 ids held).
    assertEquals(List.of(2L), snapshotRows(kit, 1));
  }

  @Test
  void oneFactPerRowSnapshotsEveryNFacts() throws Exception {
    EventSourcedBehaviorTestKit<Command, Event, LedgerState> kit = ledger(10);
    for (int i = 0; i < 25; i++) {
      oneRow(kit, "r" + i + "-", 1);
    }
    // 10 facts (10 ids held) and 10 more (20 held, half of it 10): rows 10 and 20.
    assertEquals(List.of(10L, 20L), snapshotRows(kit, 2));
  }

  @Test
  void aLargeStateIsSnapshottedOncePerHalfItsIds() throws Exception {
    EventSourcedBehaviorTestKit<Command, Event, LedgerState> kit = ledger(10);
    oneRow(kit, "big", 400); // row 1: 400 facts, 400 ids held: due
    for (int i = 0; i < 450; i++) {
      oneRow(kit, "r" + i + "-", 1);
    }
    // After row 1 the state holds 400+ ids: the next snapshot waits for 400 facts, not 10.
    List<Long> rows = snapshotRows(kit, 2);
    assertEquals(1L, rows.get(0));
    assertEquals(2, rows.size(), rows.toString());
    long factsBetween = rows.get(1) - rows.get(0); // one fact per row after row 1
    long idsHeldThen = 400 + factsBetween;
    assertEquals(idsHeldThen / 2, factsBetween, 1, "facts between the two snapshots");
  }

  /**
   * On a real journal and snapshot store (H2 file): the snapshot is read back through Jackson, so
   * the count restarts at the snapshot and the recovery's replay is what it counts.
   */
  @Test
  void factsReplayedByARecoveryCountTowardsTheNextSnapshotAndOnlyTheNewestIsKept(
      @TempDir Path dataDir) throws Exception {
    Map<String, Object> every10 = Map.of("ledger.snapshot-every", 10);
    try (H2Ledger ledger = H2Ledger.start(dataDir, every10)) {
      for (int i = 0; i < 16; i++) { // one call at a time: one fact per row
        reserve(ledger, "r" + i);
      }
      awaitSnapshotRows(dataDir, List.of(10L)); // written beside the ledger: before it stops
    }

    try (H2Ledger ledger = H2Ledger.start(dataDir, every10)) { // replays rows 11-16
      for (int i = 16; i < 20; i++) {
        reserve(ledger, "r" + i);
      }
      // 6 replayed + 4 new = 10 since the snapshot at row 10: due at row 20, not at row 26.
      awaitSnapshotRows(dataDir, List.of(20L));
    }
  }

  /**
   * A snapshot is written beside the ledger: while the store takes its time (here: held until the
   * test lets it go), every reserve is answered as usual. With Pekko's own snapshotting the ledger
   * held every command, and the answers of the row that made the snapshot due, until the store was
   * done: 1.4 s for 400,000 ids, seconds for a day's window.
   */
  @Test
  void aSlowSnapshotDoesNotHoldUpTheLedger(@TempDir Path dataDir) throws Exception {
    Map<String, Object> heldStore =
        Map.of(
            "ledger.snapshot-every",
            10,
            "jdbc-snapshot-store.class",
            HeldSnapshotStore.class.getName());
    HeldSnapshotStore.hold();
    try (H2Ledger ledger = H2Ledger.start(dataDir, heldStore)) {
      for (int i = 0; i < 10; i++) {
        reserve(ledger, "h" + i, 2); // the 10th row makes a snapshot due
      }
      Eventually.until(
          "the due snapshot reaches the held store",
          Duration.ofSeconds(5),
          () -> HeldSnapshotStore.held() > 0);
      assertEquals(1, HeldSnapshotStore.held(), "the snapshot reached the store and is held");
      for (int i = 10; i < 30; i++) {
        reserve(ledger, "h" + i, 2); // answered while it is held
      }
      assertEquals(List.of(), snapshotRows(dataDir), "still held");
      HeldSnapshotStore.release();
      // Row 20 made a second snapshot due while the first was held: it waited in the writer (one
      // save at a time) and is written after it, the newest, the only one kept.
      awaitSnapshotRows(dataDir, List.of(20L));
      assertEquals(2, HeldSnapshotStore.held(), "rows 10 and 20, one after the other");
    } finally {
      HeldSnapshotStore.release();
    }
  }

  private static void reserve(H2Ledger ledger, String id) throws Exception {
    reserve(ledger, id, 30);
  }

  private static void reserve(H2Ledger ledger, String id, int seconds) throws Exception {
    ReserveReply reply =
        ledger
            .client
            .reserve(new ReserveRequest(id, Lane.FREE, null, 10_000, 0, 0))
            .toCompletableFuture()
            .get(seconds, TimeUnit.SECONDS);
    assertTrue(reply instanceof LedgerProtocol.Reserved, reply.toString());
  }

  /** The snapshot is written and the older one deleted after the row's answer: wait for both. */
  private static void awaitSnapshotRows(Path dataDir, List<Long> expected) throws Exception {
    List<Long> rows =
        Eventually.until(
            "the snapshot rows are " + expected,
            Duration.ofSeconds(10),
            () -> snapshotRows(dataDir),
            expected::equals);
    assertEquals(expected, rows);
  }

  /** The sequence numbers of the ledger's snapshots in the H2 file, oldest first. */
  private static List<Long> snapshotRows(Path dataDir) throws Exception {
    String url =
        "jdbc:h2:file:"
            + dataDir.toAbsolutePath()
            + "/ledger;DATABASE_TO_UPPER=false;AUTO_SERVER=TRUE";
    List<Long> rows = new ArrayList<>();
    try (Connection c = DriverManager.getConnection(url, "sa", "");
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT \"sequence_number\" FROM \"snapshot\" ORDER BY \"sequence_number\"")) {
      while (rs.next()) {
        rows.add(rs.getLong(1));
      }
    }
    return rows;
  }
}
