package dev.spendgateway.policy.caps;

/**
 * The configured pool caps in micro-dollars (defaults in conf/ledger.conf: global $40/day and
 * $600/month, free $3/day, trial $25/day, $0.60 lifetime per preview). Brand caps come with each
 * request instead.
 */
public record CapLimits(
    long globalDailyMicros,
    long globalMonthlyMicros,
    long freeDailyMicros,
    long trialDailyMicros,
    long previewLifetimeMicros) {
  public CapLimits {
    if (globalDailyMicros < 0
        || globalMonthlyMicros < 0
        || freeDailyMicros < 0
        || trialDailyMicros < 0
        || previewLifetimeMicros < 0) {
      throw new IllegalArgumentException("caps must not be negative");
    }
  }
}
