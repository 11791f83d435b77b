package dev.spendgateway.policy.cost;

import static dev.spendgateway.policy.Fixtures.LIMITS;
import static dev.spendgateway.policy.Fixtures.model;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class WorstCaseEstimatorTest {
  private static final WorstCaseEstimator ESTIMATOR = WorstCaseEstimator.of(LIMITS);

  @ParameterizedTest(
      name = "{0}: {1} bytes, {2} out x {3} choices, {4} searches -> {5} in, {6} out, {7} micros")
  @CsvSource({
    // model,          bytes,   maxOut, n, search, in assumed, out assumed, micros
    "claude-opus-5-5,  3,       1,      1, 0,      1,          1,           25",
    "claude-opus-5-5,  4,       0,      1, 0,      2,          0,           10",
    "claude-opus-5-5,  3000000, 64000,  1, 0,      1000000,    64000,       6280000",
    "claude-opus-5-5,  300,     1000,   1, 8,      32100,      1000,        260500",
    "gpt-6.1-sol,      30,      32000,  1, 0,      10,         32000,       320020",
    "gpt-6.1-sol,      30,      100,    4, 0,      10,         400,         4020",
    "gpt-6.1-sol-mini, 0,       1,      1, 1,      4000,       1,           11602",
  })
  void reservesBodyBytesOverThreeTheWholeOutputAndEverySearch(
      String name,
      long bytes,
      long maxOut,
      int choices,
      int searches,
      long inputAssumed,
      long outputAssumed,
      long micros) {
    WorstCase w = ESTIMATOR.chat(model(name), bytes, maxOut, choices, searches);
    assertEquals(inputAssumed, w.inputTokensAssumed());
    assertEquals(outputAssumed, w.outputTokensAssumed());
    assertEquals(searches, w.webSearchUses());
    assertEquals(micros, w.micros());
    assertEquals(micros, ESTIMATOR.worstCaseMicros(model(name), bytes, maxOut, choices, searches));
  }

  @ParameterizedTest(
      name = "{0} with fetched content: {1} bytes, {2} out, {3} searches -> {4} in, {5} micros")
  @CsvSource({
    // model,          bytes,   maxOut, search, in assumed, micros
    // 200,000 x $5 (Opus cache write, its dearest input) + 1,000 x $20 per million
    "claude-opus-5-5,  229,     1000,   0,      200000,     1020000",
    // the 8 searches' results read back come on top of a full context
    "claude-opus-5-5,  229,     1000,   8,      232000,     1260000",
    // 400,000 x $2 + 32,000 x $10 per million
    "gpt-6.1-sol,      30,      32000,  0,      400000,     1120000",
    // a body estimate above the context window is kept (never reserve less than the bytes say)
    "claude-opus-5-5,  900003,  1,      0,      300001,     1500025",
  })
  void fetchedContentReservesTheWholeContextWindow(
      String name, long bytes, long maxOut, int searches, long inputAssumed, long micros) {
    WorstCase w =
        ESTIMATOR.chat(
            model(name), bytes, UnsizedContent.wholeContextWindow(), maxOut, 1, searches);
    assertEquals(inputAssumed, w.inputTokensAssumed());
    assertEquals(maxOut, w.outputTokensAssumed());
    assertEquals(micros, w.micros());
  }

  @ParameterizedTest(name = "{0}: {1} bytes with {2} inline images -> {3} in, {4} micros")
  @CsvSource({
    // model,          bytes,   images, in assumed, micros
    // 304 bytes (a 1092 x 1092 one-colour PNG in base64) are 102 tokens by bytes; Claude bills
    // about 1,590 for it: each image adds 10,000. (102 + 10,000) x $5 + 1,000 x $20 per million
    "claude-opus-5-5,  304,     1,      10102,      70510",
    "claude-opus-5-5,  608,     2,      20203,      121015",
    // never above the context window: the provider refuses (unbilled) an input that does not fit
    "claude-opus-5-5,  30000,   100,    200000,     1020000",
    // never below the bytes: a large photo's bytes already say more than the allowance would add
    "claude-opus-5-5,  900003,  1,      300001,     1520005",
    // (11 + 10,000) x $2 + 1,000 x $10 per million
    "gpt-6.1-sol,      33,      1,      10011,      30022",
  })
  void inlineImagesAddTheirAllowanceUpToTheContextWindow(
      String name, long bytes, long images, long inputAssumed, long micros) {
    WorstCase w = ESTIMATOR.chat(model(name), bytes, new UnsizedContent(images, false), 1000, 1, 0);
    assertEquals(inputAssumed, w.inputTokensAssumed());
    assertEquals(micros, w.micros());
  }

  @ParameterizedTest(name = "{0} bytes of audio -> {1} s assumed, {2} micros")
  @CsvSource({"0, 0, 0", "1, 1, 100", "1000, 1, 100", "1001, 2, 200", "26214400, 26215, 2621500"})
  void boundsAudioFromFileSizeAtTheLowestBitrate(long bytes, long seconds, long micros) {
    WorstCase w = ESTIMATOR.transcription(model("gpt-6-transcribe"), bytes);
    assertEquals(seconds, w.audioSecondsAssumed());
    assertEquals(micros, w.micros());
  }

  @Test
  void coversOnlyUsageInsideItsAssumptions() {
    WorstCase w = new WorstCase(100, 10, 5, 1, 0);
    assertTrue(w.covers(new TokenUsage(4, 5, 3, 3, 1, 0)));
    assertFalse(w.covers(new TokenUsage(4, 5, 3, 4, 1, 0)));
    assertFalse(w.covers(new TokenUsage(0, 6, 0, 0, 0, 0)));
    assertFalse(w.covers(new TokenUsage(0, 0, 0, 0, 2, 0)));
    assertFalse(w.covers(new TokenUsage(0, 0, 0, 0, 0, 1)));
  }

  @Test
  void impossibleInputsAreRefused() {
    assertThrows(
        IllegalArgumentException.class, () -> ESTIMATOR.chat(model("gpt-6.1-sol"), -1, 1, 1, 0));
    assertThrows(
        IllegalArgumentException.class, () -> ESTIMATOR.chat(model("gpt-6.1-sol"), 1, 1, 0, 0));
    assertThrows(
        IllegalArgumentException.class,
        () -> ESTIMATOR.transcription(model("gpt-6-transcribe"), -1));
    assertThrows(IllegalArgumentException.class, () -> new WorstCase(-1, 0, 0, 0, 0));
    assertThrows(IllegalArgumentException.class, () -> new TokenUsage(-1, 0, 0, 0, 0, 0));
  }
}
