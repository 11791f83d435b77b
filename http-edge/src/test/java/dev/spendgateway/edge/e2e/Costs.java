package dev.spendgateway.edge.e2e;

import dev.spendgateway.sim.Usage;
import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * The expected dollars of a call, computed here from the catalog prices (conf/models.conf, copied
 * as the test's own facts) and the simulator's usage — independently of the product's arithmetic.
 * Rule (policy-rules/README.md, "Cost"): sum tokens × price per million, round up once to the
 * micro-dollar.
 */
final class Costs {
  private static final BigDecimal MILLION = BigDecimal.valueOf(1_000_000);

  /** USD per million tokens: input, output, cache write, cache read. */
  record Price(String input, String output, String cacheWrite, String cacheRead) {
    BigDecimal in() {
      return new BigDecimal(input);
    }

    BigDecimal out() {
      return new BigDecimal(output);
    }

    /** The provider picks which input rate applies, so the worst case uses the dearest. */
    BigDecimal dearestInput() {
      return in().max(new BigDecimal(cacheWrite)).max(new BigDecimal(cacheRead));
    }
  }

  static final Price CLAUDE_OPUS = new Price("4.00", "20.00", "5.00", "0.40");

  /** OpenAI charges no cache write: the catalog defaults it to the input price. */
  static final Price GPT_SOL = new Price("2.00", "10.00", "2.00", "0.20");

  private Costs() {}

  /** What {@code usage} costs on Anthropic (input_tokens excludes cache tokens). */
  static BigDecimal anthropic(Price p, Usage u) {
    BigDecimal sum =
        p.in()
            .multiply(BigDecimal.valueOf(u.inputTokens()))
            .add(p.out().multiply(BigDecimal.valueOf(u.outputTokens())))
            .add(new BigDecimal(p.cacheWrite()).multiply(BigDecimal.valueOf(u.cacheWriteTokens())))
            .add(new BigDecimal(p.cacheRead()).multiply(BigDecimal.valueOf(u.cacheReadTokens())));
    return roundUp(sum.divide(MILLION));
  }

  /**
   * What {@code usage} costs on OpenAI chat (the simulator's inputTokens are the uncached ones).
   */
  static BigDecimal openAi(Price p, Usage u) {
    BigDecimal sum =
        p.in()
            .multiply(BigDecimal.valueOf(u.inputTokens()))
            .add(p.out().multiply(BigDecimal.valueOf(u.outputTokens())))
            .add(new BigDecimal(p.cacheRead()).multiply(BigDecimal.valueOf(u.cacheReadTokens())));
    return roundUp(sum.divide(MILLION));
  }

  /**
   * The reservation: ⌈body bytes / 3⌉ input tokens at the dearest input rate + the output budget.
   */
  static BigDecimal worstCase(Price p, long bodyBytes, long maxOutputTokens) {
    long inputTokens = (bodyBytes + 2) / 3;
    BigDecimal sum =
        p.dearestInput()
            .multiply(BigDecimal.valueOf(inputTokens))
            .add(p.out().multiply(BigDecimal.valueOf(maxOutputTokens)));
    return roundUp(sum.divide(MILLION));
  }

  static BigDecimal roundUp(BigDecimal usd) {
    return usd.setScale(6, RoundingMode.CEILING);
  }

  /** Money equality regardless of scale (0.0200 == 0.02). */
  static boolean same(BigDecimal a, BigDecimal b) {
    return a.compareTo(b) == 0;
  }
}
