package dev.spendgateway.policy.cost;

import static dev.spendgateway.policy.Fixtures.CATALOG;
import static dev.spendgateway.policy.Fixtures.LIMITS;
import static dev.spendgateway.policy.Fixtures.POLICY;
import static dev.spendgateway.policy.Fixtures.TODAY;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.policy.Fixtures;
import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.catalog.ModelKind;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.request.PolicyDecision;
import dev.spendgateway.policy.request.PolicyDecision.Allowed;
import dev.spendgateway.policy.request.TranscriptionDecision.TranscriptionAllowed;
import dev.spendgateway.policy.request.TranscriptionForm;
import dev.spendgateway.policy.request.TranscriptionForm.Part;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

/**
 * Seeded property test (a new seed each run, {@code -Dfuzz.seed=S} replays one): for random allowed
 * requests on every route, no usage the request could produce costs more than its reservation.
 * "Could produce" is the estimate's contract: input (fresh, cache write and cache read together) up
 * to the assumed input tokens, output up to the output budget times the choices, searches up to the
 * allowed uses, audio up to the assumed seconds. Each usage is split at random between fresh input,
 * cache writes and cache reads, and the corners (everything maxed, everything in the dearest
 * bucket) are always tried.
 */
class WorstCasePropertyTest {
  private static final int REQUESTS = 200;
  private static final int USAGES_PER_REQUEST = 50;
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final CostCalculator COST = CostCalculator.of(LIMITS);

  /** A wide alphabet (ASCII, Turkish, CJK, emoji, JSON escapes) so bytes per character vary. */
  private static final int[] ALPHABET = "abc xyz.,çğıöşü漢字🙂\"\\\n".codePoints().toArray();

  private final Random random = new Random(SEED);

  /**
   * One seed per run, printed before the first case and named in any failure, so a failing run can
   * be replayed with {@code -Dfuzz.seed=S}.
   */
  private static final long SEED = Long.getLong("fuzz.seed", System.nanoTime());

  @RegisterExtension
  static final TestExecutionExceptionHandler NAME_THE_SEED =
      (context, failure) -> {
        throw new AssertionError(
            failure.getMessage() + " [seed " + SEED + ": replay with -Dfuzz.seed=" + SEED + "]",
            failure);
      };

  @BeforeAll
  static void printTheSeed() {
    System.out.println(
        "WorstCasePropertyTest: seed " + SEED + " (replay with -Dfuzz.seed=" + SEED + ")");
  }

  @Test
  void anthropicReservationsCoverEveryPossibleUsage() {
    List<String> models = names(Provider.ANTHROPIC);
    for (int i = 0; i < REQUESTS; i++) {
      ObjectNode body = baseBody(pick(models), "max_tokens", 1 + random.nextInt(64_000));
      if (random.nextBoolean()) {
        ObjectNode tool = body.putArray("tools").addObject();
        tool.put("type", "web_search_20250305").put("name", "web_search");
        tool.put("max_uses", 1 + random.nextInt(8));
      }
      checkAllUsages(POLICY.anthropicMessages(body, Fixtures.sizeOf(body), TODAY));
    }
  }

  @Test
  void openAiChatReservationsCoverEveryPossibleUsage() {
    List<String> models = names(Provider.OPENAI);
    for (int i = 0; i < REQUESTS; i++) {
      ObjectNode body =
          random.nextBoolean()
              ? baseBody(pick(models), "max_completion_tokens", 1 + random.nextInt(32_000))
              : baseBody(pick(models), "unused", 0);
      body.remove("unused");
      body.put("n", 1 + random.nextInt(LIMITS.maxChoices()));
      checkAllUsages(POLICY.openAiChatCompletions(body, Fixtures.sizeOf(body), TODAY));
    }
  }

