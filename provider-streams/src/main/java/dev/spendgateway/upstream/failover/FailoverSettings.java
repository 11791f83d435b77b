package dev.spendgateway.upstream.failover;

import com.typesafe.config.Config;
import dev.spendgateway.policy.catalog.Provider;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code failover} block of conf/profiles.conf (every key documented there), read once at
 * start. Each building block takes the part it needs.
 *
 * <p>The breaker's {@code call-timeout} times a call up to its response headers, and a non-streamed
 * answer's headers come only after the whole generation — up to the provider's {@code
 * response-start-timeout}. A shorter breaker would count a long answer as a provider failure and
 * fail it over while the first generation still bills, so when the config holds the {@code
 * providers} block the call-timeout is raised to the longest response-start-timeout plus {@link
 * #BREAKER_MARGIN} (the edge's startup check refuses such a config first; this keeps every other
 * user of these settings safe too).
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

  /**
   * Added to the longest response-start-timeout: the upstream's own timer then ends a silent call
   * first.
   */
  public static final Duration BREAKER_MARGIN = Duration.ofSeconds(10);

  /**
   * The longest {@code providers.<provider>.response-start-timeout} in {@code config}, empty when
   * it has no {@code providers} block (a config of the failover block alone).
   */
  static Optional<Duration> longestResponseStart(Config config) {
    Optional<Duration> longest = Optional.empty();
    for (Provider provider : Provider.values()) {
      String key = "providers." + provider.wireName() + ".response-start-timeout";
      if (config.hasPath(key)) {
        Duration d = config.getDuration(key);
        longest = longest.filter(l -> l.compareTo(d) >= 0).or(() -> Optional.of(d));
      }
    }
    return longest;
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
      budgets.put(
          pool, new AttemptBudget.Limits(b.getInt("max-attempts"), b.getDuration("total-time")));
      Config p = f.getConfig("pools." + pool.wireName());
      Map<Provider, Integer> concurrency = new EnumMap<>(Provider.class);
      for (Provider provider : Provider.values()) {
        concurrency.put(provider, p.getInt("concurrency." + provider.wireName()));
      }
      pools.put(pool, new AdmissionPools.PoolLimits(p.getInt("queue-size"), concurrency));
    }
    String openFor = f.getString("model-gone-open-for");
    Optional<Duration> modelGoneOpenFor =
        "forever".equals(openFor)
            ? Optional.empty()
            : Optional.of(f.getDuration("model-gone-open-for"));
    ProviderBreakers.Settings breaker =
        new ProviderBreakers.Settings(
            f.getInt("breaker.max-failures"),
            f.getDuration("breaker.call-timeout"),
            f.getDuration("breaker.reset-timeout"),
            f.getDuration("breaker.max-reset-timeout"));
    breaker = longestResponseStart(config).map(breaker::coveringResponseStart).orElse(breaker);
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
