package dev.spendgateway.operator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.LedgerEvents.AllowanceIn;
import dev.spendgateway.ledger.LedgerEvents.AllowanceOut;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerProtocol.Refused;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.Reservation;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.ledger.audit.Journaled;
import dev.spendgateway.ledger.audit.JsonlEvents;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapName;
import dev.spendgateway.policy.caps.CapWindows;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A region's journal holding allowance transfers (docs/MULTI-REGION.md) is imported, verified on
 * its own and against another region's export (never more in than out per transfer id), and
 * recovered by the ledger, which then decides against the moved allowance. The test config's global
 * daily cap ($40) plays this region's share.
 */
class AllowanceVerifyTest {
  @TempDir Path work;

  private static final Instant NOW = Instant.now().truncatedTo(ChronoUnit.SECONDS);
  private static final String DAY = CapWindows.dayKey(NOW);

  private static AllowanceOut out(String id, String from, String to, long micros) {
    return new AllowanceOut(
        id, from, to, CapName.GLOBAL_DAILY, null, DAY, micros, "PULL: asked", null, NOW);
  }

  private static ReservationMade made(String id, long micros) {
    return new ReservationMade(
        id, Lane.APP, "b1", micros, 100_000_000, 1_000_000_000, NOW, NOW.plusSeconds(3_600));
  }

  private Path export(String name, Event... events) throws Exception {
    JsonlEvents jsonl = new JsonlEvents();
    List<String> lines = new ArrayList<>();
    long seq = 0;
    for (Event e : events) {
      lines.add(jsonl.line(new Journaled(++seq, e, true)));
    }
    return Files.write(work.resolve(name), lines);
  }

  @Test
  void aJournalWithTransfersVerifiesAloneAndAcrossRegionsAndTheLedgerSpendsTheMovedAllowance()
      throws Exception {
    // eu: $30 held, $15 lent by us, $20 more held (fits only with it), $5 lent on to ap.
    Path eu =
        export(
            "eu.jsonl",
            made("r-1", 30_000_000),
            AllowanceIn.of(out("t-1", "us", "eu", 15_000_000), NOW),
            made("r-2", 20_000_000),
            out("t-2", "eu", "ap", 5_000_000));
    Path us = export("us.jsonl", out("t-1", "us", "eu", 15_000_000));
    Path usShort = export("us-short.jsonl", out("t-1", "us", "eu", 10_000_000));

    Path journal = work.resolve("eu");
    Cli.Run imported = Cli.onJournal(journal, "import", "--input", eu.toString());
    assertEquals(0, imported.exit(), imported.out() + imported.err());

    Cli.Run alone = Cli.onJournal(journal, "verify");
    assertEquals(0, alone.exit(), alone.out() + alone.err());
    assertTrue(alone.out().contains("OK: 4 events verified"), alone.out());

    Cli.Run across = Cli.onJournal(journal, "verify", "--peer-export", us.toString());
    assertEquals(0, across.exit(), across.out() + across.err());
    assertTrue(
        across
            .out()
            .contains(
                "OK across 2 journals: every allowance transfer taken in was taken"
                    + " out (1 in flight)"),
        across.out());

    Cli.Run broken = Cli.onJournal(journal, "verify", "--peer-export", usShort.toString());
    assertEquals(GatewayAdmin.VIOLATION, broken.exit(), broken.out() + broken.err());
    assertTrue(
        broken
            .out()
            .contains(
                "VIOLATION across regions: allowance transfer t-1 taken in for more"
                    + " than was taken out"),
        broken.out());

    // The ledger recovers the journal with its own fold: $40 + $15 - $5 = $50, all held.
    try (TestLedger ledger = TestLedger.start(journal, Map.of())) {
      Refused full =
          assertInstanceOf(
              Refused.class,
              ledger
                  .client
                  .reserve(new ReserveRequest("r-3", Lane.APP, "b1", 1, 100_000_000, 1_000_000_000))
                  .toCompletableFuture()
                  .get(30, TimeUnit.SECONDS));
      assertEquals(CapName.GLOBAL_DAILY, full.cap());
      assertEquals(0, full.headroomMicros());
      // Voiding $20 (r-2 is the ledger API's) frees $20: it fits again only under a $50 allowance.
      ledger
          .client
          .actingAs(Reservation.Owner.LEDGER_API)
          .voidReservation("r-2")
          .toCompletableFuture()
          .get(30, TimeUnit.SECONDS);
      assertInstanceOf(
          Reserved.class,
          ledger
              .client
              .reserve(
                  new ReserveRequest("r-4", Lane.APP, "b1", 20_000_000, 100_000_000, 1_000_000_000))
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS));
    }
  }
}
