package dev.spendgateway.edge.router;

import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.Pool;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * A {@link RouterListener} that counts into a map keyed by Prometheus-style series names, e.g.
 * {@code gateway_model_retired{model="gpt-6.1-sol"}}. A stopgap until {@code /metrics} binds the
 * listener to Micrometer; {@link #snapshot()} is what such a binding (or a test) reads.
 * Thread-safe.
 */
public final class RouterCounters implements RouterListener {
  private final Map<String, LongAdder> counters = new ConcurrentHashMap<>();
  private final Map<String, Long> gauges = new ConcurrentHashMap<>();

  @Override
  public void modelRetired(String model) {
    inc("gateway_model_retired{model=\"" + model + "\"}");
  }

  @Override
  public void modelDeprecated(String profile, String model, Optional<Long> daysLeft) {
    gauges.put(
        "gateway_model_end_of_support_days{profile=\"" + profile + "\",model=\"" + model + "\"}",
        daysLeft.orElse(-1L));
  }

  @Override
  public void attempt(Provider provider, String outcome) {
    inc(
        "gateway_router_attempts{provider=\""
            + provider.wireName()
            + "\",outcome=\""
            + outcome
            + "\"}");
  }

  @Override
  public void failover(String profile, Provider to) {
    inc("gateway_router_failovers{profile=\"" + profile + "\",to=\"" + to.wireName() + "\"}");
  }

  @Override
  public void poolFull(Pool pool, Provider provider) {
    inc(
        "gateway_router_pool_full{pool=\""
            + pool.wireName()
            + "\",provider=\""
            + provider.wireName()
            + "\"}");
  }

  /** Counter value of one series, 0 when never counted. */
  public long count(String series) {
    LongAdder a = counters.get(series);
    return a == null ? 0 : a.sum();
  }

  /** Every counter and gauge, sorted by series name. */
  public Map<String, Long> snapshot() {
    Map<String, Long> out = new TreeMap<>(gauges);
    counters.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }

  private void inc(String series) {
    counters.computeIfAbsent(series, k -> new LongAdder()).increment();
  }
}
