package dev.spendgateway.edge;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.List;

/**
 * The gateway's own scalar settings, each with its type and range in one place: the start reads
 * them through here and {@code bin/gateway --check} checks every one of them here ({@link
 * StartupCheck}), so a value the check passes is one the start takes. A value out of range throws
 * an {@link IllegalArgumentException} naming the key and the range; the check adds the value, where
 * it came from and the fix. (Settings objects of other modules, the ledger's, the upstream's, the
 * router's, check their own keys the same way when they are built.)
 */
public final class GatewayKeys {
  private GatewayKeys() {}

  /** One key and the values the gateway can run with. */
  public sealed interface Key {
    String path();

    /** Reads the key; throws when its type or range is wrong. */
    void check(Config config);
  }

  /** A whole number from {@code min} to {@code max}. */
  public record Whole(String path, long min, long max) implements Key {
    public int get(Config config) {
      long value = config.getLong(path);
      if (value < min || value > max) {
        throw new IllegalArgumentException(
            path + " must be a whole number from " + min + " to " + max + ", was " + value);
      }
      return Math.toIntExact(value);
    }

    @Override
    public void check(Config config) {
      get(config);
    }
  }

  /** A share: a number above 0 and at most 1. */
  public record Share(String path) implements Key {
    public double get(Config config) {
      double value = config.getDouble(path);
      if (!(value > 0 && value <= 1)) {
        throw new IllegalArgumentException(
            path + " must be > 0 and <= 1 (a share, e.g. 0.25), was " + value);
      }
      return value;
    }

    @Override
    public void check(Config config) {
      get(config);
    }
  }

  /** A duration longer than zero. */
  public record Positive(String path) implements Key {
    public Duration get(Config config) {
      Duration value = config.getDuration(path);
      if (value.isNegative() || value.isZero()) {
        throw new IllegalArgumentException(
            path + " must be a duration longer than 0 (e.g. 30s), was " + value);
      }
      return value;
    }

    @Override
    public void check(Config config) {
      get(config);
    }
  }

  private static final long INT_MAX = Integer.MAX_VALUE;

  public static final Whole MAX_OPEN_CALLS = new Whole("gateway.max-open-calls", 1, INT_MAX);
  public static final Share BODY_MEMORY_SHARE = new Share("gateway.body-memory-share");
  public static final Positive BODY_READ_TIMEOUT = new Positive("gateway.body-read-timeout");
  public static final Positive HEADER_READ_TIMEOUT =
      new Positive(GatewayServer.HEADER_READ_TIMEOUT);
  public static final Whole USAGE_TOP_SUBJECTS =
      new Whole("gateway.usage-top-subjects", 0, INT_MAX);
  public static final Whole METRICS_SUBJECT_SERIES =
      new Whole("gateway.metrics-subject-series", 0, INT_MAX);
  public static final Whole HTTP2_MAX_CONNECTIONS =
      new Whole(GatewayServer.HTTP2_MAX_CONNECTIONS, 1, INT_MAX);
  public static final Positive CLIENT_SUBSCRIBE_TIMEOUT =
      new Positive("providers.client-subscribe-timeout");
  public static final Whole WARNING_DAYS = new Whole("model-lifecycle.warning-days", 0, 3650);
  public static final Whole OPS_TOP_BRANDS = new Whole("ops.top-brands", 1, 1000);
  public static final Whole OPS_SPEND_HOURS = new Whole("ops.spend-hours", 1, 24 * 31);
  public static final Positive OPS_FAILURE_WINDOW = new Positive("ops.failure-window");
  public static final Positive OPS_FAILURE_SAMPLE_EVERY = new Positive("ops.failure-sample-every");

  /** Every key above, in the order the check reads them. */
  public static final List<Key> ALL =
      List.of(
          MAX_OPEN_CALLS,
          BODY_MEMORY_SHARE,
          BODY_READ_TIMEOUT,
          HEADER_READ_TIMEOUT,
          USAGE_TOP_SUBJECTS,
          METRICS_SUBJECT_SERIES,
          HTTP2_MAX_CONNECTIONS,
          CLIENT_SUBSCRIBE_TIMEOUT,
          WARNING_DAYS,
          OPS_TOP_BRANDS,
          OPS_SPEND_HOURS,
          OPS_FAILURE_WINDOW,
          OPS_FAILURE_SAMPLE_EVERY);

  /** Checks every key; throws at the first wrong one. */
  public static void checkAll(Config config) {
    ALL.forEach(key -> key.check(config));
  }
}
