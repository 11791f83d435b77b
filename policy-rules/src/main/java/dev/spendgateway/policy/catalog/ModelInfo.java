package dev.spendgateway.policy.catalog;

import java.time.LocalDate;
import java.util.Objects;
import java.util.Set;

/**
 * One catalog entry (conf/models.conf).
 *
 * @param name the model id exactly as the provider spells it
 * @param provider the upstream serving it
 * @param kind chat or transcription
 * @param prices micro-dollar prices
 * @param contextLimit context window in tokens
 * @param features capabilities a failover profile may require
 * @param lifecycle active, deprecated or retired as configured
 * @param endOfSupport last day the provider serves it; null when none announced
 */
public record ModelInfo(
    String name,
    Provider provider,
    ModelKind kind,
    Prices prices,
    long contextLimit,
    Set<String> features,
    Lifecycle lifecycle,
    LocalDate endOfSupport) {

  public ModelInfo {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(provider, "provider");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(prices, "prices");
    Objects.requireNonNull(lifecycle, "lifecycle");
    features = Set.copyOf(features);
  }

  /**
   * Retired by configuration, or past its end-of-support day. The date rule exists so that a catalog
   * nobody updated still refuses a model the provider has switched off.
   */
  public boolean isRetiredOn(LocalDate today) {
    return lifecycle == Lifecycle.RETIRED || (endOfSupport != null && today.isAfter(endOfSupport));
  }

  /** Served today, but callers should move off it. */
  public boolean isDeprecatedOn(LocalDate today) {
    return !isRetiredOn(today) && lifecycle == Lifecycle.DEPRECATED;
  }

  public boolean hasFeature(String feature) {
    return features.contains(feature);
  }
}
