package dev.spendgateway.edge;

import com.typesafe.config.Config;
import dev.spendgateway.edge.metrics.SpendTagLabels;
import dev.spendgateway.policy.access.SpendTag;
import java.time.Duration;
import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Predicate;

/**
 * The gateway's own scalar settings, each with its type and range in one place: the start reads
 * them through here and {@code bin/gateway --check} checks every one of them here ({@link
 * StartupCheck}), so a value the check passes is one the start takes. A value of the wrong type
 * throws Typesafe Config's exception, one out of range an {@link IllegalArgumentException} naming
 * the key and the range; the check adds the value, where it came from and where to fix it.
 * (Settings objects of other modules, the ledger's, the upstream's, the router's, check their own
 * keys the same way when they are built.)
 */
public final class GatewayKeys {
  private GatewayKeys() {}

  /** One key: how to read it, and the values the gateway can run with. */
  public record Key<T>(
      String path, BiFunction<Config, String, T> read, Predicate<T> inRange, String range) {
    /** The key's value; throws when its type or range is wrong. */
    public T get(Config config) {
      T value = read.apply(config, path);
      if (!inRange.test(value)) {
        throw new IllegalArgumentException(path + " must be " + range + ", was " + value);
      }
      return value;
    }
  }

  private static Key<Integer> whole(String path, int min, int max) {
    return new Key<>(
        path,
        Config::getInt,
        v -> v >= min && v <= max,
        "a whole number from " + min + " to " + max);
  }

  private static Key<Duration> positive(String path) {
    return new Key<>(
        path,
        Config::getDuration,
        v -> !v.isNegative() && !v.isZero(),
        "a duration longer than 0 (e.g. 30s)");
  }

  /**
   * Most workflow tags the spend metric may name: each one multiplies that metric's series by one
   * more value of its label.
   */
  static final int MAX_METRIC_TAGS = 50;

  public static final Key<Integer> MAX_OPEN_CALLS =
      whole("gateway.max-open-calls", 1, Integer.MAX_VALUE);
  public static final Key<Double> BODY_MEMORY_SHARE =
      new Key<>(
          "gateway.body-memory-share",
          Config::getDouble,
          v -> v > 0 && v <= 1,
          "> 0 and <= 1 (a share of the heap, e.g. 0.25)");
  public static final Key<Duration> BODY_READ_TIMEOUT = positive("gateway.body-read-timeout");
  public static final Key<Duration> HEADER_READ_TIMEOUT =
      positive(GatewayServer.HEADER_READ_TIMEOUT);
  public static final Key<Integer> USAGE_TOP_SUBJECTS =
      whole("gateway.usage-top-subjects", 0, Integer.MAX_VALUE);
  public static final Key<Integer> METRICS_SUBJECT_SERIES =
      whole("gateway.metrics-subject-series", 0, Integer.MAX_VALUE);
  public static final Key<List<String>> METRIC_TAGS =
      new Key<>(
          "gateway.spend-tags.metric-tags",
          Config::getStringList,
          tags -> {
            try {
              SpendTagLabels.of(tags);
              return tags.size() <= MAX_METRIC_TAGS;
            } catch (IllegalArgumentException e) {
              return false;
            }
          },
          "a list of at most "
              + MAX_METRIC_TAGS
              + " tags of "
              + SpendTag.DESCRIPTION
              + ", none of them `other` or `none`");
  public static final Key<Integer> HTTP2_MAX_CONNECTIONS =
      whole(GatewayServer.HTTP2_MAX_CONNECTIONS, 1, Integer.MAX_VALUE);
  public static final Key<Duration> CLIENT_SUBSCRIBE_TIMEOUT =
      positive("providers.client-subscribe-timeout");
  public static final Key<Integer> WARNING_DAYS = whole("model-lifecycle.warning-days", 0, 3650);
  public static final Key<Integer> OPS_TOP_BRANDS = whole("ops.top-brands", 1, 1000);
  public static final Key<Integer> OPS_SPEND_HOURS = whole("ops.spend-hours", 1, 24 * 31);
  public static final Key<Integer> OPS_BREAKDOWN_ROWS = whole("ops.breakdown-rows", 1, 10_000);
  public static final Key<Duration> OPS_FAILURE_WINDOW = positive("ops.failure-window");
  public static final Key<Duration> OPS_FAILURE_SAMPLE_EVERY = positive("ops.failure-sample-every");

  /** Every key above, in the order the check reads them. */
  public static final List<Key<?>> ALL =
      List.of(
          MAX_OPEN_CALLS,
          BODY_MEMORY_SHARE,
          BODY_READ_TIMEOUT,
          HEADER_READ_TIMEOUT,
          USAGE_TOP_SUBJECTS,
          METRICS_SUBJECT_SERIES,
          METRIC_TAGS,
          HTTP2_MAX_CONNECTIONS,
          CLIENT_SUBSCRIBE_TIMEOUT,
          WARNING_DAYS,
          OPS_TOP_BRANDS,
          OPS_SPEND_HOURS,
          OPS_BREAKDOWN_ROWS,
          OPS_FAILURE_WINDOW,
          OPS_FAILURE_SAMPLE_EVERY);

  /** Checks every key; throws at the first wrong one. */
  public static void checkAll(Config config) {
    ALL.forEach(key -> key.get(config));
  }
}
