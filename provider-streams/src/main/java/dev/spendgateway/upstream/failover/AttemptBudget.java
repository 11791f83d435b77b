package dev.spendgateway.upstream.failover;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * The attempt and time budget of ONE routed call, across every attempt on both providers (defaults:
 * interactive 4 attempts / 30 s, batch 8 / 10 min). Nothing retries past it: in a 429 storm the
 * upstream sees at most {@code max-attempts × calls}. Time comes from an injected nanosecond source
 * ({@code System::nanoTime} in production) so tests need no sleeping.
 */
public final class AttemptBudget {

  /** Per-pool limits from {@code failover.budgets.<pool>}. */
  public record Limits(int maxAttempts, Duration totalTime) {
    public Limits {
      Objects.requireNonNull(totalTime, "totalTime");
      if (maxAttempts < 1 || totalTime.isNegative() || totalTime.isZero()) {
        throw new IllegalArgumentException("a budget needs at least one attempt and some time");
      }
    }
  }

  private final Limits limits;
  private final LongSupplier nanoTime;
  private final long startNanos;
  private final AtomicInteger attempts = new AtomicInteger();

  private AttemptBudget(Limits limits, LongSupplier nanoTime) {
    this.limits = limits;
    this.nanoTime = nanoTime;
    this.startNanos = nanoTime.getAsLong();
  }

  /** Starts the clock now. */
  public static AttemptBudget start(Limits limits, LongSupplier nanoTime) {
    return new AttemptBudget(limits, nanoTime);
  }

  /** True when one more attempt may start now. */
  public boolean canAttempt() {
    return attempts.get() < limits.maxAttempts() && remaining().compareTo(Duration.ZERO) > 0;
  }

  /** Counts an attempt that is starting; false (and nothing counted) when the budget is spent. */
  public boolean tryStartAttempt() {
    while (true) {
      int n = attempts.get();
      if (n >= limits.maxAttempts() || remaining().compareTo(Duration.ZERO) <= 0) {
        return false;
      }
      if (attempts.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  /** True when, after waiting {@code wait}, another attempt would still fit the budget. */
  public boolean allowsRetryAfter(Duration wait) {
    return attempts.get() < limits.maxAttempts() && wait.compareTo(remaining()) < 0;
  }

  public int attempts() {
    return attempts.get();
  }

  public Duration elapsed() {
    return Duration.ofNanos(nanoTime.getAsLong() - startNanos);
  }

  /** Time left, never negative. */
  public Duration remaining() {
    Duration left = limits.totalTime().minus(elapsed());
    return left.isNegative() ? Duration.ZERO : left;
  }

  public Limits limits() {
    return limits;
  }
}
