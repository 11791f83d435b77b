package dev.spendgateway.ledger.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.Eventually;
import dev.spendgateway.ledger.H2Ledger;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol.Closed;
import dev.spendgateway.ledger.LedgerProtocol.ReservationReply;
import dev.spendgateway.ledger.LedgerProtocol.ReservationView;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.access.Lane;
import java.nio.file.Path;
import java.time.Duration;
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
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The ledger on a real H2 FILE journal, through {@link PowerCutFilePath}: many concurrent callers
 * reserve and then settle, half through the ledger API and half as the gateway's provider routes.
 * Every reservation and every ledger-API settle is acknowledged only after a disk flush that began
 * after the request was sent; there are never more flushes than journal writes; and when the power
 * is cut mid-run (only what was flushed survives), a ledger recovered from what is left on disk
 * still holds every reservation and every ledger-API settle acknowledged before the cut. The
 * gateway's own settles are answered at commit: one lost in the cut leaves its reservation held at
 * its worst case (the conservative side), never missing.
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
  private static final long RESERVED = 300_000;
  private static final long ACTUAL = 100_000;
  private static final Map<String, Object> CAPS =
      Map.of(
          "ledger.caps.global-daily-usd", 100_000,
          "ledger.caps.global-monthly-usd", 1_000_000);

  @TempDir Path dataDir;
  @TempDir Path afterThePowerCut;

  /** What the callers were told before the cut. */
  private final Set<String> ackedReserves = ConcurrentHashMap.newKeySet();

  private final Set<String> ackedApiSettles = ConcurrentHashMap.newKeySet();
  private final AtomicInteger answeredBeforeFlush = new AtomicInteger();
  private final AtomicInteger refusedOrFailed = new AtomicInteger();

  /**
   * Both ways of waiting for the flush (the journal before confirming; with the pipeline the ledger
   * before answering), and both flushes (H2's store and force; CHECKPOINT SYNC).
   */
  @ParameterizedTest(name = "ledger.journal.pipeline = {0}, flush = {1}, close-linger = {2}")
  @CsvSource({
    "off, store-and-force, 1ms", // as shipped: the gateway's settles linger for the next reserve
    "off, store-and-force, 0s", // the gateway's settles often written alone, without a flush
    "on, store-and-force, 0s",
    "on, checkpoint-sync, 0s"
  })
  void everyAcknowledgedReservationIsOnDiskBeforeItsAnswer(
      String pipeline, String flushMethod, String closeLinger) throws Exception {
    Map<String, Object> overrides = new HashMap<>(CAPS);
    overrides.put("ledger.journal.pipeline", pipeline);
    overrides.put("ledger.journal.flush", flushMethod);
    overrides.put("ledger.journal.close-linger", closeLinger);
    overrides.put(
        "pekko-persistence-jdbc.shared-databases.slick.db.url",
        "jdbc:h2:"
            + PowerCutFilePath.SCHEME
            + ":"
            + dataDir.toAbsolutePath().resolve("ledger")
            + ";DATABASE_TO_UPPER=false;WRITE_DELAY=100");
    Set<String> reservesBeforeTheCut;
    Set<String> apiSettlesBeforeTheCut;
    try (H2Ledger ledger = H2Ledger.start(dataDir, overrides)) {
      PowerCutFilePath.DiskImage disk = PowerCutFilePath.image(dataDir.resolve("ledger.mv.db"));
      JournalSyncStats stats = JournalWriter.of(ledger.system.classicSystem()).stats();
      LedgerClient gateway = ledger.client;
      LedgerClient api = ledger.client.actingAs(Owner.LEDGER_API);
      Semaphore inFlight = new Semaphore(CALLERS);
      AtomicLong ids = new AtomicLong();
      Thread callers =
          new Thread(
              () -> {
                try {
                  while (!Thread.currentThread().isInterrupted()) {
                    inFlight.acquire();
                    long n = ids.getAndIncrement();
                    reserveThenSettle(n % 2 == 0 ? api : gateway, "p-" + n, disk, inFlight);
                  }
                } catch (InterruptedException e) {
                  // the test is done sending
                }
              });
      callers.start();
      Eventually.until(
          ACKS_BEFORE_THE_CUT + " reservations are acknowledged before the cut",
          Duration.ofSeconds(60),
          () -> ackedReserves.size() >= ACKS_BEFORE_THE_CUT);
      // The power cut, mid-traffic: everything acknowledged so far must be in what the disk keeps.
      // (Taken before the copy: what is acknowledged after the copy started may miss it.)
      reservesBeforeTheCut = new HashSet<>(ackedReserves);
      apiSettlesBeforeTheCut = new HashSet<>(ackedApiSettles);
      disk.copyTo(afterThePowerCut.resolve("ledger.mv.db"));

      callers.interrupt();
      callers.join(10_000);
      assertTrue(
          inFlight.tryAcquire(CALLERS, 30, TimeUnit.SECONDS), "callers still waiting for answers");
      assertTrue(
          reservesBeforeTheCut.size() >= ACKS_BEFORE_THE_CUT,
          "only " + reservesBeforeTheCut.size() + " acknowledged");
      assertTrue(apiSettlesBeforeTheCut.size() > 0, "no ledger-API settle acknowledged");
      assertEquals(0, refusedOrFailed.get());
      assertEquals(
          0,
          answeredBeforeFlush.get(),
          "reservations or ledger-API settles answered before a flush covered their write");
      long writes = stats.writes();
      long flushes = disk.forcesStarted();
      assertTrue(stats.syncs() >= 1 && flushes >= 1, "no flush at all: " + stats);
      assertTrue(stats.syncs() <= writes, "more syncs than journal writes: " + stats);
      assertTrue(flushes <= writes, flushes + " file flushes for " + writes + " journal writes");
      assertTrue(
          writes < ackedReserves.size(),
          "group commit: " + writes + " writes for " + ackedReserves.size() + " reservations");
    }

    try (H2Ledger recovered = H2Ledger.start(afterThePowerCut, CAPS)) {
      int lost = 0;
      int apiSettlesLost = 0;
      for (String id : reservesBeforeTheCut) {
        ReservationReply r =
            recovered.client.get(id).toCompletableFuture().get(10, TimeUnit.SECONDS);
        if (!(r instanceof ReservationView view)
            || (view.status() != Status.RESERVED && view.status() != Status.SETTLED)) {
          lost++;
        } else if (apiSettlesBeforeTheCut.contains(id) && view.status() != Status.SETTLED) {
          apiSettlesLost++;
        }
      }
      assertEquals(
          0,
          lost,
          "acknowledged reservations lost in the power cut, of " + reservesBeforeTheCut.size());
      assertEquals(
          0,
          apiSettlesLost,
          "acknowledged ledger-API settles lost in the power cut, of "
              + apiSettlesBeforeTheCut.size());
    }
  }

  /**
   * Reserves {@code id}, then settles it through the same client; records what was acknowledged and
   * whether an answer that must wait for a flush came before one covering its write.
   */
  private void reserveThenSettle(
      LedgerClient client, String id, PowerCutFilePath.DiskImage disk, Semaphore inFlight) {
    long flushesStartedBeforeReserve = disk.forcesStarted();
    client
        .reserve(
            new ReserveRequest(
                id, Lane.APP, "b1", RESERVED, 1_000_000_000_000L, 1_000_000_000_000L))
        .thenCompose(
            reply -> {
              if (!(reply instanceof Reserved)) {
                throw new IllegalStateException("not reserved: " + reply);
              }
              // the write happened after the send, so only a flush begun after the send covers it
              if (disk.lastForceFinished() <= flushesStartedBeforeReserve) {
                answeredBeforeFlush.incrementAndGet();
              }
              ackedReserves.add(id);
              long flushesStartedBeforeSettle = disk.forcesStarted();
              return client
                  .settle(id, ACTUAL)
                  .thenApply(
                      settled -> {
                        if (!(settled instanceof Closed c) || c.status() != Status.SETTLED) {
                          throw new IllegalStateException("not settled: " + settled);
                        }
                        if (client.owner() == Owner.LEDGER_API) {
                          if (disk.lastForceFinished() <= flushesStartedBeforeSettle) {
                            answeredBeforeFlush.incrementAndGet();
                          }
                          ackedApiSettles.add(id);
                        }
                        return settled;
                      });
            })
        .whenComplete(
            (settled, failure) -> {
              if (failure != null) {
                refusedOrFailed.incrementAndGet();
              }
              inFlight.release();
            });
  }
}
