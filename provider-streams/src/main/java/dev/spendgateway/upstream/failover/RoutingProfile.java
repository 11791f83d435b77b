package dev.spendgateway.upstream.failover;

import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.catalog.Provider;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * One approved routing profile (conf/profiles.conf): the name callers put in {@code model}, the
 * OpenAI primary, the tested Claude fallback (optional), the context limit, the features every
 * request on the profile may rely on, the admission pool and the default {@code max_tokens} used
 * when a translated request names none.
 */
public record RoutingProfile(
    String name,
    ModelInfo primary,
    Optional<ModelInfo> fallback,
    long contextLimit,
    Set<String> features,
    Pool pool,
    long defaultMaxTokens) {

  public RoutingProfile {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(primary, "primary");
    Objects.requireNonNull(fallback, "fallback");
    Objects.requireNonNull(pool, "pool");
    features = Set.copyOf(features);
  }

  /** The model this profile uses on a provider, when it has one there. */
  public Optional<ModelInfo> modelOn(Provider provider) {
    if (primary.provider() == provider) {
      return Optional.of(primary);
    }
    return fallback.filter(f -> f.provider() == provider);
  }
}
