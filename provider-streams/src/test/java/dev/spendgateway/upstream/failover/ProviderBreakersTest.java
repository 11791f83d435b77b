package dev.spendgateway.upstream.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.Eventually;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.pattern.CircuitBreakerOpenException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class ProviderBreakersTest {
  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = ActorTestKit.create();
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  private static <T> T await(java.util.concurrent.CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(5, TimeUnit.SECONDS);
  }

  @Test
  void consecutiveFailuresOpenOneProviderAndAHalfOpenProbeClosesIt() throws Exception {
    List<String> transitions = new CopyOnWriteArrayList<>();
    ProviderBreakers breakers =
        ProviderBreakers.create(
            testKit.system(),
            new ProviderBreakers.Settings(
                2, Duration.ofSeconds(2), Duration.ofMillis(200), Duration.ofSeconds(1)),
            (provider, state) -> transitions.add(provider.wireName() + " " + state));
    AtomicInteger upstreamCalls = new AtomicInteger();

    // A caller error is an answer from a healthy provider: it does not count.
    for (int i = 0; i < 3; i++) {
      await(
          breakers.withBreaker(
              Provider.OPENAI, () -> answer(upstreamCalls, 400), status -> status >= 500));
    }
    assertEquals(ProviderBreakers.State.CLOSED, breakers.state(Provider.OPENAI));

    for (int i = 0; i < 2; i++) {
      await(
          breakers.withBreaker(
              Provider.OPENAI, () -> answer(upstreamCalls, 503), status -> status >= 500));
    }
    assertEquals(ProviderBreakers.State.OPEN, breakers.state(Provider.OPENAI));
    assertFalse(breakers.isCallAllowed(Provider.OPENAI));
    assertTrue(breakers.isCallAllowed(Provider.ANTHROPIC), "per provider");

    int before = upstreamCalls.get();
    ExecutionException refused =
        assertThrows(
            ExecutionException.class,
            () ->
                await(
                    breakers.withBreaker(
                        Provider.OPENAI, () -> answer(upstreamCalls, 200), s -> false)));
    assertInstanceOf(CircuitBreakerOpenException.class, refused.getCause());
    assertEquals(before, upstreamCalls.get(), "an open breaker makes no upstream call");

    Eventually.until(
        "the open breaker turns half-open after its reset timeout",
        Duration.ofSeconds(3),
        () -> breakers.state(Provider.OPENAI),
        state -> state == ProviderBreakers.State.HALF_OPEN);
    assertEquals(ProviderBreakers.State.HALF_OPEN, breakers.state(Provider.OPENAI));
    assertEquals(
        200,
        await(
            breakers.withBreaker(
                Provider.OPENAI, () -> answer(upstreamCalls, 200), s -> s >= 500)));
    assertEquals(ProviderBreakers.State.CLOSED, breakers.state(Provider.OPENAI));
    assertEquals(List.of("openai OPEN", "openai HALF_OPEN", "openai CLOSED"), transitions);
  }

  @Test
  void manualOutcomesCountToo() {
    ProviderBreakers breakers =
        ProviderBreakers.create(
            testKit.system(),
            new ProviderBreakers.Settings(
                1, Duration.ofSeconds(2), Duration.ofSeconds(30), Duration.ofMinutes(1)),
            (p, s) -> {});
    breakers.onSuccess(Provider.ANTHROPIC);
    assertTrue(breakers.isCallAllowed(Provider.ANTHROPIC));
    breakers.onFailure(Provider.ANTHROPIC);
    assertFalse(breakers.isCallAllowed(Provider.ANTHROPIC));
  }

  private static CompletableFuture<Integer> answer(AtomicInteger calls, int status) {
    calls.incrementAndGet();
    return CompletableFuture.completedFuture(status);
  }
}
