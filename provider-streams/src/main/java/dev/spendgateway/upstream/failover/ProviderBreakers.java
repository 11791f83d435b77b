package dev.spendgateway.upstream.failover;

import dev.spendgateway.policy.catalog.Provider;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.pattern.CircuitBreaker;
import org.apache.pekko.pattern.CircuitBreakerOpenException;
import scala.concurrent.duration.FiniteDuration;

/**
 * One Pekko {@link CircuitBreaker} per provider: {@code max-failures} consecutive failures open it;
 * while open every call fails at once with {@link CircuitBreakerOpenException} (the router treats
 * that like a connection error: fail over, no upstream traffic); after {@code reset-timeout} one
 * half-open probe is let through — success closes it, failure re-opens it with the timeout doubled
 * up to {@code max-reset-timeout}.
 *
 * <p>What counts as a failure is the caller's call: pass a predicate on the answer (the gateway's
 * is {@code ErrorClassifier.countsAgainstProvider}: no answer or a 5xx is a failure; a 429 or a
 * caller error 400 is NOT — the provider is healthy). The call timeout applies to the supplied
 * stage: complete it at the response headers, never at the end of the body — a long answer is not a
 * failure — and keep it at least the provider's response-start-timeout ({@link
 * Settings#coveringResponseStart}).
 *
 * <p>On a cluster node an outage opens the breaker for the cluster: when this node's breaker opens
 * (or closes again) it tells {@link Sharing}, which replicates it, and an opening made on another
 * node arrives through {@link #openedElsewhere}: this node then refuses calls to that provider as
 * if its own breaker were open, until that opening's reset timeout has passed or the other node's
 * breaker closed ({@link #closedElsewhere}). The state-change callback is told only of this node's
 * own breaker, so the alarm is raised once, by the node that saw the failures.
 */
public final class ProviderBreakers {

  /** {@code failover.breaker} settings. */
  public record Settings(
      int maxFailures, Duration callTimeout, Duration resetTimeout, Duration maxResetTimeout) {
    public Settings {
      if (maxFailures < 1) {
        throw new IllegalArgumentException("breaker.max-failures must be >= 1");
      }
    }

    /**
     * These settings with a call-timeout that lets a response start as late as {@code
     * responseStart} (plus {@link FailoverSettings#BREAKER_MARGIN}); unchanged when it already
     * does.
     */
    public Settings coveringResponseStart(Duration responseStart) {
      Duration floor = responseStart.plus(FailoverSettings.BREAKER_MARGIN);
      return callTimeout.compareTo(responseStart) >= 0
          ? this
          : new Settings(maxFailures, floor, resetTimeout, maxResetTimeout);
    }
  }

  /** Breaker state for metrics ({@code gateway_circuit_state{provider}}). */
  public enum State {
    CLOSED,
    OPEN,
    HALF_OPEN
  }

  /** Where this node's breaker openings and closings go, so that the other nodes apply them. */
  public interface Sharing {
    /**
     * This node's breaker for {@code provider} opened; it half-opens after {@code resetTimeout}.
     */
    void opened(Provider provider, Duration resetTimeout);

    /** This node's breaker for {@code provider} closed (its probe succeeded). */
    void closed(Provider provider);

    /** One process: nothing to share. */
    Sharing NONE =
        new Sharing() {
          @Override
          public void opened(Provider provider, Duration resetTimeout) {}

          @Override
          public void closed(Provider provider) {}
        };
  }

  private final Map<Provider, CircuitBreaker> breakers = new EnumMap<>(Provider.class);

  /** provider → nano time until which another node's open breaker holds here. */
  private final Map<Provider, Long> openElsewhereUntil = new ConcurrentHashMap<>();

  private final LongSupplier nanoTime;

  /**
   * @param scheduler the classic scheduler ({@code system.classicSystem().scheduler()})
   * @param onStateChange told on every transition (for logs and metrics); may be a no-op
   */
  public ProviderBreakers(
      org.apache.pekko.actor.Scheduler scheduler,
      Settings settings,
      BiConsumer<Provider, State> onStateChange) {
    this(scheduler, settings, onStateChange, Sharing.NONE, System::nanoTime);
  }