  @Test
  void openAiResponsesReservationsCoverEveryPossibleUsage() {
    List<String> models = names(Provider.OPENAI);
    for (int i = 0; i < REQUESTS; i++) {
      ObjectNode body = NODES.objectNode().put("model", pick(models));
      body.put("input", text(1 + random.nextInt(20_000)));
      body.putArray("tools").addObject().put("type", "web_search");
      if (random.nextBoolean()) {
        body.put("max_tool_calls", 1 + random.nextInt(8));
        body.put("max_output_tokens", 1 + random.nextInt(32_000));
      }
      checkAllUsages(POLICY.openAiResponses(body, Fixtures.sizeOf(body), TODAY));
    }
  }

  @Test
  void transcriptionReservationsCoverEveryPossibleDuration() {
    for (int i = 0; i < REQUESTS; i++) {
      long size = 1 + (long) random.nextInt((int) LIMITS.transcriptionMaxFileBytes());
      TranscriptionAllowed a =
          assertInstanceOf(
              TranscriptionAllowed.class,
              POLICY.openAiTranscription(
                  TranscriptionForm.of(
                      Part.file("file", size), Part.text("model", "gpt-6-transcribe")),
                  TODAY));
      long maxSeconds = a.worstCase().audioSecondsAssumed();
      for (long seconds : new long[] {0, maxSeconds, randomUpTo(maxSeconds)}) {
        long actual = COST.actualMicros(a.modelInfo(), new TokenUsage(0, 0, 0, 0, 0, seconds));
        assertTrue(
            actual <= a.worstCase().micros(), "audio " + seconds + "s over " + a.worstCase());
      }
    }
  }

  private void checkAllUsages(PolicyDecision decision) {
    Allowed allowed = assertInstanceOf(Allowed.class, decision, decision.toString());
    WorstCase w = allowed.worstCase();
    ModelInfo model = allowed.modelInfo();
    checkOne(
        model,
        w,
        new TokenUsage(
            w.inputTokensAssumed(), w.outputTokensAssumed(), 0, 0, w.webSearchUses(), 0));
    checkOne(
        model,
        w,
        new TokenUsage(
            0, w.outputTokensAssumed(), w.inputTokensAssumed(), 0, w.webSearchUses(), 0));
    checkOne(
        model,
        w,
        new TokenUsage(
            0, w.outputTokensAssumed(), 0, w.inputTokensAssumed(), w.webSearchUses(), 0));
    for (int i = 0; i < USAGES_PER_REQUEST; i++) {
      long input = randomUpTo(w.inputTokensAssumed());
      long cacheWrite = randomUpTo(w.inputTokensAssumed() - input);
      long cacheRead = randomUpTo(w.inputTokensAssumed() - input - cacheWrite);
      checkOne(
          model,
          w,
          new TokenUsage(
              input,
              randomUpTo(w.outputTokensAssumed()),
              cacheWrite,
              cacheRead,
              randomUpTo(w.webSearchUses()),
              0));
    }
  }

  private static void checkOne(ModelInfo model, WorstCase w, TokenUsage usage) {
    assertTrue(w.covers(usage));
    long actual = COST.actualMicros(model, usage);
    assertTrue(actual <= w.micros(), model.name() + " " + usage + " costs " + actual + " > " + w);
  }

  private ObjectNode baseBody(String model, String limitField, long limit) {
    ObjectNode body = NODES.objectNode().put("model", model).put(limitField, limit);
    ArrayNode messages = body.putArray("messages");
    int count = 1 + random.nextInt(LIMITS.maxMessages());
    for (int i = 0; i < count; i++) {
      messages
          .addObject()
          .put("role", i % 2 == 0 ? "user" : "assistant")
          .put("content", text(random.nextInt(2_000)));
    }
    return body;
  }

  private String text(int length) {
    StringBuilder b = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      b.appendCodePoint(ALPHABET[random.nextInt(ALPHABET.length)]);
    }
    return b.toString();
  }

  private long randomUpTo(long max) {
    return max <= 0 ? 0 : Math.floorMod(random.nextLong(), max + 1);
  }

  private String pick(List<String> names) {
    return names.get(random.nextInt(names.size()));
  }

  private static List<String> names(Provider provider) {
    return CATALOG.namesFor(provider, ModelKind.CHAT, TODAY);
  }
}
