package dev.spendgateway.loadtest;

import java.time.Duration;

/**
 * Open-loop send times. Request {@code i} is due at {@code start + i / rate} seconds, whether or
 * not earlier requests have come back; its latency is measured from that intended time, so a
 * stalled server is charged for every request it kept waiting (no coordinated omission).
 *
 * @param startNanos the {@link System#nanoTime()} of request 0
 * @param ratePerSecond total requests per second over all targets
 */
record RateSchedule(long startNanos, double ratePerSecond) {

  RateSchedule {
    if (!(ratePerSecond > 0) || Double.isInfinite(ratePerSecond)) {
      throw new IllegalArgumentException("rate must be a positive number, got " + ratePerSecond);
    }
  }

  /** When request {@code i} (0-based) should be sent. */
  long intendedNanos(long i) {
    return startNanos + Math.round(i * (1_000_000_000d / ratePerSecond));
  }

  /** How many requests a run of {@code duration} at {@code ratePerSecond} sends. */
  static long requestsIn(Duration duration, double ratePerSecond) {
    return (long) Math.floor(duration.toNanos() / 1_000_000_000d * ratePerSecond);
  }

  /**
   * Latency charged to a request that completed at {@code endNanos}: from its intended send time.
   */
  long latencyNanos(long i, long endNanos) {
    return Math.max(0, endNanos - intendedNanos(i));
  }
}
