package dev.spendgateway.upstream.translate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.policy.cost.TokenUsage;
import dev.spendgateway.policy.cost.UsageReport;
import dev.spendgateway.upstream.sse.SseDecoder;
import dev.spendgateway.upstream.sse.SseEvent;
import dev.spendgateway.upstream.sse.SseLimits;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AnthropicSseToChatChunksTest {
  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = ActorTestKit.create();
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /** The recorded session replayed event by event through the pure method. */
  private static List<String> replay(String fixture, AnthropicSseToChatChunks translator) {
    SseDecoder parser =
        new SseDecoder(new SseLimits(AnthropicSseToChatChunks.DEFAULT_MAX_LINE_BYTES, 1 << 20));
    List<String> out = new ArrayList<>();
    for (SseEvent e :
        parser.feed(ByteString.fromString(Json.resource(fixture), StandardCharsets.UTF_8))) {
      out.addAll(translator.onEvent(e.type(), e.data()));
    }
    out.addAll(translator.onUpstreamEnd());
    return out;
  }

  @ParameterizedTest(name = "{0}: text {1}, finish {2}, usage {3}/{4}/{5} cached")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          anthropic-text-stream.sse               | 'Olá! \\n\\n(That''s "hi" in Portuguese!)' | stop           | 120 | 21 | 100
          anthropic-max-tokens-crlf-stream.sse    | Once upon a time                         | length         | 25  | 4  | 0
          anthropic-thinking-stream.sse           | 42                                       | stop           | 40  | 30 | 0
          anthropic-refusal-stream.sse            | I can't help                             | content_filter | 30  | 6  | 0
          """)
  void completeSessionsBecomeValidOpenAiChunks(
      String fixture, String text, String finish, long prompt, long completion, long cached) {
    AnthropicSseToChatChunks translator =
        new AnthropicSseToChatChunks("fast-summary", 1_790_000_000L);
    List<String> payloads = replay(fixture, translator);

    assertEquals(AnthropicSseToChatChunks.DONE, payloads.get(payloads.size() - 1));
    List<JsonNode> chunks =
        payloads.subList(0, payloads.size() - 1).stream().map(Json::parse).toList();
    chunks.forEach(AnthropicSseToChatChunksTest::assertValidChunk);

    JsonNode first = chunks.get(0).path("choices").get(0);
    assertEquals("assistant", first.path("delta").path("role").asText());

    StringBuilder content = new StringBuilder();
    List<String> finishReasons = new ArrayList<>();
    for (JsonNode chunk : chunks) {
      for (JsonNode choice : chunk.path("choices")) {
        content.append(choice.path("delta").path("content").asText(""));
        if (!choice.path("finish_reason").isNull()) {
          finishReasons.add(choice.path("finish_reason").asText());
        }
      }
    }
    assertEquals(text.replace("\\n", "\n"), content.toString());
    assertEquals(List.of(finish), finishReasons);

    JsonNode usageChunk = chunks.get(chunks.size() - 1);
    assertEquals(0, usageChunk.path("choices").size());
    assertEquals(prompt, usageChunk.path("usage").path("prompt_tokens").asLong());
    assertEquals(completion, usageChunk.path("usage").path("completion_tokens").asLong());
    assertEquals(prompt + completion, usageChunk.path("usage").path("total_tokens").asLong());
    assertEquals(
        cached,
        usageChunk.path("usage").path("prompt_tokens_details").path("cached_tokens").asLong());
    assertTrue(translator.isComplete());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "anthropic-text-stream.sse",
    "anthropic-max-tokens-crlf-stream.sse",
    "anthropic-thinking-stream.sse"
  })
  void aCallerThatDidNotAskForUsageGetsNoUsageChunkButTheUsageIsStillCounted(String fixture)
      throws Exception {
    AnthropicSseToChatChunks translator = new AnthropicSseToChatChunks("p", 7, false);
    List<String> payloads = replay(fixture, translator);
    List<String> asked = replay(fixture, new AnthropicSseToChatChunks("p", 7, true));

    assertEquals(asked.size() - 1, payloads.size());
    assertEquals(AnthropicSseToChatChunks.DONE, payloads.get(payloads.size() - 1));
    for (String payload : payloads.subList(0, payloads.size() - 1)) {
      assertEquals(1, Json.parse(payload).path("choices").size(), payload);
    }
    assertInstanceOf(UsageReport.Reported.class, translator.usage());
    assertTrue(translator.isComplete());

    List<ByteString> flowed =
        Source.from(pieces(fixture, 5))
            .via(AnthropicSseToChatChunks.flow("p", 7, false))
            .runWith(org.apache.pekko.stream.javadsl.Sink.seq(), testKit.system())
            .toCompletableFuture()
            .get(10, java.util.concurrent.TimeUnit.SECONDS);
    assertEquals(payloads.stream().map(AnthropicSseToChatChunks::frame).toList(), flowed);
  }

  @Test
  void usageIsReadWithThePolicyRulesParser() {
    AnthropicSseToChatChunks translator = new AnthropicSseToChatChunks("p", 0);
    replay("anthropic-text-stream.sse", translator);
    assertEquals(
        new UsageReport.Reported(new TokenUsage(16, 21, 4, 100, 0, 0)), translator.usage());
  }

  @ParameterizedTest(name = "{0} ends with error type {1} and no [DONE]")
  @CsvSource(
      textBlock =
          """
          anthropic-overloaded-stream.sse, overloaded_error
          anthropic-cut-stream.sse,        upstream_cut
          """)
  void brokenSessionsEndWithAnErrorPayload(String fixture, String errorType) {
    AnthropicSseToChatChunks translator = new AnthropicSseToChatChunks("p", 0);
    List<String> payloads = replay(fixture, translator);

    assertFalse(payloads.contains(AnthropicSseToChatChunks.DONE));
    JsonNode last = Json.parse(payloads.get(payloads.size() - 1));
    assertEquals(errorType, last.path("error").path("type").asText());
    payloads.subList(0, payloads.size() - 1).stream()
        .map(Json::parse)
        .forEach(AnthropicSseToChatChunksTest::assertValidChunk);
    assertTrue(translator.isFinished());
    assertFalse(translator.isComplete());
    assertInstanceOf(
        UsageReport.NotReported.class, translator.usage(), "a cut stream keeps its worst case");
  }

  @Test
  void eventsAfterTheEndAreIgnored() {
    AnthropicSseToChatChunks translator = new AnthropicSseToChatChunks("p", 0);
    replay("anthropic-text-stream.sse", translator);
    assertEquals(List.of(), translator.onEvent("message_stop", "{\"type\":\"message_stop\"}"));
    assertEquals(List.of(), translator.onUpstreamEnd());
  }

  @Test
  void unreadableDataEndsTheStreamWithAnError() {
    AnthropicSseToChatChunks translator = new AnthropicSseToChatChunks("p", 0);
    List<String> out = translator.onEvent("content_block_delta", "{not json");
    assertEquals("upstream_unreadable", Json.parse(out.get(0)).path("error").path("type").asText());
  }

  @ParameterizedTest(
      name = "fixture {0} in {1}-byte pieces gives the same frames as the pure method")
  @CsvSource(
      textBlock =
          """
          anthropic-text-stream.sse,            1
          anthropic-text-stream.sse,            7
          anthropic-max-tokens-crlf-stream.sse, 1
          anthropic-max-tokens-crlf-stream.sse, 13
          anthropic-thinking-stream.sse,        4096
          anthropic-cut-stream.sse,             5
          """)
  void flowMatchesThePureTranslatorWhateverTheChunking(String fixture, int pieceSize)
      throws Exception {
    List<ByteString> expected =
        replay(fixture, new AnthropicSseToChatChunks("p", 7)).stream()
            .map(AnthropicSseToChatChunks::frame)
            .toList();

    List<ByteString> actual = runFlow(pieces(fixture, pieceSize), Source.empty());

    assertEquals(expected, actual);
  }

  @Test
  void anUpstreamFailureBecomesTheCutErrorFrameAndTheFlowCompletes() throws Exception {
    List<ByteString> actual =
        runFlow(
            pieces("anthropic-cut-stream.sse", 64),
            Source.failed(new RuntimeException("connection reset")));
    String last = actual.get(actual.size() - 1).utf8String();
    assertTrue(last.startsWith("data: {\"error\""), last);
    assertTrue(last.endsWith("\n\n"));
    assertEquals(
        "upstream_cut", Json.parse(last.substring(6).trim()).path("error").path("type").asText());
  }

  @Test
  void anOversizedLineEndsTheStreamWithAnError() throws Exception {
    String huge = "event: content_block_delta\ndata: " + "x".repeat(200) + "\n\n";
    List<ByteString> out =
        Source.single(ByteString.fromString(huge))
            .via(AnthropicSseToChatChunks.flow("p", 0, 64))
            .runWith(Sink.seq(), testKit.system())
            .toCompletableFuture()
            .get(5, TimeUnit.SECONDS);
    assertEquals(1, out.size());
    assertEquals(
        "upstream_unreadable",
        Json.parse(out.get(0).utf8String().substring(6).trim())
            .path("error")
            .path("type")
            .asText());
  }

  private static List<ByteString> pieces(String fixture, int size) {
    byte[] bytes = Json.resource(fixture).getBytes(StandardCharsets.UTF_8);
    List<ByteString> pieces = new ArrayList<>();
    for (int i = 0; i < bytes.length; i += size) {
      pieces.add(ByteString.fromArray(bytes, i, Math.min(size, bytes.length - i)));
    }
    return pieces;
  }

  private static List<ByteString> runFlow(List<ByteString> pieces, Source<ByteString, ?> tail)
      throws Exception {
    return Source.from(pieces)
        .concat(tail)
        .via(AnthropicSseToChatChunks.flow("p", 7))
        .runWith(Sink.seq(), testKit.system())
        .toCompletableFuture()
        .get(Duration.ofSeconds(5).toMillis(), TimeUnit.MILLISECONDS);
  }

  private static void assertValidChunk(JsonNode chunk) {
    assertEquals("chat.completion.chunk", chunk.path("object").asText(), chunk.toString());
    assertTrue(chunk.path("id").asText().startsWith("chatcmpl-"), chunk.toString());
    assertTrue(chunk.path("created").canConvertToLong(), chunk.toString());
    assertNotEquals("", chunk.path("model").asText(), chunk.toString());
    assertTrue(chunk.path("choices").isArray(), chunk.toString());
    for (JsonNode choice : chunk.path("choices")) {
      assertEquals(0, choice.path("index").asInt(-1));
      assertTrue(choice.path("delta").isObject(), chunk.toString());
      assertTrue(choice.has("finish_reason"), chunk.toString());
    }
  }
}
