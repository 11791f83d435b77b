package dev.spendgateway.policy.cost;

import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.catalog.Prices;
import dev.spendgateway.policy.request.PolicyLimits;
import java.util.Optional;

/**
 * The actual cost of a call from the usage the provider reported. Exact integer arithmetic: each
 * part is summed in micro-dollars times a million (token prices are per million) and rounded up
 * once, so a cost is never under-counted and never rounded twice.
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

  /**
   * How a call with a reservation is closed, given what its provider reported.
   *
   * <ul>
   *   <li>{@link Billed}: the usage is believable and priced; settle at that cost (above the
   *       reservation too: the provider bills what it bills).
   *   <li>{@link KeepWorstCase}: no usage, or a usage no real call can have (more input than the
   *       model's context window, more output than the output budget the gateway sent, counts whose
   *       cost does not fit in a {@code long} of micro-dollars); settle at the reserved worst case.
   * </ul>
   *
   * An impossible usage is a broken or hostile upstream: priced as reported it could charge the
   * whole global budget for one call (stopping every lane), or overflow the arithmetic. Treating it
   * like unreadable usage closes the reservation at the amount the caps already admitted.
   */
  public sealed interface Settlement {
    /**
     * @param micros the cost of the reported usage
     */
    record Billed(long micros) implements Settlement {}

    /**
     * @param errorClass what the access log records ({@code usage_missing} or {@code
     *     usage_implausible})
     * @param reason why, for the operator (never the provider's text)
     */
    record KeepWorstCase(String errorClass, String reason) implements Settlement {}
  }

  /**
   * The settlement of a call reserved at {@code worstCase} whose provider reported {@code report}.
   * Pure and total: it never throws, whatever the numbers.
   */
  public Settlement settlement(ModelInfo model, WorstCase worstCase, UsageReport report) {
    if (report instanceof UsageReport.NotReported notReported) {
      return new Settlement.KeepWorstCase("usage_missing", notReported.reason());
    }
    TokenUsage usage = ((UsageReport.Reported) report).usage();
    Optional<String> impossible = beyondLimits(model, worstCase, usage);
    if (impossible.isPresent()) {
      return new Settlement.KeepWorstCase("usage_implausible", impossible.get());
    }
    try {
      return new Settlement.Billed(actualMicros(model, usage));
    } catch (ArithmeticException overflow) {
      return new Settlement.KeepWorstCase(
          "usage_implausible", "the reported usage's cost overflows micro-dollars");
    }
  }

  /**
   * Why a reported usage cannot come from a real call, if it cannot: its input (fresh, cache write
   * and cache read together) is beyond the model's context window, or its output beyond the output
   * budget the gateway wrote into the request ({@link WorstCase#outputTokensAssumed()}).
   */
  static Optional<String> beyondLimits(ModelInfo model, WorstCase worstCase, TokenUsage usage) {
    long input;
    try {
      input =
          Math.addExact(
              Math.addExact(usage.inputTokens(), usage.cacheWriteTokens()),
              usage.cacheReadTokens());
    } catch (ArithmeticException overflow) {
      return Optional.of("input tokens overflow");
    }
    if (model.contextLimit() > 0 && input > model.contextLimit()) {
      return Optional.of(
          "input tokens " + input + " above the context limit " + model.contextLimit());
    }
    if (usage.outputTokens() > worstCase.outputTokensAssumed()) {
      return Optional.of(
          "output tokens "
              + usage.outputTokens()
              + " above the output budget "
              + worstCase.outputTokensAssumed());
    }
    return Optional.empty();
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
