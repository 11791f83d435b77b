package dev.spendgateway.ledger.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.H2Ledger;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol.Closed;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.access.Lane;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * With the pipeline on or off, the gateway's own settles are answered at commit and ride with the
 * next flush: one caller reserving and settling in turn costs one flush per reservation, not two,
 * and the last settle is still flushed (by the next query that reads it, or by the close-flush
 * timer). A settle through the ledger API still waits for its own flush.
 */
class CloseFlushTest {
  private static final int PAIRS = 40;

  @TempDir Path dataDir;

  private static Map<String, Object> config(String pipeline, String closeFlushDelay) {
    return config(pipeline, closeFlushDelay, "0s");
  }

  private static Map<String, Object> config(
      String pipeline, String closeFlushDelay, String closeLinger) {
    return Map.of(
        "ledger.journal.pipeline",
        pipeline,
        "ledger.journal.close-flush-delay",
        closeFlushDelay,
        "ledger.journal.close-linger",
        closeLinger,
        "ledger.caps.global-daily-usd",
        100_000,
        "ledger.caps.global-monthly-usd",
        1_000_000);
  }

  @ParameterizedTest(name = "ledger.journal.pipeline = {0}")
  @ValueSource(strings = {"on", "off"})
  void aGatewaySettleDoesNotCostTheNextReservationAFlush(String pipeline) throws Exception {
    try (H2Ledger ledger = H2Ledger.start(dataDir, config(pipeline, "1h"))) {
      JournalSyncStats stats = JournalWriter.of(ledger.system.classicSystem()).stats();
      long syncsBefore = stats.syncs();
      pairs(ledger.client, "g-");
      long syncs = stats.syncs() - syncsBefore;
      // One flush per reservation; every settle rode with the next reservation's flush.
      assertTrue(syncs <= PAIRS + 2, syncs + " flushes for " + PAIRS + " reserve+settle pairs");
    }
  }

  @ParameterizedTest(name = "ledger.journal.pipeline = {0}")
  @ValueSource(strings = {"on", "off"})
  void aLingeringSettleIsWrittenTogetherWithTheNextReservation(String pipeline) throws Exception {
    try (H2Ledger ledger = H2Ledger.start(dataDir, config(pipeline, "1h", "2s"))) {
      JournalSyncStats stats = JournalWriter.of(ledger.system.classicSystem()).stats();
      long writesBefore = stats.writes();
      // The gateway does not wait for a settle's answer before its caller's next call.
      List<CompletableFuture<?>> settles = pairsNotWaitingForSettles(ledger.client, "l-");
      long writes = stats.writes() - writesBefore;
      // Each settle waited for the next reservation and went into the same journal write (the
      // last one is still lingering: nothing came after it).
      assertTrue(writes <= PAIRS + 1, writes + " journal writes for " + PAIRS + " pairs");
      for (CompletableFuture<?> settle : settles) {
        assertInstanceOf(Closed.class, settle.get(10, TimeUnit.SECONDS));
      }
    }
  }

  @ParameterizedTest(name = "ledger.journal.pipeline = {0}")
  @ValueSource(strings = {"on", "off"})
  void withoutTheLingerEverySettleIsAWriteOfItsOwn(String pipeline) throws Exception {
    try (H2Ledger ledger = H2Ledger.start(dataDir, config(pipeline, "1h", "0s"))) {
      JournalSyncStats stats = JournalWriter.of(ledger.system.classicSystem()).stats();
      long writesBefore = stats.writes();
      pairs(ledger.client, "n-");
      assertEquals(2L * PAIRS, stats.writes() - writesBefore);
    }
  }

  @ParameterizedTest(name = "ledger.journal.pipeline = {0}")
  @ValueSource(strings = {"on", "off"})
  void aLedgerApiSettleWaitsForItsOwnFlush(String pipeline) throws Exception {
    try (H2Ledger ledger = H2Ledger.start(dataDir, config(pipeline, "1h"))) {
      JournalSyncStats stats = JournalWriter.of(ledger.system.classicSystem()).stats();
      long syncsBefore = stats.syncs();
      pairs(ledger.client.actingAs(Owner.LEDGER_API), "a-");
      long syncs = stats.syncs() - syncsBefore;
      assertTrue(syncs >= 2L * PAIRS, syncs + " flushes for " + PAIRS + " reserve+settle pairs");
      assertEquals(stats.writes(), stats.syncedWrites());
    }
  }

  @ParameterizedTest(name = "ledger.journal.pipeline = {0}")
  @ValueSource(strings = {"on", "off"})
  void aQueryReadingAnUnflushedSettleWaitsForAFlushCoveringIt(String pipeline) throws Exception {
    try (H2Ledger ledger = H2Ledger.start(dataDir, config(pipeline, "1h"))) {
      JournalSyncStats stats = JournalWriter.of(ledger.system.classicSystem()).stats();
      pairs(ledger.client, "q-");
      assertTrue(stats.writes() > stats.syncedWrites(), "the last settle is not flushed yet");
      ledger.client.usage(Optional.empty()).toCompletableFuture().get(10, TimeUnit.SECONDS);
      // The answer came after a flush that covered every write, the last settle included.
      assertEquals(stats.writes(), stats.syncedWrites());
    }
  }

  @ParameterizedTest(name = "ledger.journal.pipeline = {0}")
  @ValueSource(strings = {"on", "off"})
  void aSettleNobodyReadsIsFlushedWithinTheCloseFlushDelay(String pipeline) throws Exception {
    try (H2Ledger ledger = H2Ledger.start(dataDir, config(pipeline, "50ms"))) {
      JournalSyncStats stats = JournalWriter.of(ledger.system.classicSystem()).stats();
      pairs(ledger.client, "t-");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (stats.writes() != stats.syncedWrites() && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      assertEquals(stats.writes(), stats.syncedWrites());
    }
  }

  private static List<CompletableFuture<?>> pairsNotWaitingForSettles(
      LedgerClient client, String prefix) throws Exception {
    List<CompletableFuture<?>> settles = new ArrayList<>();
    for (int i = 0; i < PAIRS; i++) {
      String id = prefix + i;
      reserve(client, id);
      settles.add(client.settle(id, 100_000).toCompletableFuture());
    }
    return settles;
  }

  private static void pairs(LedgerClient client, String prefix) throws Exception {
    for (int i = 0; i < PAIRS; i++) {
      String id = prefix + i;
      reserve(client, id);
      assertInstanceOf(
          Closed.class, client.settle(id, 100_000).toCompletableFuture().get(10, TimeUnit.SECONDS));
    }
  }

  private static void reserve(LedgerClient client, String id) throws Exception {
    assertInstanceOf(
        Reserved.class,
        client
            .reserve(
                new ReserveRequest(
                    id, Lane.APP, "b1", 300_000, 1_000_000_000_000L, 1_000_000_000_000L))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS));
  }
}
