package dev.spendgateway.edge.call;

import dev.spendgateway.policy.cost.CostCalculator;
import dev.spendgateway.policy.cost.UsageReport;
import dev.spendgateway.upstream.stream.StreamOutcome;

/**
 * The one settlement rule of every provider attempt, pure: how the reservation closes and what word
 * the access line records, from how the upstream ended. Settled at the real cost only when the
 * provider reported a believable usage for a complete answer; at 0 (void) only when the provider
 * cannot have billed (nothing sent, or an error status); everything else keeps the worst case, so
 * spend is never under-counted.
 */
public final class Settlement {
  private Settlement() {}

  /** How a held reservation is closed. */
  public sealed interface Closing {
    /** Settle at the real cost. */
    record AtCost(long micros) implements Closing {}

    /** Close at 0: the provider did not bill. */
    record Void() implements Closing {}

    /** Settle at the amount held: the cost is unknown and may be that high. */
    record KeepWorstCase() implements Closing {}
  }

  /**
   * @param closing how the reservation closes
   * @param outcomeWord the access line's error class; null when the attempt went as it should
   */
  public record Decision(Closing closing, String outcomeWord) {
    static Decision atCost(long micros) {
      return new Decision(new Closing.AtCost(micros), null);
    }

    static Decision voided(String word) {
      return new Decision(new Closing.Void(), word);
    }

    static Decision worstCase(String word) {
      return new Decision(new Closing.KeepWorstCase(), word);
    }
  }

  /**
   * Prices a usage report for the attempt's model and worst case ({@link
   * CostCalculator#settlement}).
   */
  @FunctionalInterface
  public interface Pricing {
    CostCalculator.Settlement price(UsageReport usage);
  }

  public static Decision decide(UpstreamOutcome outcome, Pricing pricing) {
    if (outcome instanceof UpstreamOutcome.NeverSent never) {
      return Decision.voided(never.errorClass());
    }
    if (outcome instanceof UpstreamOutcome.NoAnswer none) {
      return Decision.worstCase(none.errorClass());
    }
    if (outcome instanceof UpstreamOutcome.ErrorStatus error) {
      return Decision.voided("upstream_" + error.status());
    }
    if (outcome instanceof UpstreamOutcome.Answered answered) {
      return priced(answered.usage(), pricing);
    }
    if (outcome instanceof UpstreamOutcome.Unreadable unreadable) {
      return Decision.worstCase(unreadable.errorClass());
    }
    return streamEnded((UpstreamOutcome.StreamEnded) outcome, pricing);
  }

  /**
   * Only a clean end with the provider's final usage is billed as reported. A clean end without it
   * (Anthropic's {@code message_start} count alone is a lower bound, not a bill) and a cut stream
   * keep the worst case; the word says which ({@code usage_missing}, with the cut's safe class).
   */
  private static Decision streamEnded(UpstreamOutcome.StreamEnded ended, Pricing pricing) {
    StreamOutcome o = ended.outcome();
    if (o.usageSettled()) {
      return priced(ended.usageOf().apply(o.usageDocument().get()), pricing);
    }
    String why = o.errorClass().orElse(o.cleanEnd() ? null : "upstream_cut");
    return Decision.worstCase(why == null ? "usage_missing" : "usage_missing:" + why);
  }

  /**
   * A usage missing or one no real call can have (too many tokens, an overflow) keeps the worst
   * case.
   */
  private static Decision priced(UsageReport usage, Pricing pricing) {
    CostCalculator.Settlement settlement = pricing.price(usage);
    if (settlement instanceof CostCalculator.Settlement.Billed billed) {
      return Decision.atCost(billed.micros());
    }
    return Decision.worstCase(((CostCalculator.Settlement.KeepWorstCase) settlement).errorClass());
  }
}
