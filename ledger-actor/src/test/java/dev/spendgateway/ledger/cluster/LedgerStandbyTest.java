package dev.spendgateway.ledger.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.Eventually;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.H2Ledger;
import dev.spendgateway.ledger.Ledger;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerEvents;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerProtocol;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.ledger.LedgerState;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.access.Lane;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.persistence.query.NoOffset;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The warm standby of a node that does not hold the ledger: it follows the journal written by
 * another node's ledger, its state is exactly a full replay's, and a ledger starting on its node
 * recovers from it (replaying only the rows after it) and decides as the old one would have. Two
 * actor systems on one H2 journal stand for the two nodes.
 */
class LedgerStandbyTest {
  @TempDir Path dataDir;

  /** A snapshot every 4 rows, so the standby starts from one; the journal polled every 50 ms. */
  private static final Map<String, Object> NODE =
      Map.of(
          "ledger.snapshot-every",
          4,
          "jdbc-snapshot-store.class",
          StandbySnapshotStore.class.getName(),
          "jdbc-read-journal.refresh-interval",
          "50ms");

  @Test
  void followsAnotherNodesLedgerAndHandsTheNextLedgerHereAnExactState() throws Exception {
    ActorSystem<Void> other = null;
    try (H2Ledger first = H2Ledger.start(dataDir, NODE)) {
      for (int i = 1; i <= 6; i++) {
        reserve(first.client, "r-" + i, 10_000);
      }
      other = ActorSystem.create(Behaviors.empty(), "ledger-h2-b", H2Ledger.config(dataDir, NODE));
      LedgerStandby standby = LedgerStandby.get(Adapter.toClassic(other));
      standby.start(Duration.ofSeconds(1));
      await(standby::following, "the standby catches up");

      // Rows written while it follows: new reservations, closes, a repeat.
      for (int i = 7; i <= 12; i++) {
        reserve(first.client, "r-" + i, 20_000);
      }
      settle(first.client, "r-2", 5_000);
      settle(first.client, "r-8", 25_000);
      assertInstanceOf(
          LedgerProtocol.Closed.class,
          first.client.voidReservation("r-3").toCompletableFuture().get(30, TimeUnit.SECONDS));
      reserve(first.client, "r-1", 10_000);
      long last = lastRow(first.system);
      LedgerStandby following = standby;
      await(() -> following.position() == last, "the standby folds the latest row " + last);
      LedgerProtocol.Usage before = usage(first.client);

      // Its state is a full replay's, row for row (the standby started from a snapshot).
      LedgerState replayed = replayAll(first.system);
      first.close();

      // The ledger starts on the standby's node: its recovery takes the standby's state.
      standby.ledgerStartsHere();
      LedgerClient client = startLedger(other);
      assertEquals(Optional.of(last), standby.handedOver(), "recovered from the standby");
      assertEquals(before, usage(client), "the same books as the ledger it took over from");
      assertEquals(12, replayed.knownReservations());

      // It decides as the old ledger would have: repeats answered the same, closes still close.
      assertInstanceOf(
          LedgerProtocol.Reserved.class,
          client
              .reserve(new ReserveRequest("r-7", Lane.FREE, null, 20_000, 0, 0))
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS));
      assertInstanceOf(
          LedgerProtocol.Closed.class,
          client.settle("r-2", 5_000).toCompletableFuture().get(30, TimeUnit.SECONDS),
          "a repeated settle gets the first result");
      settle(client, "r-9", 1_000);
      // And it writes the next row after the journal's last (a stale view would be fenced).
      reserve(client, "r-13", 10_000);
      assertEquals(last + 2, lastRow(other));
    } finally {
      terminate(other);
    }
  }

  @Test
  void rowsWrittenSinceTheStandbysLastPollAreReplayedByTheRecovery() throws Exception {
    // The standby's node polls the journal once, then not for 10 minutes: every row written after
    // that first poll is the recovery's to replay.
    Map<String, Object> slowPoll = new java.util.HashMap<>(NODE);
    slowPoll.put("jdbc-read-journal.refresh-interval", "10m");
    ActorSystem<Void> other = null;
    try (H2Ledger first = H2Ledger.start(dataDir, NODE)) {
      for (int i = 1; i <= 5; i++) {
        reserve(first.client, "p-" + i, 10_000);
      }
      other =
          ActorSystem.create(Behaviors.empty(), "ledger-h2-c", H2Ledger.config(dataDir, slowPoll));
      LedgerStandby standby = LedgerStandby.get(Adapter.toClassic(other));
      standby.start(Duration.ofSeconds(1));
      await(standby::following, "the standby catches up");
      long polled = standby.position();
      for (int i = 6; i <= 10; i++) {
        reserve(first.client, "p-" + i, 30_000);
      }
      settle(first.client, "p-1", 2_000);
      long last = lastRow(first.system);
      assertTrue(last > polled, "rows the standby has not seen: " + polled + " < " + last);
      LedgerProtocol.Usage before = usage(first.client);
      first.close();

      standby.ledgerStartsHere();
      LedgerClient client = startLedger(other);
      assertEquals(Optional.of(polled), standby.handedOver());
      assertEquals(before, usage(client), "the standby's state plus the rows after it");
      assertInstanceOf(
          LedgerProtocol.Closed.class, get(client.settle("p-1", 2_000)), "a repeat of a close");
      settle(client, "p-9", 30_000);
      assertEquals(last + 1, lastRow(other));
    } finally {
      terminate(other);
    }
  }

  @Test
  void itsStateIsAFullReplaysAndIsHandedOnlyToTheLedgerStartingHereOnce() throws Exception {
    try (H2Ledger ledger = H2Ledger.start(dataDir, NODE)) {
      for (int i = 1; i <= 9; i++) {
        reserve(ledger.client, "s-" + i, 10_000 * i);
      }
      settle(ledger.client, "s-4", 7_000);
      LedgerStandby standby = LedgerStandby.get(Adapter.toClassic(ledger.system));
      standby.start(Duration.ofSeconds(1));
      long last = lastRow(ledger.system);
      await(() -> standby.following() && standby.position() == last, "caught up to " + last);

      // Any other reader of the snapshot store (the rehearsal, the operator tools) gets nothing.
      assertEquals(Optional.empty(), get(standby.takeForRecovery()));
      assertTrue(standby.following(), "and the standby goes on");

      standby.ledgerStartsHere();
      Optional<LedgerStandby.Caught> caught = get(standby.takeForRecovery());
      assertTrue(caught.isPresent());
      assertEquals(last, caught.get().sequenceNr());
      assertEquals(replayAll(ledger.system), caught.get().state());
      assertEquals(false, standby.following(), "it stops following once handed over");
      assertEquals(Optional.empty(), get(standby.takeForRecovery()), "only once");

      // No standby starts on a node whose ledger runs here.
      standby.start(Duration.ofSeconds(1));
      assertEquals(false, standby.following());
    }
  }

  @Test
  void aStandbyThatHasNotCaughtUpGivesNothingAndStops() throws Exception {
    try (H2Ledger ledger = H2Ledger.start(dataDir, NODE)) {
      for (int i = 1; i <= 5; i++) {
        reserve(ledger.client, "t-" + i, 10_000);
      }
      LedgerStandby standby = LedgerStandby.get(Adapter.toClassic(ledger.system));
      standby.start(Duration.ofMillis(100));
      // Taken at once, while it still loads the snapshot: the recovery reads the journal instead.
      standby.ledgerStartsHere();
      assertEquals(Optional.empty(), get(standby.takeForRecovery()));
      // Time is the point: no restart must come; 500 ms covers the snapshot load, a fold, a
      // restart.
      Thread.sleep(500);
      assertEquals(false, standby.following());
      assertEquals(0, standby.position());
      assertEquals(Optional.empty(), standby.handedOver());
    }
  }

  /** Rows the standby must never fold over: only the next sequence number is taken. */
  @Test
  void onlyTheNextRowIsFolded() {
    LedgerStandby.Caught at5 = new LedgerStandby.Caught(LedgerState.empty(), 5);
    Instant at = Instant.parse("2026-12-02T00:00:00Z");
    Event fact = new LedgerEvents.ReservationVoided("x", Lane.FREE, null, at, 0, at);
    record Row(String what, long sequenceNr) {}
    for (Row row :
        List.of(
            new Row("a gap", 7),
            new Row("a repeat", 5),
            new Row("an older row", 2),
            new Row("the first row again", 1))) {
      IllegalStateException refused =
          assertThrows(
              IllegalStateException.class,
              () -> at5.next(envelope(row.sequenceNr(), fact)),
              row.what());
      assertTrue(refused.getMessage().contains("starts over"), refused.getMessage());
    }
  }

  private static EventEnvelope envelope(long sequenceNr, Object event) {
    return EventEnvelope.apply(
        NoOffset.getInstance(), GlobalBudget.PERSISTENCE_ID.id(), sequenceNr, event, 0L);
  }

  /** The ledger started on {@code system} (as the singleton would start it), recovered. */
  private static LedgerClient startLedger(ActorSystem<?> system) throws Exception {
    LedgerSettings settings = LedgerSettings.fromConfig(system.settings().config());
    LedgerClient client =
        LedgerClient.of(
            system, Ledger.spawn(system, settings, Clock.systemUTC()), settings, Clock.systemUTC());
    get(client.awaitReady());
    return client;
  }

  private static void terminate(ActorSystem<?> system) throws Exception {
    if (system != null) {
      system.terminate();
      get(system.getWhenTerminated());
    }
  }

  /** Every row of the journal from the first, folded by the ledger's event handler. */
  private static LedgerState replayAll(ActorSystem<?> system) throws Exception {
    JdbcReadJournal journal =
        PersistenceQuery.get(Adapter.toClassic(system))
            .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
    List<EventEnvelope> rows =
        journal
            .currentEventsByPersistenceId(GlobalBudget.PERSISTENCE_ID.id(), 0, Long.MAX_VALUE)
            .runWith(Sink.seq(), system)
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    LedgerState state = LedgerState.empty();
    for (EventEnvelope row : new ArrayList<>(rows)) {
      state = state.applied((Event) row.event());
    }
    return state;
  }

  private static long lastRow(ActorSystem<?> system) throws Exception {
    return PersistenceQuery.get(Adapter.toClassic(system))
        .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier())
        .currentLastSequenceNumberByPersistenceId(GlobalBudget.PERSISTENCE_ID.id())
        .toCompletableFuture()
        .get(30, TimeUnit.SECONDS)
        .orElse(0L);
  }

  private static void reserve(LedgerClient client, String id, long micros) throws Exception {
    assertInstanceOf(
        LedgerProtocol.Reserved.class,
        get(client.reserve(new ReserveRequest(id, Lane.FREE, null, micros, 0, 0))));
  }

  private static void settle(LedgerClient client, String id, long micros) throws Exception {
    assertInstanceOf(LedgerProtocol.Closed.class, get(client.settle(id, micros)));
  }

  private static LedgerProtocol.Usage usage(LedgerClient client) throws Exception {
    return get(client.usage(Optional.empty()));
  }

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static void await(BooleanSupplier condition, String what) {
    Eventually.until(what, Duration.ofSeconds(30), condition::getAsBoolean);
  }
}
