package dev.spendgateway.edge.call;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.call.ProviderGuards.Clearance;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.AdmissionPools;
import dev.spendgateway.upstream.failover.AdmissionPools.Permit;
import dev.spendgateway.upstream.failover.Pool;
import dev.spendgateway.upstream.failover.ProviderRateLimits;
import dev.spendgateway.upstream.failover.ProviderRateLimits.Limits;
import dev.spendgateway.upstream.failover.ProviderRateLimits.Turn;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What the guards decide for a call that may have to wait for its turn under the node's pace and
 * for a slot in its pool, when its caller hangs up at each moment: a caller who is gone takes
 * nothing (the pace's share comes back, its place in the queue is skipped, a slot it was handed
 * goes on to the next in line) and its call is never cleared to reserve or send.
 */
class ProviderGuardsClearanceTest {
  private static final Provider P = Provider.OPENAI;
  private static final long TOKENS = 100;

  /** When the caller hangs up, relative to the call's two waits. */
  enum HangUp {
    NEVER,
    BEFORE_THE_GUARDS,
    DURING_THE_TURN_WAIT,
    WHILE_QUEUED,
    AS_THE_SLOT_ARRIVES,
    NO_SIGNAL
  }

  /** One row's world: a pace of 60 requests a minute, one slot, a queue of two. */
  private static final class World {
    final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    final List<CompletableFuture<Void>> timers = new ArrayList<>();
    final List<String> counted = new ArrayList<>();
    final ProviderRateLimits limits =
        new ProviderRateLimits(
            Map.of(P, new Limits(60, 0), Provider.ANTHROPIC, new Limits(0, 0)),
            Duration.ofSeconds(5),
            nanos::get);
    final AdmissionPools pools =
        new AdmissionPools(
            new AdmissionPools.Settings(
                Map.of(
                    Pool.INTERACTIVE,
                    new AdmissionPools.PoolLimits(2, Map.of(P, 1, Provider.ANTHROPIC, 1)),
                    Pool.BATCH,
                    new AdmissionPools.PoolLimits(2, Map.of(P, 1, Provider.ANTHROPIC, 1))),
                Duration.ofSeconds(2),
                Duration.ofSeconds(60)),
            nanos::get);
    // Breakers and model circuits play no part in a clearance.
    final ProviderGuards guards =
        new ProviderGuards(
            pools,
            limits,
            null,
            null,
            Duration.ofSeconds(15),
            wait -> {
              CompletableFuture<Void> timer = new CompletableFuture<>();
              timers.add(timer);
              return timer;
            },
            new ProviderGuards.Listener() {
              @Override
              public void poolFull(Pool pool, Provider provider, String profile) {}

              @Override
              public void rateLimited(Provider provider, String profile) {}

              @Override
              public void callerGone(Provider provider, String wait, String profile) {
                counted.add(provider.wireName() + "/" + wait);
              }
            },
            GuardAlarms.NONE);

    /** Empties the pace's bucket so that the next call waits a second for its turn. */
    void spendTheMinute() {
      for (int i = 0; i < 60; i++) {
        assertEquals(new Turn.Go(Duration.ZERO), limits.take(P, TOKENS));
      }
    }

    Permit takeTheOnlySlot() {
      return pools.admit(Pool.INTERACTIVE, P).toCompletableFuture().join();
    }
  }

  /**
   * A hang-up whose notice races the slot: the connection has ended, but the callers waiting on it
   * have not run yet when the slot is handed over (on another thread, in the gateway).
   */
  private static final class NoticeNotYetDelivered extends CompletableFuture<Void> {
    @Override
    public CompletableFuture<Void> thenRun(Runnable action) {
      return new CompletableFuture<>();
    }
  }

