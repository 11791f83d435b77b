package dev.spendgateway.edge.call;

import dev.spendgateway.policy.cost.CostCalculator;
import dev.spendgateway.policy.cost.UsageReport;
import dev.spendgateway.policy.money.Micros;
import java.math.BigDecimal;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Per provider, model and routing profile: the tokens each attempt was billed for and what the
 * ledger closed it at ({@link CallMetrics#tokensUsed}, {@link CallMetrics#spent}). Hooked in where
 * a call prices its usage and where its access line is written, so the numbers are exactly the ones
 * the ledger and the log saw.
 */
public final class UsageTelemetry {
  private UsageTelemetry() {}

  /** The label of a provider-route call, which names no profile. */
  public static final String NO_PROFILE = "";

  /**
   * {@code pricing}, also counting the tokens of the first usage it prices into a bill. Only the
   * first: a settlement is decided once per attempt, and a repeated end must not count twice.
   */
  public static Settlement.Pricing counting(
      Settlement.Pricing pricing,
      CallMetrics metrics,
      String provider,
      String model,
      String profile) {
    AtomicBoolean counted = new AtomicBoolean();
    return usage -> {
      CostCalculator.Settlement settlement = pricing.price(usage);
      if (settlement instanceof CostCalculator.Settlement.Billed
          && usage instanceof UsageReport.Reported reported
          && counted.compareAndSet(false, true)) {
        metrics.tokensUsed(provider, model, profile, reported.usage());
      }
      return settlement;
    };
  }

  /** Counts what the ledger closed {@code attempt} at, once its line is written. */
  public static void countSpend(
      CallAttempt attempt,
      CallMetrics metrics,
      String provider,
      String model,
      String profile,
      Optional<String> tag) {
    attempt
        .written()
        .thenAccept(
            record -> {
              if (record.settledUsd() != null) {
                metrics.spent(
                    provider,
                    model,
                    profile,
                    tag,
                    Micros.ofUsdExact(new BigDecimal(record.settledUsd())));
              }
            });
  }
}
