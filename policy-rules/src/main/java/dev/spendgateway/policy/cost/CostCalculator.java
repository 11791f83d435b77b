package dev.spendgateway.policy.cost;

import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.catalog.Prices;
import dev.spendgateway.policy.request.PolicyLimits;

/**
 * The actual cost of a call from the usage the provider reported. Exact integer arithmetic: each
 * part is summed in micro-dollars times a million (token prices are per million) and rounded up once,
 * so a cost is never under-counted and never rounded twice.
 *
 * @param webSearchMicrosPerUse price of one web search (policy.web-search-usd-per-use)
 */
public record CostCalculator(long webSearchMicrosPerUse) {
  private static final long TOKENS_PER_MILLION = 1_000_000L;
  private static final long SECONDS_PER_MINUTE = 60L;

  public CostCalculator {
    if (webSearchMicrosPerUse < 0) {
      throw new IllegalArgumentException("web search price cannot be negative");
    }
  }

  public static CostCalculator of(PolicyLimits limits) {
    return new CostCalculator(limits.webSearchMicrosPerUse());
  }

  /** Micro-dollars the provider bills for this usage, rounded up to the micro-dollar. */
  public long actualMicros(ModelInfo model, TokenUsage usage) {
    Prices p = model.prices();
    long perMillion =
        Math.addExact(
            Math.addExact(
                Math.multiplyExact(usage.inputTokens(), p.inputPerMillion()),
                Math.multiplyExact(usage.outputTokens(), p.outputPerMillion())),
            Math.addExact(
                Math.multiplyExact(usage.cacheWriteTokens(), p.cacheWritePerMillion()),
                Math.multiplyExact(usage.cacheReadTokens(), p.cacheReadPerMillion())));
    return Math.addExact(
        Math.addExact(tokenMicros(perMillion), audioMicros(usage.audioSeconds(), p)),
        webSearchMicros(usage.webSearchCalls()));
  }

  long webSearchMicros(long uses) {
    return Math.multiplyExact(uses, webSearchMicrosPerUse);
  }

  /** Rounds a sum of tokens x (micros per million tokens) up to whole micro-dollars. */
  static long tokenMicros(long tokensTimesMicrosPerMillion) {
    return ceilDiv(tokensTimesMicrosPerMillion, TOKENS_PER_MILLION);
  }

  static long audioMicros(long seconds, Prices prices) {
    return ceilDiv(Math.multiplyExact(seconds, prices.perAudioMinute()), SECONDS_PER_MINUTE);
  }

  /** Division rounding up, for non-negative operands (Math.ceilDiv arrives only in Java 18). */
  static long ceilDiv(long dividend, long divisor) {
    return -Math.floorDiv(-dividend, divisor);
  }
}
