package dev.spendgateway.upstream.failover;

import com.typesafe.config.Config;
import dev.spendgateway.policy.catalog.Provider;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code failover} block of conf/profiles.conf (every key documented there), read once at start.
 * Each building block takes the part it needs.
 */
public record FailoverSettings(
    RetryPolicy retryPolicy,
    Map<Pool, AttemptBudget.Limits> budgets,
    Duration stickinessTtl,
    int stickinessMaxEntries,
    int schemaMemoryMaxEntries,
    Optional<Duration> modelGoneOpenFor,
    ProviderBreakers.Settings breaker,
    AdmissionPools.Settings pools) {

  public FailoverSettings {
    budgets = Map.copyOf(budgets);
  }

  public static FailoverSettings fromConfig(Config config) {
    Config f = config.getConfig("failover");
    RetryPolicy retry =
        new RetryPolicy(
            new Backoff(f.getDuration("backoff.base"), f.getDuration("backoff.cap")),
            f.getDuration("max-retry-after"));
    Map<Pool, AttemptBudget.Limits> budgets = new EnumMap<>(Pool.class);
    Map<Pool, AdmissionPools.PoolLimits> pools = new EnumMap<>(Pool.class);
    for (Pool pool : Pool.values()) {
      Config b = f.getConfig("budgets." + pool.wireName());
      budgets.put(pool, new AttemptBudget.Limits(b.getInt("max-attempts"), b.getDuration("total-time")));
      Config p = f.getConfig("pools." + pool.wireName());
      Map<Provider, Integer> concurrency = new EnumMap<>(Provider.class);
      for (Provider provider : Provider.values()) {
        concurrency.put(provider, p.getInt("concurrency." + provider.wireName()));
      }
      pools.put(pool, new AdmissionPools.PoolLimits(p.getInt("queue-size"), concurrency));
    }
    String openFor = f.getString("model-gone-open-for");
    Optional<Duration> modelGoneOpenFor =
        "forever".equals(openFor) ? Optional.empty() : Optional.of(f.getDuration("model-gone-open-for"));
    ProviderBreakers.Settings breaker =
        new ProviderBreakers.Settings(
            f.getInt("breaker.max-failures"),
            f.getDuration("breaker.call-timeout"),
            f.getDuration("breaker.reset-timeout"),
            f.getDuration("breaker.max-reset-timeout"));
    AdmissionPools.Settings admission =
        new AdmissionPools.Settings(
            pools,
            f.getDuration("pools.initial-retry-after"),
            f.getDuration("pools.max-retry-after"));
    return new FailoverSettings(
        retry,
        budgets,
        f.getDuration("stickiness.ttl"),
        f.getInt("stickiness.max-entries"),
        f.getInt("schema-memory.max-entries"),
        modelGoneOpenFor,
        breaker,
        admission);
  }
}
