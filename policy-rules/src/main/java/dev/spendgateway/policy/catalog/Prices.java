package dev.spendgateway.policy.catalog;

/**
 * A model's prices in micro-dollars. Token prices are per million tokens, so {@code 2_000_000} is
 * $2 per million; the audio price is per minute.
 *
 * @param inputPerMillion uncached input tokens
 * @param outputPerMillion output tokens, reasoning / thinking included
 * @param cacheWritePerMillion tokens written to the prompt cache
 * @param cacheReadPerMillion tokens read from the prompt cache
 * @param perAudioMinute one minute of transcribed audio (0 for chat models)
 */
public record Prices(
    long inputPerMillion,
    long outputPerMillion,
    long cacheWritePerMillion,
    long cacheReadPerMillion,
    long perAudioMinute) {

  public Prices {
    if (inputPerMillion < 0
        || outputPerMillion < 0
        || cacheWritePerMillion < 0
        || cacheReadPerMillion < 0
        || perAudioMinute < 0) {
      throw new IllegalArgumentException("prices cannot be negative");
    }
  }

  /**
   * The dearest way an input token can be billed. A worst case prices every assumed input token at
   * this rate, because the provider decides whether a token is read fresh, written to or read from
   * the cache.
   */
  public long dearestInputPerMillion() {
    return Math.max(inputPerMillion, Math.max(cacheWritePerMillion, cacheReadPerMillion));
  }
}
