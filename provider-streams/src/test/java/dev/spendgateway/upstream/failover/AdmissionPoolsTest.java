package dev.spendgateway.upstream.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.AdmissionPools.Permit;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class AdmissionPoolsTest {
  private final AtomicLong clock = new AtomicLong();

  /** openai concurrency 2 / queue 2 in both pools; anthropic 1. */
  private AdmissionPools pools(int limit, int queue) {
    AdmissionPools.PoolLimits limits =
        new AdmissionPools.PoolLimits(queue, Map.of(Provider.OPENAI, limit, Provider.ANTHROPIC, 1));
    return new AdmissionPools(
        new AdmissionPools.Settings(
            Map.of(Pool.INTERACTIVE, limits, Pool.BATCH, limits),
            Duration.ofSeconds(2),
            Duration.ofSeconds(60)),
        clock::get);
  }

  private static Permit now(java.util.concurrent.CompletionStage<Permit> stage) {
    CompletableFuture<Permit> f = stage.toCompletableFuture();
    assertTrue(f.isDone(), "admitted at once");
    return f.join();
  }

  @Test
  void admitsAtOnceThenQueuesThenRefusesAtOnce() {
    AdmissionPools pools = pools(2, 2);
    Permit a = now(pools.admit(Pool.INTERACTIVE, Provider.OPENAI));
    now(pools.admit(Pool.INTERACTIVE, Provider.OPENAI));
    CompletableFuture<Permit> queued1 =
        pools.admit(Pool.INTERACTIVE, Provider.OPENAI).toCompletableFuture();
    clock.addAndGet(Duration.ofMillis(300).toNanos());
    CompletableFuture<Permit> queued2 =
        pools.admit(Pool.INTERACTIVE, Provider.OPENAI).toCompletableFuture();
    assertFalse(queued1.isDone());
    assertEquals(2, pools.depth(Pool.INTERACTIVE, Provider.OPENAI));
    assertEquals(Duration.ofMillis(300), pools.oldestWait(Pool.INTERACTIVE, Provider.OPENAI));

    CompletableFuture<Permit> refused =
        pools.admit(Pool.INTERACTIVE, Provider.OPENAI).toCompletableFuture();
    assertTrue(refused.isCompletedExceptionally(), "a full queue answers at once");
    PoolFull full =
        assertInstanceOf(
            PoolFull.class, assertThrows(CompletionException.class, refused::join).getCause());
    assertEquals(2, full.retryAfterSeconds(), "no drain observed yet: the initial estimate");
    assertEquals(Pool.INTERACTIVE, full.pool());

    clock.addAndGet(Duration.ofMillis(200).toNanos());
    a.close();
    assertTrue(queued1.isDone(), "the slot passes to the first waiter");
    assertEquals(Duration.ofMillis(500), queued1.join().waited());
    assertFalse(queued2.isDone());
    a.close(); // a second close is harmless
    assertFalse(queued2.isDone(), "closing twice does not release twice");
  }

  @Test
  void interactiveNeverWaitsBehindBatchAndProvidersAreSeparate() {
    AdmissionPools pools = pools(2, 1);
    now(pools.admit(Pool.BATCH, Provider.OPENAI));
    now(pools.admit(Pool.BATCH, Provider.OPENAI));
    pools.admit(Pool.BATCH, Provider.OPENAI);
    assertTrue(
        pools.admit(Pool.BATCH, Provider.OPENAI).toCompletableFuture().isCompletedExceptionally());
    now(pools.admit(Pool.INTERACTIVE, Provider.OPENAI));
    now(pools.admit(Pool.BATCH, Provider.ANTHROPIC));
  }

  @Test
  void aCancelledWaiterIsSkippedAndLosesItsPlace() {
    AdmissionPools pools = pools(1, 1);
    Permit held = now(pools.admit(Pool.INTERACTIVE, Provider.ANTHROPIC));
    CompletableFuture<Permit> gaveUp =
        pools.admit(Pool.INTERACTIVE, Provider.ANTHROPIC).toCompletableFuture();
    gaveUp.cancel(false);
    CompletableFuture<Permit> next =
        pools.admit(Pool.INTERACTIVE, Provider.ANTHROPIC).toCompletableFuture();
    assertFalse(next.isCompletedExceptionally(), "the cancelled waiter's place was freed");
    held.close();
    assertTrue(next.isDone());
    next.join().close();
    assertEquals(0, pools.stats().stream().mapToInt(AdmissionPools.LaneStats::inFlight).sum());
  }

  @Test
  void retryAfterFollowsTheObservedDrainRate() {
    AdmissionPools pools = pools(1, 20);
    Permit p = now(pools.admit(Pool.BATCH, Provider.OPENAI));
    List<CompletableFuture<Permit>> waiting = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      waiting.add(pools.admit(Pool.BATCH, Provider.OPENAI).toCompletableFuture());
    }
    // Drain 10 calls at 2 per second.
    for (int i = 0; i < 10; i++) {
      clock.addAndGet(Duration.ofMillis(500).toNanos());
      p.close();
      p = waiting.get(i).join();
    }
    for (int i = 0; i < 10; i++) {
      waiting.add(pools.admit(Pool.BATCH, Provider.OPENAI).toCompletableFuture());
    }
    CompletableFuture<Permit> refused =
        pools.admit(Pool.BATCH, Provider.OPENAI).toCompletableFuture();
    PoolFull full = (PoolFull) assertThrows(CompletionException.class, refused::join).getCause();
    // 20 waiting + this one at ~2 per second (9 intervals over 4.5 s) → about 11 s.
    assertEquals(11, full.retryAfterSeconds());
  }

  @Test
  void underConcurrencyTheLimitHoldsAndEveryPermitIsReleased() throws Exception {
    AdmissionPools pools =
        new AdmissionPools(
            new AdmissionPools.Settings(
                Map.of(
                    Pool.INTERACTIVE,
                        new AdmissionPools.PoolLimits(
                            1000, Map.of(Provider.OPENAI, 4, Provider.ANTHROPIC, 1)),
                    Pool.BATCH,
                        new AdmissionPools.PoolLimits(
                            1000, Map.of(Provider.OPENAI, 4, Provider.ANTHROPIC, 1))),
                Duration.ofSeconds(1),
                Duration.ofSeconds(60)),
            System::nanoTime);
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger maxInside = new AtomicInteger();
    AtomicInteger done = new AtomicInteger();
    ExecutorService callers = Executors.newFixedThreadPool(32);
    List<java.util.concurrent.Future<?>> results = new ArrayList<>();
    try {
      for (int t = 0; t < 32; t++) {
        results.add(
            callers.submit(
                () -> {
                  for (int i = 0; i < 62; i++) {
                    try (Permit permit =
                        pools
                            .admit(Pool.INTERACTIVE, Provider.OPENAI)
                            .toCompletableFuture()
                            .join()) {
                      maxInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                      Thread.onSpinWait();
                      inside.decrementAndGet();
                      done.incrementAndGet();
                      permit
                          .close(); // closing inside try-with-resources too: released exactly once
                    }
                  }
                }));
      }
      for (java.util.concurrent.Future<?> r : results) {
        r.get(20, TimeUnit.SECONDS);
      }
    } finally {
      callers.shutdownNow();
    }
    assertEquals(32 * 62, done.get());
    assertTrue(maxInside.get() <= 4, "never more than the limit in flight: " + maxInside.get());
    AdmissionPools.LaneStats lane =
        pools.stats().stream()
            .filter(s -> s.pool() == Pool.INTERACTIVE && s.provider() == Provider.OPENAI)
            .findFirst()
            .orElseThrow();
    assertEquals(0, lane.inFlight());
    assertEquals(0, lane.depth());
  }
}
