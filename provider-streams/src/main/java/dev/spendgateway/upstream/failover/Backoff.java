package dev.spendgateway.upstream.failover;

import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * Capped exponential backoff with full jitter: the wait before retry {@code attempt} (0 for the
 * first retry) is uniform in {@code [0, min(cap, base · 2^attempt)]}. Full jitter spreads a crowd
 * of rate-limited callers over the whole window instead of moving them in lockstep (no retry
 * storm).
 */
public record Backoff(Duration base, Duration cap) {
  public Backoff {
    Objects.requireNonNull(base, "base");
    Objects.requireNonNull(cap, "cap");
    if (base.isNegative() || base.isZero() || cap.compareTo(base) < 0) {
      throw new IllegalArgumentException("backoff needs 0 < base <= cap");
    }
  }

  /** The upper end of the window for {@code attempt}: {@code min(cap, base · 2^attempt)}. */
  public Duration ceiling(int attempt) {
    if (attempt < 0) {
      throw new IllegalArgumentException("attempt must be >= 0");
    }
    long baseNanos = base.toNanos();
    long capNanos = cap.toNanos();
    // Shifting past the cap's magnitude would overflow; the cap wins long before that.
    if (attempt >= 62 || baseNanos > (capNanos >> Math.min(attempt, 62))) {
      return cap;
    }
    return Duration.ofNanos(Math.min(capNanos, baseNanos << attempt));
  }

  /** A full-jitter wait for {@code attempt}, drawn from {@code random}. */
  public Duration fullJitter(int attempt, RandomGenerator random) {
    long ceiling = ceiling(attempt).toNanos();
    return Duration.ofNanos(random.nextLong(ceiling + 1));
  }
}
