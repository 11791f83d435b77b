package dev.spendgateway.policy.cost;

import static dev.spendgateway.policy.Fixtures.LIMITS;
import static dev.spendgateway.policy.Fixtures.model;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CostCalculatorTest {
  private static final CostCalculator COST = CostCalculator.of(LIMITS);

  @ParameterizedTest(name = "{0}: {1} in, {2} out, {3} cache write, {4} cache read, {5} searches, {6} s -> {7} micros")
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
      String name, long input, long output, long cacheWrite, long cacheRead, long searches,
      long audioSeconds, long micros) {
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
}
