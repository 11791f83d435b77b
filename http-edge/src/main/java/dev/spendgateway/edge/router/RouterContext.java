package dev.spendgateway.edge.router;

import dev.spendgateway.edge.call.CallServices;
import dev.spendgateway.upstream.failover.ConversationStickiness;
import dev.spendgateway.upstream.failover.FailoverSettings;
import dev.spendgateway.upstream.failover.RoutingProfiles;
import dev.spendgateway.upstream.failover.SchemaModeMemory;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * What the router keeps besides the guards every provider call shares, built once by {@link
 * FailoverRouter} and shared by all routed calls.
 *
 * @param services the pass-through call's services (policy, cost, ledger, upstream, meter, clock)
 * @param profiles the routing profiles
 * @param settings the {@code failover} block
 * @param stickiness conversation → provider it switched to
 * @param schemas schemas OpenAI strict mode rejected
 * @param listener metrics and alarms
 * @param nanoTime monotonic time for budgets ({@code System::nanoTime})
 * @param random jitter source (per thread)
 */
record RouterContext(
    CallServices services,
    RoutingProfiles profiles,
    FailoverSettings settings,
    ConversationStickiness stickiness,
    SchemaModeMemory schemas,
    RouterListener listener,
    LongSupplier nanoTime,
    Supplier<RandomGenerator> random) {}
