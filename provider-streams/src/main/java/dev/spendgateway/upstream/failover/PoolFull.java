package dev.spendgateway.upstream.failover;

import dev.spendgateway.policy.catalog.Provider;

/**
 * A routed call refused at admission because its pool's queue for that provider is full. The edge
 * answers 429 at once with {@code Retry-After: retryAfterSeconds} — never a retry storm upstream.
 */
public final class PoolFull extends RuntimeException {
  private final Pool pool;
  private final Provider provider;
  private final long retryAfterSeconds;

  public PoolFull(Pool pool, Provider provider, long retryAfterSeconds) {
    super(
        "the "
            + pool.wireName()
            + " queue for "
            + provider.wireName()
            + " is full; try again in "
            + retryAfterSeconds
            + " s",
        null,
        false,
        false);
    this.pool = pool;
    this.provider = provider;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  public Pool pool() {
    return pool;
  }

  public Provider provider() {
    return provider;
  }

  /** Estimated from the observed drain rate; at least 1. */
  public long retryAfterSeconds() {
    return retryAfterSeconds;
  }
}
