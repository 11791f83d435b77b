package dev.spendgateway.edge.call;

import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.AdmissionPools;
import dev.spendgateway.upstream.failover.ModelCircuits;
import dev.spendgateway.upstream.failover.Pool;
import dev.spendgateway.upstream.failover.ProviderBreakers;
import dev.spendgateway.upstream.failover.ProviderRateLimits;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * What protects the providers and the node, shared by every provider call — the pass-through routes
 * and each router attempt alike — so a caller cannot get past a limit by picking a route: the
 * interactive/batch admission pools ({@code x-priority}), the node's pace towards each provider
 * (requests and tokens per minute), one breaker per provider, and the model circuits a 410 Gone
 * opens.
 *
 * @param breakerRetryAfter what a call refused by an open breaker is told to wait (the breaker's
 *     reset timeout: it half-opens then)
 * @param delay completes after a wait without holding a thread (a rate limit's turn)
 * @param listener told of every refusal (for {@code /metrics})
 */
public record ProviderGuards(
    AdmissionPools pools,
    ProviderRateLimits rateLimits,
    ProviderBreakers breakers,
    ModelCircuits circuits,
    Duration breakerRetryAfter,
    Function<Duration, CompletionStage<Void>> delay,
    Listener listener) {

  /** Counts the guards' refusals. */
  public interface Listener {
    void poolFull(Pool pool, Provider provider);

    void rateLimited(Provider provider);
  }

  /**
   * Waits for {@code provider}'s turn under its rate limits, counting the call at {@code
   * worstCaseTokens}: completes with empty when the call may go, or with the refusal (nothing
   * taken) when its turn is further away than the limits' maximum wait.
   */
  public CompletionStage<Optional<ProviderRateLimits.Turn.Refused>> turn(
      Provider provider, long worstCaseTokens) {
    ProviderRateLimits.Turn turn = rateLimits.take(provider, worstCaseTokens);
    if (turn instanceof ProviderRateLimits.Turn.Refused refused) {
      listener.rateLimited(provider);
      return CompletableFuture.completedFuture(Optional.of(refused));
    }
    Duration wait = ((ProviderRateLimits.Turn.Go) turn).after();
    if (wait.isZero()) {
      return CompletableFuture.completedFuture(Optional.empty());
    }
    return delay.apply(wait).thenApply(v -> Optional.empty());
  }

  /** Whole seconds a refused call is told to wait (at least 1). */
  public static long retryAfterSeconds(Duration wait) {
    return Math.max(1, (wait.toMillis() + 999) / 1000);
  }

  /** The breakers as an exchange's guard (timing only to the response headers). */
  public UpstreamExchange.Guard breaker() {
    return new UpstreamExchange.Guard() {
      @Override
      public boolean allows(Provider provider) {
        return breakers.isCallAllowed(provider);
      }

      @Override
      public <T> CompletionStage<T> around(
          Provider provider, Supplier<CompletionStage<T>> call, Predicate<T> isFailure) {
        return breakers.withBreaker(provider, call, isFailure);
      }

      @Override
      public void streamCut(Provider provider) {
        breakers.onFailure(provider);
      }
    };
  }
}