  /**
   * As above, on a cluster node: this node's openings and closings are handed to {@code sharing}.
   */
  public ProviderBreakers(
      org.apache.pekko.actor.Scheduler scheduler,
      Settings settings,
      BiConsumer<Provider, State> onStateChange,
      Sharing sharing,
      LongSupplier nanoTime) {
    this.nanoTime = nanoTime;
    for (Provider provider : Provider.values()) {
      CircuitBreaker breaker =
          CircuitBreaker.create(
                  scheduler,
                  settings.maxFailures(),
                  settings.callTimeout(),
                  settings.resetTimeout())
              .withExponentialBackoff(settings.maxResetTimeout());
      breaker.addOnOpenListener(
          () -> {
            onStateChange.accept(provider, State.OPEN);
            sharing.opened(provider, settings.resetTimeout());
          });
      breaker.addOnHalfOpenListener(() -> onStateChange.accept(provider, State.HALF_OPEN));
      breaker.addOnCloseListener(
          () -> {
            onStateChange.accept(provider, State.CLOSED);
            sharing.closed(provider);
          });
      breakers.put(provider, breaker);
    }
  }

  /** Convenience for a typed actor system. */
  public static ProviderBreakers create(
      ActorSystem<?> system, Settings settings, BiConsumer<Provider, State> onStateChange) {
    return create(system, settings, onStateChange, Sharing.NONE);
  }

  /** Convenience for a typed actor system, sharing this node's openings (cluster mode). */
  public static ProviderBreakers create(
      ActorSystem<?> system,
      Settings settings,
      BiConsumer<Provider, State> onStateChange,
      Sharing sharing) {
    return new ProviderBreakers(
        system.classicSystem().scheduler(), settings, onStateChange, sharing, System::nanoTime);
  }

  /**
   * Another node's breaker for {@code provider} opened: calls to it are refused here too for {@code
   * remaining} (what is left of that opening's reset timeout), unless a later opening already holds
   * longer.
   */
  public void openedElsewhere(Provider provider, Duration remaining) {
    if (remaining.isNegative() || remaining.isZero()) {
      return;
    }
    long until = nanoTime.getAsLong() + remaining.toNanos();
    openElsewhereUntil.merge(provider, until, Math::max);
  }

  /** The other node's breaker closed again: its opening no longer holds here. */
  public void closedElsewhere(Provider provider) {
    openElsewhereUntil.remove(provider);
  }

  /** What is left of another node's opening for {@code provider}; zero when none holds. */
  private Duration openElsewhere(Provider provider) {
    Long until = openElsewhereUntil.get(provider);
    if (until == null) {
      return Duration.ZERO;
    }
    long left = until - nanoTime.getAsLong();
    if (left <= 0) {
      openElsewhereUntil.remove(provider, until);
      return Duration.ZERO;
    }
    return Duration.ofNanos(left);
  }

  /**
   * Runs {@code call} through the provider's breaker. The returned stage fails with {@link
   * CircuitBreakerOpenException} without calling when the breaker is open (or half-open with its
   * probe already in flight).
   *
   * @param isFailure which successful answers still count as a provider failure
   */
  public <T> CompletionStage<T> withBreaker(
      Provider provider, Supplier<CompletionStage<T>> call, Predicate<T> isFailure) {
    Duration elsewhere = openElsewhere(provider);
    if (!elsewhere.isZero()) {
      return CompletableFuture.failedFuture(
          new CircuitBreakerOpenException(
              FiniteDuration.apply(elsewhere.toNanos(), TimeUnit.NANOSECONDS),
              "Circuit Breaker is open on another node; calls are failing fast"));
    }
    Callable<CompletionStage<T>> body = call::get;
    return breakers
        .get(provider)
        .callWithCircuitBreakerCS(
            body,
            (result, error) -> error.isPresent() || result.map(isFailure::test).orElse(false));
  }

  /** {@link #withBreaker(Provider, Supplier, Predicate)} where only a failed stage is a failure. */
  public <T> CompletionStage<T> withBreaker(Provider provider, Supplier<CompletionStage<T>> call) {
    return withBreaker(provider, call, result -> false);
  }

  /**
   * False while the breaker is open: a cheap pre-check (e.g. to go straight to the fallback). A
   * half-open breaker answers true; only {@link #withBreaker} enforces its single probe.
   */
  public boolean isCallAllowed(Provider provider) {
    return !breakers.get(provider).isOpen() && openElsewhere(provider).isZero();
  }

  /** Records a success observed outside {@link #withBreaker} (e.g. a stream that completed). */
  public void onSuccess(Provider provider) {
    breakers.get(provider).succeed();
  }

  /** Records a failure observed outside {@link #withBreaker} (e.g. a stream cut mid-way). */
  public void onFailure(Provider provider) {
    breakers.get(provider).fail();
  }

  public State state(Provider provider) {
    CircuitBreaker b = breakers.get(provider);
    if (b.isOpen() || !openElsewhere(provider).isZero()) {
      return State.OPEN;
    }
    return b.isHalfOpen() ? State.HALF_OPEN : State.CLOSED;
  }
}
