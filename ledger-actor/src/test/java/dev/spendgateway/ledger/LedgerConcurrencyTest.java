package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.LedgerProtocol.CapUsage;
import dev.spendgateway.ledger.LedgerProtocol.Closed;
import dev.spendgateway.ledger.LedgerProtocol.Refused;
import dev.spendgateway.ledger.LedgerProtocol.ReservationView;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapName;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Many threads against one cap through the real actor on an H2 FILE journal: exactly as many fit as
 * the cap allows, the books show no overshoot, and a restart on the same file agrees.
 */
class LedgerConcurrencyTest {
  private static final long THIRTY_CENTS = 300_000;
  private static final long FORTY_DOLLARS = 40_000_000;
  private static final int THREADS = 48;
  private static final int ATTEMPTS = 400;

  @TempDir Path dataDir;

  private static ReserveRequest request(String id) {
    // app lane with generous brand caps: the global $40/day cap is the one that binds
    return new ReserveRequest(
        id, Lane.APP, "brand-" + (id.hashCode() & 7), THIRTY_CENTS, 1_000_000_000, 1_000_000_000);
  }

  /** Runs {@code ATTEMPTS} reservations from {@code THREADS} threads started together. */
  private static List<ReserveReply> reserveConcurrently(
      LedgerClient client, boolean settleEach, long actualMicros) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<ReserveReply>> futures = new ArrayList<>();
    for (int i = 0; i < ATTEMPTS; i++) {
      String id = "r-" + i;
      Callable<ReserveReply> call =
          () -> {
            start.await();
            ReserveReply reply =
                client.reserve(request(id)).toCompletableFuture().get(20, TimeUnit.SECONDS);
            if (settleEach && reply instanceof Reserved) {
              assertInstanceOf(
                  Closed.class,
                  client.settle(id, actualMicros).toCompletableFuture().get(20, TimeUnit.SECONDS));
            }
            return reply;
          };
      futures.add(pool.submit(call));
    }
    start.countDown();
    List<ReserveReply> replies = new ArrayList<>();
    for (Future<ReserveReply> f : futures) {
      replies.add(f.get(60, TimeUnit.SECONDS));
    }
    pool.shutdown();
    return replies;
  }

  private static CapUsage globalDaily(LedgerClient client) throws Exception {
    Usage usage = client.usage(Optional.empty()).toCompletableFuture().get(10, TimeUnit.SECONDS);
    return usage.caps().stream()
        .filter(c -> c.cap() == CapName.GLOBAL_DAILY)
        .findFirst()
        .orElseThrow();
  }

  @Test
  void exactly133OfThirtyCentsFitInFortyDollarsAndSurviveARestart() throws Exception {
    List<ReserveReply> replies;
    try (H2Ledger ledger = H2Ledger.start(dataDir, Map.of())) {
      replies = reserveConcurrently(ledger.client, false, 0);
      long accepted = replies.stream().filter(r -> r instanceof Reserved).count();
      assertEquals(133, accepted);
      assertTrue(
          replies.stream()
              .filter(r -> r instanceof Refused)
              .allMatch(
                  r ->
                      ((Refused) r).cap() == CapName.GLOBAL_DAILY
                          && ((Refused) r).headroomMicros() == 100_000));
      CapUsage global = globalDaily(ledger.client);
      assertEquals(133 * THIRTY_CENTS, global.reservedMicros());
      assertTrue(global.remainingMicros() >= 0);
    }
    // Restart on the same file: the same books, every answer the same.
    try (H2Ledger ledger = H2Ledger.start(dataDir, Map.of())) {
      assertEquals(133 * THIRTY_CENTS, globalDaily(ledger.client).reservedMicros());
      for (int i = 0; i < ATTEMPTS; i++) {
        ReserveReply again =
            ledger
                .client
                .reserve(request("r-" + i))
                .toCompletableFuture()
                .get(10, TimeUnit.SECONDS);
        assertEquals(replies.get(i), again, "answer for r-" + i);
      }
      assertEquals(133 * THIRTY_CENTS, globalDaily(ledger.client).reservedMicros());
    }
  }

  @Test
  void settlesInterleavedAtTheFullAmountStillAdmitExactly133() throws Exception {
    try (H2Ledger ledger = H2Ledger.start(dataDir, Map.of())) {
      List<ReserveReply> replies = reserveConcurrently(ledger.client, true, THIRTY_CENTS);
      assertEquals(133, replies.stream().filter(r -> r instanceof Reserved).count());
      CapUsage global = globalDaily(ledger.client);
      assertEquals(133 * THIRTY_CENTS, global.spentMicros());
      assertEquals(0, global.reservedMicros());
    }
  }

  @Test
  void settlesInterleavedBelowTheReserveNeverOvershoot() throws Exception {
    try (H2Ledger ledger = H2Ledger.start(dataDir, Map.of())) {
      List<ReserveReply> replies = reserveConcurrently(ledger.client, true, 100_000);
      long accepted = replies.stream().filter(r -> r instanceof Reserved).count();
      CapUsage global = globalDaily(ledger.client);
      assertEquals(accepted * 100_000, global.spentMicros());
      assertEquals(0, global.reservedMicros());
      assertTrue(global.spentMicros() <= FORTY_DOLLARS, "no overshoot");
      // every refusal happened when less than $0.30 was left at that moment
      assertTrue(accepted >= 133, "settling below the reserve frees room: " + accepted);
      ReservationView view =
          (ReservationView)
              ledger.client.get("r-0").toCompletableFuture().get(10, TimeUnit.SECONDS);
      assertTrue(view.status() == Status.SETTLED || view.status() == Status.REFUSED);
    }
  }
}