  static Stream<Arguments> rows() {
    return Stream.of(
        Arguments.of(HangUp.NEVER, null, "cleared"),
        Arguments.of(HangUp.NO_SIGNAL, null, "cleared"),
        Arguments.of(HangUp.BEFORE_THE_GUARDS, "before", "before its call was sent"),
        Arguments.of(
            HangUp.DURING_THE_TURN_WAIT,
            "pace",
            "while waiting 1000 ms for its turn under the node's openai rate limits"),
        Arguments.of(
            HangUp.WHILE_QUEUED,
            "queue",
            "while queued in the interactive pool for a slot towards openai"),
        Arguments.of(
            HangUp.AS_THE_SLOT_ARRIVES,
            "queue",
            "while queued in the interactive pool for a slot towards openai"));
  }

  @ParameterizedTest(name = "caller hangs up {0} → {2}")
  @MethodSource("rows")
  void aCallerWhoHangsUpWhileItsCallWaitsTakesNothingAndIsNeverCleared(
      HangUp hangUp, String wait, String expected) {
    World w = new World();
    w.spendTheMinute(); // every row's call waits a second for its turn
    Permit holder = w.takeTheOnlySlot(); // and queues behind the slot's holder
    CompletableFuture<Void> gone =
        hangUp == HangUp.AS_THE_SLOT_ARRIVES
            ? new NoticeNotYetDelivered()
            : new CompletableFuture<>();
    if (hangUp == HangUp.BEFORE_THE_GUARDS) {
      gone.complete(null);
    }

    CompletableFuture<Clearance> cleared =
        w.guards
            .clear(
                P,
                TOKENS,
                Pool.INTERACTIVE,
                "",
                hangUp == HangUp.NO_SIGNAL ? Optional.empty() : Optional.of(gone))
            .toCompletableFuture();

    if (hangUp == HangUp.DURING_THE_TURN_WAIT) {
      assertFalse(cleared.isDone(), "waiting for its turn");
      gone.complete(null);
    }
    if (hangUp != HangUp.BEFORE_THE_GUARDS && hangUp != HangUp.DURING_THE_TURN_WAIT) {
      assertEquals(1, w.timers.size(), "it waited for its turn");
      w.nanos.addAndGet(Duration.ofSeconds(1).toNanos());
      w.timers.get(0).complete(null); // the turn came
      assertFalse(cleared.isDone(), "then it queued for the slot");
      assertEquals(1, w.pools.depth(Pool.INTERACTIVE, P));
      if (hangUp == HangUp.WHILE_QUEUED) {
        gone.complete(null);
        assertTrue(cleared.isDone(), "a queued caller who hangs up is answered at once");
      }
    }
    // A second call queues behind it: the slot must reach it whatever the first caller did.
    CompletableFuture<Permit> next = w.pools.admit(Pool.INTERACTIVE, P).toCompletableFuture();
    if (hangUp == HangUp.AS_THE_SLOT_ARRIVES) {
      gone.complete(null); // gone, but the queue has not heard yet when the slot comes
    }
    holder.close();

    Clearance clearance = cleared.join();
    if (expected.equals("cleared")) {
      Permit permit = assertInstanceOf(Clearance.Cleared.class, clearance).permit();
      assertFalse(next.isDone(), "the cleared call holds the slot");
      permit.close();
      assertTrue(next.isDone(), "and passes it on when it ends");
      assertEquals(
          new Turn.Go(Duration.ofSeconds(1)),
          w.limits.take(P, TOKENS),
          "its turn was used: the next newcomer waits behind it");
      assertEquals(List.of(), w.counted);
      return;
    }
    assertEquals(new Clearance.CallerGone(wait, expected), clearance);
    assertEquals(List.of("openai/" + wait), w.counted, "counted once, by the wait it left");
    assertTrue(next.isDone(), "the slot went on to the next in line, not to the caller who left");
    assertEquals(0, w.pools.depth(Pool.INTERACTIVE, P), "no dead place left in the queue");
    if (hangUp == HangUp.BEFORE_THE_GUARDS || hangUp == HangUp.DURING_THE_TURN_WAIT) {
      w.nanos.addAndGet(Duration.ofSeconds(1).toNanos());
    }
    // A second has passed since the minute was spent: one turn is there again, and the turn of the
    // caller who left (never sent) is not charged against it.
    assertEquals(
        new Turn.Go(Duration.ZERO),
        w.limits.take(P, TOKENS),
        "the turn of a caller who left was given back");
  }
}
