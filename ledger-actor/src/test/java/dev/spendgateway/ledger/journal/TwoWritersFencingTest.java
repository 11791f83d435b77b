package dev.spendgateway.ledger.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
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
