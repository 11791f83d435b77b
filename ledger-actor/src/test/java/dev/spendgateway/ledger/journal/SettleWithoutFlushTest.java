package dev.spendgateway.ledger.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.Eventually;
import dev.spendgateway.ledger.H2Ledger;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol.CloseReply;
import dev.spendgateway.ledger.LedgerProtocol.Closed;
import dev.spendgateway.ledger.LedgerProtocol.ReservationView;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.access.Lane;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway's own settle with the journal's pipeline off (as shipped): it is decided and
 * committed at once and answered at its commit, and the next caller's reservation does not queue
 * behind a flush of the settle's own. The reservation, decided on the room the settle freed, is
 * answered only after a flush that began after its commit (which covers the settle too). A settle
 * lost in a power cut before any flush covered it leaves its reservation held at the worst case.
 */
class SettleWithoutFlushTest {
  static {
    PowerCutFilePath.register();
  }

  private static final long RESERVED = 300_000;
  private static final long ACTUAL = 100_000;

  @TempDir Path dataDir;
  @TempDir Path afterThePowerCut;

  /**
   * Two reservations at their worst case do not fit the daily cap; one settled at its actual cost
   * and one at its worst case do. No linger (the settle goes alone) and no timed flush of closes.
   */
  private static Map<String, Object> config() {
    Map<String, Object> config = new HashMap<>();
    config.put("ledger.journal.pipeline", "off");
    config.put("ledger.journal.close-linger", "0s");
    config.put("ledger.journal.close-flush-delay", "1h");
    config.put("ledger.caps.global-daily-usd", "0.5");
    config.put("ledger.caps.global-monthly-usd", 1_000);
    return config;
  }

  /** Flushes that pass at once until {@link #hold} is set, then wait for the test. */
  private final ConcurrentLinkedQueue<CompletableFuture<Void>> heldFlushes =
      new ConcurrentLinkedQueue<>();

  private volatile boolean hold;

  private CompletionStage<?> flush() {
    if (!hold) {
      return CompletableFuture.completedFuture(null);
    }
    CompletableFuture<Void> flushed = new CompletableFuture<>();
    heldFlushes.add(flushed);
    return flushed;
  }

  @Test
  void theNextReservationIsAnsweredAfterTheNextFlushNotAfterTheSettlesOwnAndThen()
      throws Exception {
    try (H2Ledger ledger = H2Ledger.start(dataDir, config())) {
      JournalWriter writer = JournalWriter.of(ledger.system.classicSystem());
      writer.flushWith(this::flush, false); // this test decides when each flush ends
      assertInstanceOf(Reserved.class, get(reserve(ledger.client, "first")));

      hold = true;
      CompletableFuture<CloseReply> settle =
          ledger.client.settle("first", ACTUAL).toCompletableFuture();
      // The settle is committed (and, being the gateway's own, answered at its commit) or its own
      // flush has started; either way it is in the journal before the next reservation.
      Eventually.until(
          "the settle is committed",
          Duration.ofSeconds(10),
          () -> settle.isDone() || !heldFlushes.isEmpty());
      CompletableFuture<ReserveReply> next = reserve(ledger.client, "next");

      int flushesEnded = 0;
      while (true) {
        Eventually.until(
            "the reservation is answered or a flush is started",
            Duration.ofSeconds(10),
            () -> next.isDone() || !heldFlushes.isEmpty());
        if (next.isDone()) {
          break;
        }
        heldFlushes.poll().complete(null);
        flushesEnded++;
      }
      // It fits only because the settle freed room: the settle was applied before it was on disk.
      assertInstanceOf(Reserved.class, next.get());
      assertEquals(
          1,
          flushesEnded,
          "flushes the reservation waited for (one: its own, which covers the settle too)");
      assertInstanceOf(Closed.class, settle.get(10, TimeUnit.SECONDS));
      assertTrue(heldFlushes.isEmpty(), "a flush nobody waits for: " + heldFlushes.size());
      hold = false;
    }
  }

  @Test
  void aSettleLostInAPowerCutBeforeItsFlushLeavesTheWorstCaseHeld() throws Exception {
    Map<String, Object> overrides = config();
    overrides.put(
        "pekko-persistence-jdbc.shared-databases.slick.db.url",
        "jdbc:h2:"
            + PowerCutFilePath.SCHEME
            + ":"
            + dataDir.toAbsolutePath().resolve("ledger")
            + ";DATABASE_TO_UPPER=false;WRITE_DELAY=100");
    try (H2Ledger ledger = H2Ledger.start(dataDir, overrides)) {
      PowerCutFilePath.DiskImage disk = PowerCutFilePath.image(dataDir.resolve("ledger.mv.db"));
      JournalSyncStats stats = JournalWriter.of(ledger.system.classicSystem()).stats();
      assertInstanceOf(Reserved.class, get(reserve(ledger.client, "held")));
      long forcesBeforeTheSettle = disk.forcesStarted();

      // Answered at its commit: nothing forced the file since.
      assertInstanceOf(Closed.class, get(ledger.client.settle("held", ACTUAL)));
      assertEquals(forcesBeforeTheSettle, disk.forcesStarted(), "the settle started a flush");
      assertTrue(stats.writes() > stats.syncedWrites(), "the settle is not flushed yet");

      disk.copyTo(afterThePowerCut.resolve("ledger.mv.db")); // the power cut
      // The running ledger does have it: a query waits for a flush covering it.
      ReservationView live = (ReservationView) get(ledger.client.get("held"));
      assertEquals(Status.SETTLED, live.status());
    }

    try (H2Ledger recovered = H2Ledger.start(afterThePowerCut, config())) {
      ReservationView view = (ReservationView) get(recovered.client.get("held"));
      assertEquals(Status.RESERVED, view.status(), "the reservation is still open");
      assertEquals(RESERVED, view.amountMicros(), "held at its worst case");
      assertFalse(view.actualMicros().isPresent());
      // The worst case still counts against the cap: a second one does not fit beside it.
      assertFalse(
          get(reserve(recovered.client, "beside")) instanceof Reserved,
          "a reservation that fits only if the lost settle had freed room");
    }
  }

  @Test
  void aCleanStopKeepsASettleNoFlushCoveredYet() throws Exception {
    try (H2Ledger ledger = H2Ledger.start(dataDir, config())) {
      JournalSyncStats stats = JournalWriter.of(ledger.system.classicSystem()).stats();
      assertInstanceOf(Reserved.class, get(reserve(ledger.client, "kept")));
      assertInstanceOf(Closed.class, get(ledger.client.settle("kept", ACTUAL)));
      assertTrue(stats.writes() > stats.syncedWrites(), "the settle is not flushed yet");
    } // the actor system stops; H2 closes its file cleanly, which forces it

    try (H2Ledger restarted = H2Ledger.start(dataDir, config())) {
      ReservationView view = (ReservationView) get(restarted.client.get("kept"));
      assertEquals(Status.SETTLED, view.status());
      assertEquals(ACTUAL, view.actualMicros().orElseThrow());
    }
  }

  private static CompletableFuture<ReserveReply> reserve(LedgerClient client, String id) {
    return client
        .reserve(
            new ReserveRequest(
                id, Lane.APP, "b1", RESERVED, 1_000_000_000_000L, 1_000_000_000_000L))
        .toCompletableFuture();
  }

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }
}
