package dev.spendgateway.edge.alerts;

import com.typesafe.config.Config;
import java.math.BigDecimal;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The {@code alerts} block of the configuration (conf/alerts.conf).
 *
 * @param webhook where alerts are POSTed; empty: no webhook, no alerts journaled
 * @param secret the HMAC-SHA256 key of {@code x-gateway-signature}
 * @param thresholds fractions of a cap's limit that raise a budget alert
 * @param checkInterval how often cap spend is compared with the thresholds
 * @param firstRetry wait before the first retry of a failed delivery; doubled after each
 * @param maxRetryInterval the longest wait between two attempts
 * @param requestTimeout how long one attempt waits for the receiver's answer
 */
public record AlertSettings(
    Optional<URI> webhook,
    String secret,
    List<BigDecimal> thresholds,
    Duration checkInterval,
    Duration firstRetry,
    Duration maxRetryInterval,
    Duration requestTimeout) {

  /** No webhook: what a configuration without an {@code alerts} block means. */
  public static final AlertSettings OFF =
      new AlertSettings(
          Optional.empty(),
          "",
          List.of(new BigDecimal("0.5"), new BigDecimal("0.8"), BigDecimal.ONE),
          Duration.ofSeconds(5),
          Duration.ofSeconds(5),
          Duration.ofMinutes(5),
          Duration.ofSeconds(10));

  public static AlertSettings fromConfig(Config config) {
    if (!config.hasPath("alerts")) {
      return OFF;
    }
    Config a = config.getConfig("alerts");
    String url = a.getString("webhook.url").trim();
    List<BigDecimal> thresholds =
        a.getStringList("thresholds").stream().map(BigDecimal::new).sorted().toList();
    for (BigDecimal t : thresholds) {
      if (t.signum() <= 0) {
        throw new IllegalArgumentException(
            "alerts.thresholds: " + t + " is not a fraction of a limit above 0 (e.g. 0.8)");
      }
    }
    return new AlertSettings(
        url.isEmpty() ? Optional.empty() : Optional.of(URI.create(url)),
        a.getString("webhook.secret"),
        thresholds,
        a.getDuration("check-interval"),
        a.getDuration("webhook.first-retry"),
        a.getDuration("webhook.max-retry-interval"),
        a.getDuration("webhook.request-timeout"));
  }
}
