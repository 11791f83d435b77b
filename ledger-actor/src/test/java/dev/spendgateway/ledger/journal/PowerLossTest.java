package dev.spendgateway.ledger.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.H2Ledger;
import dev.spendgateway.ledger.LedgerProtocol.ReservationReply;
import dev.spendgateway.ledger.LedgerProtocol.ReservationView;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.access.Lane;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The ledger on a real H2 FILE journal, through {@link PowerCutFilePath}: reserving from many
 * concurrent callers, every acknowledgement comes after a disk flush that began after the request
 * was sent; there are never more flushes than journal writes; and when the power is cut mid-run
 * (only what was flushed survives), a ledger recovered from what is left on disk still holds every
 * reservation acknowledged before the cut.
 *
 * <p>Without the flush (the plugin's default DAO, or {@code ledger.journal.sync = off}) H2 never
 * forces the file while it runs, so the first check fails and the recovered ledger is empty.
 */
class PowerLossTest {
  static {
    PowerCutFilePath.register();
  }

  private static final int CALLERS = 32;
  private static final int ACKS_BEFORE_THE_CUT = 1500;
  private static final Map<String, Object> CAPS =
      Map.of(
          "ledger.caps.global-daily-usd", 100_000,
          "ledger.caps.global-monthly-usd", 1_000_000);

  @TempDir Path dataDir;
  @TempDir Path afterThePowerCut;

  /**
   * Both ways of waiting for the flush: the journal before confirming, or (pipeline) the ledger
   * before answering.
   */
  @ParameterizedTest(name = "ledger.journal.pipeline = {0}")
  @ValueSource(strings = {"off", "on"})
  void everyAcknowledgedReservationIsOnDiskBeforeItsAnswer(String pipeline) throws Exception {
    Map<String, Object> overrides = new HashMap<>(CAPS);
    overrides.put("ledger.journal.pipeline", pipeline);
    overrides.put(
        "pekko-persistence-jdbc.shared-databases.slick.db.url",
        "jdbc:h2:"
            + PowerCutFilePath.SCHEME
            + ":"
            + dataDir.toAbsolutePath().resolve("ledger")
            + ";DATABASE_TO_UPPER=false;WRITE_DELAY=100");
    Set<String> ackedBeforeTheCut;
    try (H2Ledger ledger = H2Ledger.start(dataDir, overrides)) {
      PowerCutFilePath.DiskImage disk = PowerCutFilePath.image(dataDir.resolve("ledger.mv.db"));
      JournalSyncStats stats = JournalSyncStats.get(ledger.system.classicSystem());
      Set<String> acked = ConcurrentHashMap.newKeySet();
      AtomicInteger answeredBeforeFlush = new AtomicInteger();
      AtomicInteger refusedOrFailed = new AtomicInteger();
      Semaphore inFlight = new Semaphore(CALLERS);
      AtomicLong ids = new AtomicLong();
      Thread callers =
          new Thread(
              () -> {
                try {
                  while (!Thread.currentThread().isInterrupted()) {
                    inFlight.acquire();
                    String id = "p-" + ids.getAndIncrement();
                    long flushesStartedBeforeSend = disk.forcesStarted();
                    ledger
                        .client
                        .reserve(
                            new ReserveRequest(
                                id,
                                Lane.APP,
                                "b1",
                                300_000,
                                1_000_000_000_000L,
                                1_000_000_000_000L))
                        .whenComplete(
                            (reply, failure) -> {
                              if (reply instanceof Reserved) {
                                // the write happened after the send, so only a flush begun after
                                // the send can cover it
                                if (disk.lastForceFinished() <= flushesStartedBeforeSend) {
                                  answeredBeforeFlush.incrementAndGet();
                                }
                                acked.add(id);
                              } else {
                                refusedOrFailed.incrementAndGet();
                              }
                              inFlight.release();
                            });
                  }
                } catch (InterruptedException e) {
                  // the test is done sending
                }
              });
      callers.start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (acked.size() < ACKS_BEFORE_THE_CUT && System.nanoTime() < deadline) {
        Thread.sleep(5);
      }
      // The power cut, mid-traffic: everything acknowledged so far must be in what the disk keeps.
      ackedBeforeTheCut = new HashSet<>(acked);
      disk.copyTo(afterThePowerCut.resolve("ledger.mv.db"));

      callers.interrupt();
      callers.join(10_000);
      assertTrue(
          inFlight.tryAcquire(CALLERS, 30, TimeUnit.SECONDS), "callers still waiting for answers");
      assertTrue(
          ackedBeforeTheCut.size() >= ACKS_BEFORE_THE_CUT,
          "only " + ackedBeforeTheCut.size() + " acknowledged");
      assertEquals(0, refusedOrFailed.get());
      assertEquals(
          0, answeredBeforeFlush.get(), "reservations answered before a flush covered their write");
      long writes = stats.writes();
      long flushes = disk.forcesStarted();
      assertTrue(stats.syncs() >= 1 && flushes >= 1, "no flush at all: " + stats);
      assertTrue(stats.syncs() <= writes, "more syncs than journal writes: " + stats);
      assertTrue(flushes <= writes, flushes + " file flushes for " + writes + " journal writes");
      assertTrue(
          writes < acked.size(),
          "group commit: " + writes + " writes for " + acked.size() + " reservations");
    }

    try (H2Ledger recovered = H2Ledger.start(afterThePowerCut, CAPS)) {
      int lost = 0;
      for (String id : ackedBeforeTheCut) {
        ReservationReply r =
            recovered.client.get(id).toCompletableFuture().get(10, TimeUnit.SECONDS);
        if (!(r instanceof ReservationView view) || view.status() != Status.RESERVED) {
          lost++;
        }
      }
      assertEquals(
          0,
          lost,
          "acknowledged reservations lost in the power cut, of " + ackedBeforeTheCut.size());
    }
  }
}
