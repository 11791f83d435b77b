package dev.spendgateway.edge.router;

import dev.spendgateway.edge.call.CallServices;
import dev.spendgateway.upstream.failover.AdmissionPools;
import dev.spendgateway.upstream.failover.ConversationStickiness;
import dev.spendgateway.upstream.failover.FailoverSettings;
import dev.spendgateway.upstream.failover.ModelCircuits;
import dev.spendgateway.upstream.failover.ProviderBreakers;
import dev.spendgateway.upstream.failover.ProviderRateLimits;
import dev.spendgateway.upstream.failover.RoutingProfiles;
import dev.spendgateway.upstream.failover.SchemaModeMemory;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * Everything a routed call needs, built once by {@link FailoverRouter} and shared by all calls.
 *
 * @param services the pass-through call's services (policy, cost, ledger, upstream, meter, clock)
 * @param profiles the routing profiles
 * @param settings the {@code failover} block
 * @param pools admission: one bounded queue and concurrency limit per (pool, provider)
 * @param rateLimits the node's requests and tokens per minute per provider
 * @param breakers one circuit breaker per provider
 * @param circuits per-model 410 circuits
 * @param stickiness conversation → provider it switched to
 * @param schemas schemas OpenAI strict mode rejected
 * @param listener metrics and alarms
 * @param nanoTime monotonic time for budgets ({@code System::nanoTime})
 * @param random jitter source (per thread)
 * @param delayer completes after a delay, without blocking a thread (the actor system's scheduler)
 */
record RouterContext(
    CallServices services,
    RoutingProfiles profiles,
    FailoverSettings settings,
    AdmissionPools pools,
    ProviderRateLimits rateLimits,
    ProviderBreakers breakers,
    ModelCircuits circuits,
    ConversationStickiness stickiness,
    SchemaModeMemory schemas,
    RouterListener listener,
    LongSupplier nanoTime,
    Supplier<RandomGenerator> random,
    Delayer delayer) {

  /** Waits without holding a thread. */
  @FunctionalInterface
  interface Delayer {
    CompletionStage<Void> after(Duration delay);
  }
}
