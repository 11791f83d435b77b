package dev.spendgateway.edge.media;

import com.typesafe.config.Config;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;

/**
 * The {@code media} block of the config: where the media provider is, its key, and how the gateway
 * paces and settles its jobs. The routes are off while {@code base-url} is empty.
 */
public record MediaSettings(
    String baseUrl,
    String apiKey,
    int maxConcurrentJobs,
    Duration retryAfter,
    Duration reservationLifetime,
    Duration pollInterval,
    int pollBatch,
    Duration requestTimeout) {

  /** A poll that waited longer would let a finished job hold its worst case too long. */
  static final Duration MAX_POLL_INTERVAL = Duration.ofSeconds(10);

  public MediaSettings {
    baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    if (maxConcurrentJobs < 1) {
      throw new IllegalArgumentException("media.max-concurrent-jobs must be >= 1");
    }
    if (pollInterval.isZero() || pollInterval.compareTo(MAX_POLL_INTERVAL) > 0) {
      throw new IllegalArgumentException("media.poll-interval must be > 0 and at most 10s");
    }
    if (pollBatch < 1) {
      throw new IllegalArgumentException("media.poll-batch must be >= 1");
    }
    if (reservationLifetime.isZero() || reservationLifetime.isNegative()) {
      throw new IllegalArgumentException("media.reservation-lifetime must be > 0");
    }
  }

  public static MediaSettings fromConfig(Config config) {
    Config m = config.getConfig("media");
    return new MediaSettings(
        m.getString("base-url"),
        m.getString("api-key"),
        m.getInt("max-concurrent-jobs"),
        m.getDuration("retry-after"),
        m.getDuration("reservation-lifetime"),
        m.getDuration("poll-interval"),
        m.getInt("poll-batch"),
        m.getDuration("request-timeout"));
  }

  /** Whether the media routes are on. */
  public boolean enabled() {
    return !baseUrl.isBlank();
  }

  /**
   * The media account the provider counts jobs against: one per key. Named by a digest of the key
   * so the ledger and the logs never hold the key itself.
   */
  public String account() {
    return "media-" + HexFormat.of().formatHex(sha256(apiKey)).substring(0, 16);
  }

  static byte[] sha256(String text) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public String toString() {
    // Never print the key.
    return "MediaSettings[baseUrl=" + baseUrl + ", maxConcurrentJobs=" + maxConcurrentJobs + "]";
  }
}
