package dev.spendgateway.policy.cost;

import static dev.spendgateway.policy.Fixtures.LIMITS;
import static dev.spendgateway.policy.Fixtures.model;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.spendgateway.policy.cost.CostCalculator.Settlement;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

class CostCalculatorTest {
  private static final CostCalculator COST = CostCalculator.of(LIMITS);

  @ParameterizedTest(
      name =
          "{0}: {1} in, {2} out, {3} cache write, {4} cache read, {5} searches, {6} s -> {7} micros")
  @CsvSource({
    // model,           input,   output,  cw,     cr,     search, audio s, micros
    "gpt-6.1-sol,       1000000, 0,       0,      0,      0,      0,       2000000",
    "gpt-6.1-sol,       0,       1000000, 0,      0,      0,      0,       10000000",
    "gpt-6.1-sol,       1000,    500,     0,      0,      0,      0,       7000",
    "gpt-6.1-sol,       800,     0,       0,      200,    0,      0,       1640",
    "gpt-6.1-sol,       1,       0,       0,      0,      0,      0,       2",
    "gpt-6.1-sol-mini,  1,       0,       0,      0,      0,      0,       1",
    "gpt-6.1-sol-mini,  0,       0,       0,      1,      0,      0,       1",
    "claude-opus-5-5,   1000000, 1000000, 0,      0,      0,      0,       24000000",
    "claude-opus-5-5,   100,     50,      1000,   2000,   0,      0,       7200",
    "claude-opus-5-5,   0,       0,       0,      0,      3,      0,       30000",
    "claude-haiku-5-5,  10,      10,      10,     10,     1,      0,       10074",
    "claude-sonnet-5-5, 0,       0,       0,      0,      0,      0,       0",
    "gpt-6-transcribe,  0,       0,       0,      0,      0,      60,      6000",
    "gpt-6-transcribe,  0,       0,       0,      0,      0,      1,       100",
    "gpt-6-transcribe,  0,       0,       0,      0,      0,      7,       700",
  })
  void chargesEachPartAtItsPriceRoundingUpOnce(
      String name,
      long input,
      long output,
      long cacheWrite,
      long cacheRead,
      long searches,
      long audioSeconds,
      long micros) {
    TokenUsage usage = new TokenUsage(input, output, cacheWrite, cacheRead, searches, audioSeconds);
    assertEquals(micros, COST.actualMicros(model(name), usage));
  }

  @Test
  void aFractionOfAMicroDollarRoundsUpNeverDown() {
    // haiku 10/10/10/10 tokens above = 73.5 micros of tokens, billed as 74 (+ one search)
    // 1 token of haiku cache read = $0.10/M = 0.1 micros -> 1 micro
    assertEquals(1, COST.actualMicros(model("claude-haiku-5-5"), new TokenUsage(0, 0, 0, 1, 0, 0)));
  }

  @Test
  void aNegativeSearchPriceIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new CostCalculator(-1));
  }

  // --- settlement: what a reserved call closes at ------------------------------------------------

  /** A chat call reserved for 1,000 input and 1,000 output tokens. */
  private static final WorstCase CHAT = new WorstCase(12_000, 1_000, 1_000, 0, 0);

  /** A transcription reserved for 60 seconds. */
  private static final WorstCase AUDIO = new WorstCase(6_000, 0, 0, 0, 60);

  private static final long MAX = Long.MAX_VALUE;

  private static Arguments row(
      String sentence, String model, WorstCase worstCase, UsageReport report, Settlement expected) {
    return Arguments.of(sentence, model, worstCase, report, expected);
  }

  private static UsageReport.Reported reported(
      long in, long out, long cacheWrite, long cacheRead, long searches, long seconds) {
    return new UsageReport.Reported(
        new TokenUsage(in, out, cacheWrite, cacheRead, searches, seconds));
  }

  private static Settlement implausible(String reason) {
    return new Settlement.KeepWorstCase("usage_implausible", reason);
  }

  static Stream<Arguments> settlements() {
    return Stream.of(
        row(
            "a usage inside the reservation is billed at its cost",
            "gpt-6.1-sol",
            CHAT,
            reported(1000, 500, 0, 0, 0, 0),
            new Settlement.Billed(7_000)),
        row(
            "more input than reserved, inside the context window, is billed as reported",
            "gpt-6.1-sol",
            CHAT,
            reported(300_000, 1000, 0, 0, 0, 0),
            new Settlement.Billed(610_000)),
        row(
            "input exactly at the context window is billed",
            "gpt-6.1-sol",
            CHAT,
            reported(400_000, 0, 0, 0, 0, 0),
            new Settlement.Billed(800_000)),
        row(
            "output exactly at the output budget is billed",
            "gpt-6.1-sol",
            CHAT,
            reported(0, 1000, 0, 0, 0, 0),
            new Settlement.Billed(10_000)),
        row(
            "input beyond the context window keeps the worst case",
            "gpt-6.1-sol",
            CHAT,
            reported(400_001, 0, 0, 0, 0, 0),
            implausible("input tokens 400001 above the context limit 400000")),
        row(
            "cache reads pushing input beyond the context window keep the worst case",
            "claude-opus-5-5",
            CHAT,
            reported(1, 0, 0, 200_000, 0, 0),
            implausible("input tokens 200001 above the context limit 200000")),
        row(
            "output beyond the output budget keeps the worst case",
            "gpt-6.1-sol",
            CHAT,
            reported(0, 1001, 0, 0, 0, 0),
            implausible("output tokens 1001 above the output budget 1000")),
        row(
            "input counts whose sum overflows keep the worst case",
            "claude-opus-5-5",
            CHAT,
            reported(MAX, 0, MAX, 0, 0, 0),
            implausible("input tokens overflow")),
        row(
            "web searches whose cost overflows keep the worst case",
            "gpt-6.1-sol",
            CHAT,
            reported(0, 0, 0, 0, MAX, 0),
            implausible("the reported usage's cost overflows micro-dollars")),
        row(
            "audio seconds whose cost overflows keep the worst case",
            "gpt-6-transcribe",
            AUDIO,
            reported(0, 0, 0, 0, 0, MAX),
            implausible("the reported usage's cost overflows micro-dollars")),
        row(
            "no usage keeps the worst case",
            "gpt-6.1-sol",
            CHAT,
            new UsageReport.NotReported("answer is not JSON"),
            new Settlement.KeepWorstCase("usage_missing", "answer is not JSON")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("settlements")
  void aCallSettlesAtItsCostOnlyWhenItsUsageCouldBeReal(
      String sentence, String model, WorstCase worstCase, UsageReport report, Settlement expected) {
    assertEquals(expected, COST.settlement(model(model), worstCase, report));
  }
}
