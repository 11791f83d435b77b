package dev.spendgateway.sim;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Immutable simulator settings.
 *
 * @param host interface to bind; loopback by default because the simulator has no auth of its own
 * @param port port to bind, 0 for a free one
 * @param latency delay before every answer (headers), default 0
 * @param usage usage reported when a call has no scripted usage
 * @param replyText the assistant text every answer carries (split into words when streamed)
 * @param recordLimit how many received calls are kept (a ring buffer, so load tests stay bounded)
 * @param expectedApiKey when present, calls without exactly this key ({@code x-api-key} for
 *     Anthropic, {@code Authorization: Bearer} for OpenAI) get the provider's 401; absent = any key
 */
public record SimConfig(
    String host,
    int port,
    Duration latency,
    Usage usage,
    String replyText,
    int recordLimit,
    Optional<String> expectedApiKey) {

  public static final String DEFAULT_REPLY = "Hello from the provider simulator.";

  public SimConfig {
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(latency, "latency");
    Objects.requireNonNull(usage, "usage");
    Objects.requireNonNull(replyText, "replyText");
    Objects.requireNonNull(expectedApiKey, "expectedApiKey");
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port out of range: " + port);
    }
    if (latency.isNegative()) {
      throw new IllegalArgumentException("latency must be >= 0");
    }
    if (recordLimit < 1) {
      throw new IllegalArgumentException("recordLimit must be >= 1");
    }
  }

  /** Loopback, free port, no latency, default usage, last 10,000 calls kept, any key accepted. */
  public static SimConfig defaults() {
    return new SimConfig(
        "127.0.0.1", 0, Duration.ZERO, Usage.defaults(), DEFAULT_REPLY, 10_000, Optional.empty());
  }

  public SimConfig withHost(String host) {
    return new SimConfig(host, port, latency, usage, replyText, recordLimit, expectedApiKey);
  }

  public SimConfig withPort(int port) {
    return new SimConfig(host, port, latency, usage, replyText, recordLimit, expectedApiKey);
  }

  public SimConfig withLatency(Duration latency) {
    return new SimConfig(host, port, latency, usage, replyText, recordLimit, expectedApiKey);
  }

  public SimConfig withUsage(Usage usage) {
    return new SimConfig(host, port, latency, usage, replyText, recordLimit, expectedApiKey);
  }

  public SimConfig withReplyText(String replyText) {
    return new SimConfig(host, port, latency, usage, replyText, recordLimit, expectedApiKey);
  }

  public SimConfig withRecordLimit(int recordLimit) {
    return new SimConfig(host, port, latency, usage, replyText, recordLimit, expectedApiKey);
  }

  public SimConfig withExpectedApiKey(String key) {
    return new SimConfig(host, port, latency, usage, replyText, recordLimit, Optional.of(key));
  }
}
