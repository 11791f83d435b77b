package dev.spendgateway.edge.call;

import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.AdmissionPools;
import dev.spendgateway.upstream.failover.ModelCircuits;
import dev.spendgateway.upstream.failover.Pool;
import dev.spendgateway.upstream.failover.ProviderBreakers;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * What protects the providers and the node, shared by every provider call — the pass-through routes
 * and each router attempt alike — so a caller cannot get past a limit by picking a route: the
 * interactive/batch admission pools ({@code x-priority}), one breaker per provider, and the model
 * circuits a 410 Gone opens.
 *
 * @param breakerRetryAfter what a call refused by an open breaker is told to wait (the breaker's
 *     reset timeout: it half-opens then)
 * @param poolFull told of every call an admission pool refused (for {@code /metrics})
 */
public record ProviderGuards(
    AdmissionPools pools,
    ProviderBreakers breakers,
    ModelCircuits circuits,
    Duration breakerRetryAfter,
    PoolFullListener poolFull) {

  /** Counts admission refusals. */
  @FunctionalInterface
  public interface PoolFullListener {
    void poolFull(Pool pool, Provider provider);
  }

  /** The breakers as an exchange's guard (timing only to the response headers). */
  public UpstreamExchange.Guard breaker() {
    return new UpstreamExchange.Guard() {
      @Override
      public boolean allows(Provider provider) {
        return breakers.isCallAllowed(provider);
      }

      @Override
      public <T> CompletionStage<T> around(Provider provider, Supplier<CompletionStage<T>> call, Predicate<T> isFailure) {
        return breakers.withBreaker(provider, call, isFailure);
      }

      @Override
      public void streamCut(Provider provider) {
        breakers.onFailure(provider);
      }
    };
  }
}
