package dev.spendgateway.upstream.client;

import com.typesafe.config.Config;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.sse.SseLimits;
import java.time.Duration;

/**
 * All of {@code providers.*} ({@code conf/providers.conf}).
 *
 * @param openai {@code providers.openai}
 * @param anthropic {@code providers.anthropic}
 * @param drainTimeout {@code providers.drain-timeout}
 * @param maxResponseBytes {@code providers.max-response-bytes}
 * @param sseLimits {@code providers.max-sse-line-bytes} and {@code max-sse-event-bytes}
 * @param maxCallDuration {@code providers.max-call-duration}: from sending the request to the
 *     answer's last byte; past it the call is cut ({@link SafeErrors#MAX_CALL_DURATION})
 */
public record UpstreamSettings(
    ProviderSettings openai,
    ProviderSettings anthropic,
    Duration drainTimeout,
    long maxResponseBytes,
    SseLimits sseLimits,
    Duration maxCallDuration) {

  /**
   * {@code providers.max-call-duration}'s default (see conf/providers.conf for the rule it obeys).
   */
  public static final Duration DEFAULT_MAX_CALL_DURATION = Duration.ofMinutes(13);

  public UpstreamSettings {
    if (maxCallDuration.isNegative() || maxCallDuration.isZero()) {
      throw new IllegalArgumentException("providers.max-call-duration must be > 0");
    }
  }

  /** Reads {@code providers.*} from the application's root config (already resolved). */
  public static UpstreamSettings fromConfig(Config root) {
    Config p = root.getConfig("providers");
    return new UpstreamSettings(
        ProviderSettings.fromConfig(Provider.OPENAI, p.getConfig("openai")),
        ProviderSettings.fromConfig(Provider.ANTHROPIC, p.getConfig("anthropic")),
        p.getDuration("drain-timeout"),
        p.getBytes("max-response-bytes"),
        new SseLimits(
            Math.toIntExact(p.getBytes("max-sse-line-bytes")),
            Math.toIntExact(p.getBytes("max-sse-event-bytes"))),
        p.hasPath("max-call-duration")
            ? p.getDuration("max-call-duration")
            : DEFAULT_MAX_CALL_DURATION);
  }

  public ProviderSettings provider(Provider provider) {
    return switch (provider) {
      case OPENAI -> openai;
      case ANTHROPIC -> anthropic;
    };
  }

  /** A copy with one provider's settings replaced. */
  public UpstreamSettings with(ProviderSettings settings) {
    return switch (settings.provider()) {
      case OPENAI ->
          new UpstreamSettings(
              settings, anthropic, drainTimeout, maxResponseBytes, sseLimits, maxCallDuration);
      case ANTHROPIC ->
          new UpstreamSettings(
              openai, settings, drainTimeout, maxResponseBytes, sseLimits, maxCallDuration);
    };
  }

  public UpstreamSettings withDrainTimeout(Duration timeout) {
    return new UpstreamSettings(
        openai, anthropic, timeout, maxResponseBytes, sseLimits, maxCallDuration);
  }

  public UpstreamSettings withMaxCallDuration(Duration duration) {
    return new UpstreamSettings(
        openai, anthropic, drainTimeout, maxResponseBytes, sseLimits, duration);
  }
}
