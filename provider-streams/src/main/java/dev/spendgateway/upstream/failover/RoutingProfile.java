package dev.spendgateway.upstream.failover;

import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.catalog.Provider;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * One approved routing profile (conf/profiles.conf): the name callers put in {@code model}, the
 * OpenAI primary, the tested Claude fallback (optional), the context limit, the features every
 * request on the profile may rely on, the admission pool, the default {@code max_tokens} used when
 * a translated request names none, and the data classes it narrows.
 *
 * @param dataClasses per data class name, the providers this profile may use for that class (the
 *     class's own list still applies: only providers in both are used); a class not named here is
 *     used as the class allows
 */
public record RoutingProfile(
    String name,
    ModelInfo primary,
    Optional<ModelInfo> fallback,
    long contextLimit,
    Set<String> features,
    Pool pool,
    long defaultMaxTokens,
    Map<String, Set<Provider>> dataClasses) {

  /** A profile that narrows no data class. */
  public RoutingProfile(
      String name,
      ModelInfo primary,
      Optional<ModelInfo> fallback,
      long contextLimit,
      Set<String> features,
      Pool pool,
      long defaultMaxTokens) {
    this(name, primary, fallback, contextLimit, features, pool, defaultMaxTokens, Map.of());
  }

  public RoutingProfile {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(primary, "primary");
    Objects.requireNonNull(fallback, "fallback");
    Objects.requireNonNull(pool, "pool");
    features = Set.copyOf(features);
    Map<String, Set<Provider>> copy = new java.util.TreeMap<>();
    dataClasses.forEach((k, v) -> copy.put(k, Set.copyOf(v)));
    dataClasses = Map.copyOf(copy);
  }

  /** The providers this profile allows for {@code dataClass}, when it narrows that class. */
  public Optional<Set<Provider>> narrowingFor(String dataClass) {
    return Optional.ofNullable(dataClasses.get(dataClass));
  }

  /** The model this profile uses on a provider, when it has one there. */
  public Optional<ModelInfo> modelOn(Provider provider) {
    if (primary.provider() == provider) {
      return Optional.of(primary);
    }
    return fallback.filter(f -> f.provider() == provider);
  }
}
