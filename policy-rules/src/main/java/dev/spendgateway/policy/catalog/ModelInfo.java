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
   * Retired by configuration, or past its end-of-support day. The date rule exists so that a
   * catalog nobody updated still refuses a model the provider has switched off.
   */
  public boolean isRetiredOn(LocalDate today) {
    return lifecycle == Lifecycle.RETIRED || (endOfSupport != null && today.isAfter(endOfSupport));
  }

  /** Served today, but callers should move off it. */
  public boolean isDeprecatedOn(LocalDate today) {
    return !isRetiredOn(today) && lifecycle == Lifecycle.DEPRECATED;
  }

  /**
   * Days from {@code today} to the last day of support (0 on that day); empty when none is
   * announced.
   */
  public java.util.Optional<Long> daysOfSupportLeft(LocalDate today) {
    return endOfSupport == null
        ? java.util.Optional.empty()
        : java.util.Optional.of(java.time.temporal.ChronoUnit.DAYS.between(today, endOfSupport));
  }

  /**
   * Still served today, but about to end: an active model whose end of support is at most {@code
   * warningDays} away. Warned like a deprecated one, because a provider often announces the date
   * before anyone updates the catalog's lifecycle, and the callers need the time to move.
   */
  public boolean isEndingSoonOn(LocalDate today, long warningDays) {
    return !isRetiredOn(today)
        && lifecycle == Lifecycle.ACTIVE
        && daysOfSupportLeft(today).map(days -> days <= warningDays).orElse(false);
  }

  /** Whether using this model today raises the lifecycle warning: deprecated, or ending soon. */
  public boolean needsWarningOn(LocalDate today, long warningDays) {
    return isDeprecatedOn(today) || isEndingSoonOn(today, warningDays);
  }

  public boolean hasFeature(String feature) {
    return features.contains(feature);
  }
}
