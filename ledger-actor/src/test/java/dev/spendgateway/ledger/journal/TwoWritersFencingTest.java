package dev.spendgateway.ledger.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.Eventually;
import dev.spendgateway.ledger.LedgerProtocol.Busy;
import dev.spendgateway.ledger.LedgerProtocol.Refused;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.PgLedger;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapName;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Two ledgers on one PostgreSQL journal, as when a stale cluster singleton still runs after its
 * successor started: both recover the same (empty) journal and both believe the free lane's cap,
 * which fits exactly one reservation, is untouched. The journal's key lets only the first write
 * through; the second ledger is stopped at once, its caller answered busy (503 with retry-after at
 * the edge) long before any ask timeout, nothing of it reaches the journal, and once it has
 * recovered it sees the other's reservation and refuses: the cap is never overshot.
 */
class TwoWritersFencingTest {
  private static final long CENT = 10_000;
  private static final Duration ANSWER = Duration.ofSeconds(20);

  @Test
  void theSecondWriterIsFencedAndItsCallerAnsweredBusy() throws Exception {
    Map<String, Object> oneCentFree =
        Map.of(
            "ledger.caps.free-daily-usd", "0.01",
            "ledger.ask-timeout", "20s",
            "ledger.journal.fenced-pause", "1s");
    try (PgDatabase db = PgDatabase.create();
        PgLedger first = PgLedger.start(db.url, oneCentFree, "writer-a");
        PgLedger stale = PgLedger.start(db.url, oneCentFree, "writer-b")) {
      assertInstanceOf(Reserved.class, reserve(first, "r-a"));

      long started = System.nanoTime();
      ReserveReply fenced = reserve(stale, "r-b");
      Duration took = Duration.ofNanos(System.nanoTime() - started);
      Busy busy =
          assertInstanceOf(
              Busy.class, fenced, "the stale writer must not answer from its stale state");
      assertTrue(busy.retryAfterSeconds() >= 1, "retry-after: " + busy.retryAfterSeconds());
      assertTrue(
          took.compareTo(Duration.ofSeconds(10)) < 0,
          "answered at once, not at the ask timeout: " + took);
      assertEquals(
          1, db.number("SELECT count(*) FROM event_journal"), "only the first writer's row");

      // Stopped: while fenced every write is answered busy at once, nothing is decided.
      assertInstanceOf(Busy.class, reserve(stale, "r-c"));

      // Recovered from the journal (the first writer's reservation included): the cap is full.
      Refused refused = awaitRecovered(stale, "r-b");
      assertEquals(CapName.FREE_DAILY, refused.cap());

      // Now the first writer is the one behind: its next write is fenced in turn, never
      // overshooting.
      ReserveReply behind = reserve(first, "r-d");
      assertInstanceOf(Busy.class, behind);
      assertEquals(
          1,
          db.number(
              "SELECT count(*) FROM event_journal WHERE position(convert_to('r-b', 'UTF8') in "
                  + "event_payload) > 0"),
          "the recovered writer's refusal is journaled (the check below can see ids)");
      assertEquals(
          0,
          db.number(
              "SELECT count(*) FROM event_journal WHERE position(convert_to('r-d', 'UTF8') in event_payload) > 0"),
          "nothing of the fenced write is in the journal");
    }
  }

  /**
   * A ledger frozen inside a group commit (its insert sent, its commit not: a SIGSTOP, a VM freeze,
   * a network cut at that instant) holds the lock on the next sequence number in its open
   * transaction. The journal connections' settings end such a session after 5 s, so the ledger that
   * took over writes that sequence number then, instead of blocking until the frozen writer wakes
   * up (or its session dies, hours later for a vanished host).
   */
  @Test
  void aWriterFrozenInsideItsCommitDoesNotBlockTheNextLedger() throws Exception {
    Map<String, Object> patient = Map.of("ledger.ask-timeout", "20s");
    try (PgDatabase db = PgDatabase.create();
        PgLedger successor = PgLedger.start(db.url, patient, "successor")) {
      assertInstanceOf(Reserved.class, reserve(successor, "r-a"));
      String initSql =
          PgLedger.config(db.url, patient)
              .getString(PostgresJournal.SLICK_KEY + ".db.connectionInitSql");
      try (Connection frozen = db.connect()) {
        try (Statement s = frozen.createStatement()) {
          s.execute(initSql);
        }
        frozen.setAutoCommit(false);
        try (Statement s = frozen.createStatement()) {
          // The frozen writer's row for the next sequence number: inserted, never committed.
          s.executeUpdate(
              "INSERT INTO event_journal (persistence_id, sequence_number, deleted, writer,"
                  + " write_timestamp, adapter_manifest, event_ser_id, event_ser_manifest,"
                  + " event_payload) SELECT persistence_id, sequence_number + 1, deleted, 'frozen',"
                  + " write_timestamp, adapter_manifest, event_ser_id, event_ser_manifest,"
                  + " event_payload FROM event_journal WHERE persistence_id = 'global' ORDER BY"
                  + " sequence_number DESC LIMIT 1");
        }
        long started = System.nanoTime();
        ReserveReply next = reserve(successor, "r-b");
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertInstanceOf(Reserved.class, next, "the next ledger writes once the lock is gone");
        assertTrue(
            took.compareTo(Duration.ofSeconds(12)) < 0, "within the idle timeout (5 s): " + took);
        assertThrows(SQLException.class, frozen::commit, "the frozen writer's session was ended");
      }
      assertEquals(
          0,
          db.number("SELECT count(*) FROM event_journal WHERE writer = 'frozen'"),
          "nothing of the frozen writer's transaction is in the journal");
    }
  }

  private static ReserveReply reserve(PgLedger ledger, String id) throws Exception {
    return ledger
        .client
        .reserve(new ReserveRequest(id, Lane.FREE, null, CENT, 0, 0))
        .toCompletableFuture()
        .get(ANSWER.toSeconds(), TimeUnit.SECONDS);
  }

  /**
   * Asks again while the fenced ledger is still paused (busy), as a caller honouring retry-after
   * would.
   */
  private static Refused awaitRecovered(PgLedger ledger, String id) {
    ReserveReply reply =
        Eventually.until(
            "the fenced ledger answers " + id + " instead of busy",
            ANSWER,
            () -> reserve(ledger, id),
            r -> !(r instanceof Busy));
    return assertInstanceOf(Refused.class, reply);
  }
}
