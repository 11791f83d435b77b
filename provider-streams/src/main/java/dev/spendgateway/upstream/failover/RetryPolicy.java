package dev.spendgateway.upstream.failover;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.random.RandomGenerator;

/**
 * How long to wait before retrying on the same provider (pure): the provider's {@code Retry-After}
 * when it gave one and it is affordable, else full-jitter backoff.
 *
 * @param backoff used when the answer carried no Retry-After
 * @param maxRetryAfter the longest provider-advised wait worth taking; beyond it, fail over instead
 */
public record RetryPolicy(Backoff backoff, Duration maxRetryAfter) {
  public RetryPolicy {
    Objects.requireNonNull(backoff, "backoff");
    Objects.requireNonNull(maxRetryAfter, "maxRetryAfter");
  }

  /**
   * @param retryIndex 0 for the first retry on this provider, 1 for the second, …
   * @param retryAfter the answer's parsed Retry-After ({@link RetryAfter#parse})
   * @return the wait, or empty when the provider asks for longer than {@link #maxRetryAfter}
   */
  public Optional<Duration> waitBeforeRetry(
      int retryIndex, Optional<Duration> retryAfter, RandomGenerator random) {
    if (retryAfter.isPresent()) {
      Duration advised = retryAfter.get();
      return advised.compareTo(maxRetryAfter) <= 0 ? Optional.of(advised) : Optional.empty();
    }
    return Optional.of(backoff.fullJitter(retryIndex, random));
  }

  /**
   * The wait, only if the call's budget also allows another attempt after it — the value {@link
   * FailoverPlan.Attempt#affordableRetryWait()} expects.
   */
  public Optional<Duration> affordableWait(
      int retryIndex, Optional<Duration> retryAfter, RandomGenerator random, AttemptBudget budget) {
    return waitBeforeRetry(retryIndex, retryAfter, random).filter(budget::allowsRetryAfter);
  }
}
