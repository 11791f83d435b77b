package dev.spendgateway.operator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.AdjustmentScope;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerEvents.GroupCommit;
import dev.spendgateway.ledger.LedgerEvents.ReservationSettled;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.ledger.audit.JournalReader;
import dev.spendgateway.ledger.audit.Journaled;
import dev.spendgateway.ledger.audit.JsonlEvents;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapWindows;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A group commit is one journal row holding many facts: {@code export} writes one line per fact
 * (never the row's envelope), the facts of a row share its sequence number, and {@code verify}
 * compares the books with a snapshot taken at such a row only after the row's last fact.
 */
class GroupCommitExportTest {
  private static final long WAIT_SECONDS = 30;
  @TempDir Path dataDir;

  @Test
  void exportAndVerifyListEveryFactOfAGroupCommitRow() throws Exception {
    long facts;
    // A short snapshot interval: a snapshot is taken at a row holding many facts, and verify must
    // compare the books with it only after that row's last fact.
    try (TestLedger ledger = TestLedger.start(dataDir, Map.of("ledger.snapshot-every", 2))) {
      workload(ledger.client);
      facts =
          new JournalReader(ledger.system)
              .current(1)
              .runWith(Sink.seq(), ledger.system)
              .toCompletableFuture()
              .get(WAIT_SECONDS, TimeUnit.SECONDS)
              .size();

      Cli.Run export = Cli.onJournal(dataDir, "export", "--format", "jsonl");
      assertEquals(0, export.exit(), export.err());
      JsonlEvents jsonl = new JsonlEvents();
      List<Journaled> lines = export.out().lines().map(jsonl::parse).toList();
      assertEquals(facts, lines.size(), "one line per fact");
      assertFalse(
          lines.stream().anyMatch(j -> j.event() instanceof GroupCommit),
          "no envelope in an export");
      assertTrue(
          lines.stream().map(Journaled::sequenceNr).distinct().count() < lines.size(),
          "facts of one group commit share their row's sequence number");
      assertTrue(lines.stream().anyMatch(j -> j.event() instanceof ReservationSettled));

      Cli.Run verify = Cli.onJournal(dataDir, "verify");
      assertEquals(0, verify.exit(), verify.out() + verify.err());
      assertTrue(verify.out().startsWith("OK: " + facts + " events verified"), verify.out());
      assertTrue(verify.out().contains("totals equal the snapshot at"), verify.out());
    }
  }

  /** Parallel reserves, settles and voids, a refusal and an operator adjustment. */
  static void workload(LedgerClient client) throws Exception {
    List<CompletionStage<?>> calls = new ArrayList<>();
    for (int i = 0; i < 120; i++) {
      calls.add(
          client.reserve(
              new ReserveRequest(
                  "r-" + i, Lane.APP, "b" + (i % 3), 10_000, 1_000_000, 10_000_000)));
    }
    awaitAll(calls);
    calls.clear();
    for (int i = 0; i < 80; i++) {
      calls.add(i % 4 == 0 ? client.voidReservation("r-" + i) : client.settle("r-" + i, 7_000 + i));
    }
    calls.add(
        client.reserve(
            new ReserveRequest("big", Lane.APP, "b0", 2_000_000, 1_000_000, 10_000_000)));
    calls.add(client.reserve(new ReserveRequest("free-1", Lane.FREE, null, 40_000, 0, 0)));
    awaitAll(calls);
    client
        .adjust(
            "adj-1",
            "alice",
            "refund",
            Lane.APP,
            "b1",
            -30_000,
            CapWindows.dayKey(Instant.now()),
            AdjustmentScope.REFUND)
        .toCompletableFuture()
        .get(WAIT_SECONDS, TimeUnit.SECONDS);
  }

  private static void awaitAll(List<CompletionStage<?>> calls) throws Exception {
    for (CompletionStage<?> call : calls) {
      call.toCompletableFuture().get(WAIT_SECONDS, TimeUnit.SECONDS);
    }
  }
}
