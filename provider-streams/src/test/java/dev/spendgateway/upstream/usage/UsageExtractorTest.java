package dev.spendgateway.upstream.usage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.Fixtures;
import dev.spendgateway.upstream.sse.SseDecoder;
import dev.spendgateway.upstream.sse.SseEvent;
import dev.spendgateway.upstream.sse.SseLimits;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.Test;

class UsageExtractorTest {

  private static UsageTally replay(ApiKind kind, ByteString body) {
    SseDecoder decoder = new SseDecoder(new SseLimits(1 << 20, 1 << 20));
    List<SseEvent> events = new java.util.ArrayList<>(decoder.feed(body));
    events.addAll(decoder.finish());
    UsageTally tally = UsageTally.empty();
    for (SseEvent event : events) {
      tally = kind.extractor().accept(tally, event);
    }
    return tally;
  }

  private static JsonNode json(String text) {
    return Json.parse(text).orElseThrow();
  }

  @Test
  void anthropicUsageIsMessageStartOverwrittenByTheCumulativeMessageDelta() {
    UsageTally tally = replay(ApiKind.ANTHROPIC_MESSAGES, Fixtures.bytes(Fixtures.ANTHROPIC));
    assertTrue(tally.terminalSeen());
    assertEquals(8, tally.events());
    JsonNode usage = tally.usageDocument().orElseThrow();
    assertEquals(12, usage.get("input_tokens").asLong());
    assertEquals(30, usage.get("output_tokens").asLong(), "cumulative, not 1 + 30");
    assertEquals(0, usage.get("cache_creation").get("ephemeral_5m_input_tokens").asLong());
  }

  @Test
  void anthropicNewerMessageDeltaAlsoUpdatesInputCacheAndWebSearchCounts() {
    UsageTally tally =
        replay(ApiKind.ANTHROPIC_MESSAGES, Fixtures.bytes(Fixtures.ANTHROPIC_WEB_SEARCH));
    JsonNode usage = tally.usageDocument().orElseThrow();
    assertEquals(10682, usage.get("input_tokens").asLong());
    assertEquals(1024, usage.get("cache_read_input_tokens").asLong());
    assertEquals(510, usage.get("output_tokens").asLong());
    assertEquals(2, usage.get("server_tool_use").get("web_search_requests").asLong());
    assertEquals("standard", usage.get("service_tier").asText(), "start-only fields are kept");
  }

  @Test
  void anthropicMergeIgnoresNullsAndMergesNestedObjects() {
    JsonNode merged =
        AnthropicMessagesUsage.merged(
            Optional.of(
                json(
                    "{\"input_tokens\":5,\"server_tool_use\":{\"web_search_requests\":1,\"x\":1}}")),
            json("{\"input_tokens\":null,\"server_tool_use\":{\"web_search_requests\":3}}"));
    assertEquals(
        json("{\"input_tokens\":5,\"server_tool_use\":{\"web_search_requests\":3,\"x\":1}}"),
        merged);
  }

  @Test
  void anthropicStreamCutBeforeMessageStopKeepsPartialUsageButNoTerminal() {
    ByteString cut = Fixtures.until(Fixtures.bytes(Fixtures.ANTHROPIC), "event: message_delta");
    UsageTally tally = replay(ApiKind.ANTHROPIC_MESSAGES, cut);
    assertFalse(tally.terminalSeen());
    assertEquals(1, tally.usageDocument().orElseThrow().get("output_tokens").asLong());
  }

  @Test
  void anthropicUsageIsFinalOnlyOnceMessageDeltaBringsTheOutputCount() {
    assertTrue(replay(ApiKind.ANTHROPIC_MESSAGES, Fixtures.bytes(Fixtures.ANTHROPIC)).usageFinal());
    ByteString cut = Fixtures.until(Fixtures.bytes(Fixtures.ANTHROPIC), "event: message_delta");
    assertFalse(replay(ApiKind.ANTHROPIC_MESSAGES, cut).usageFinal(), "message_start alone");
  }

  @Test
  void anthropicStreamEndingWithoutMessageDeltaUsageKeepsOnlyAPartialUsage() {
    UsageTally tally =
        replay(ApiKind.ANTHROPIC_MESSAGES, withoutDeltaUsage(Fixtures.bytes(Fixtures.ANTHROPIC)));
    assertTrue(tally.terminalSeen(), "it ended cleanly with message_stop");
    assertFalse(tally.usageFinal());
    assertEquals(1, tally.usageDocument().orElseThrow().get("output_tokens").asLong());
  }

  /** The recorded session with its message_delta's usage taken out, as a provider may send it. */
  static ByteString withoutDeltaUsage(ByteString session) {
    return ByteString.fromString(
        session
            .utf8String()
            .replaceAll("(\"type\":\"message_delta\".*?),\"usage\":\\{[^}]*\\}", "$1"));
  }

  @Test
  void openAiChatUsageIsTheFinalUsageChunk() {
    UsageTally tally =
        replay(ApiKind.OPENAI_CHAT_COMPLETIONS, Fixtures.bytes(Fixtures.OPENAI_CHAT));
    assertTrue(tally.terminalSeen());
    assertEquals(
        json(
            "{\"prompt_tokens\":20,\"completion_tokens\":3,\"total_tokens\":23,"
                + "\"prompt_tokens_details\":{\"cached_tokens\":7,\"audio_tokens\":0},"
                + "\"completion_tokens_details\":{\"reasoning_tokens\":0,\"audio_tokens\":0,"
                + "\"accepted_prediction_tokens\":0,\"rejected_prediction_tokens\":0}}"),
        tally.usageDocument().orElseThrow());
  }

  @Test
  void openAiChatWithoutTheUsageChunkReportsNoUsage() {
    String body =
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}],\"usage\":null}\n\n"
            + "data: [DONE]\n\n";
    UsageTally tally = replay(ApiKind.OPENAI_CHAT_COMPLETIONS, ByteString.fromString(body));
    assertTrue(tally.terminalSeen());
    assertTrue(tally.usageDocument().isEmpty());
  }

  @Test
  void openAiResponsesUsageDocumentIsTheCompletedResponseObject() {
    UsageTally tally = replay(ApiKind.OPENAI_RESPONSES, Fixtures.bytes(Fixtures.OPENAI_RESPONSES));
    assertTrue(tally.terminalSeen());
    JsonNode response = tally.usageDocument().orElseThrow();
    assertEquals("completed", response.get("status").asText());
    assertEquals(3, response.get("usage").get("total_tokens").asLong());
    assertEquals("web_search_call", response.get("output").get(0).get("type").asText());
  }

  @Test
  void openAiResponsesIncompleteIsAlsoTerminalAndBilled() {
    String body =
        "event: response.incomplete\ndata: {\"type\":\"response.incomplete\",\"response\":"
            + "{\"status\":\"incomplete\",\"usage\":{\"input_tokens\":4,\"output_tokens\":9}}}\n\n";
    UsageTally tally = replay(ApiKind.OPENAI_RESPONSES, ByteString.fromString(body));
    assertTrue(tally.terminalSeen());
    assertEquals(9, tally.usageDocument().orElseThrow().get("usage").get("output_tokens").asLong());
  }

  @Test
  void openAiResponsesTerminalEventIsFoundByItsDataTypeWhenUnnamed() {
    String body =
        "data: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":1}}}\n\n";
    assertTrue(replay(ApiKind.OPENAI_RESPONSES, ByteString.fromString(body)).terminalSeen());
  }

  @Test
  void unreadableJsonIsCountedAndSkipped() {
    String body = "event: message_start\ndata: {not json\n\nevent: message_stop\ndata: {}\n\n";
    UsageTally tally = replay(ApiKind.ANTHROPIC_MESSAGES, ByteString.fromString(body));
    assertEquals(2, tally.events());
    assertTrue(tally.usageDocument().isEmpty());
  }

  @Test
  void nonStreamedAnswersGiveTheSameDocumentShapes() {
    JsonNode messages = json("{\"id\":\"m\",\"usage\":{\"input_tokens\":3,\"output_tokens\":4}}");
    assertEquals(
        messages.get("usage"),
        ApiKind.ANTHROPIC_MESSAGES.extractor().fromJsonAnswer(messages).orElseThrow());
    JsonNode chat = json("{\"id\":\"c\",\"usage\":{\"prompt_tokens\":3}}");
    assertEquals(
        chat.get("usage"),
        ApiKind.OPENAI_CHAT_COMPLETIONS.extractor().fromJsonAnswer(chat).orElseThrow());
    JsonNode response = json("{\"id\":\"r\",\"usage\":{\"input_tokens\":3}}");
    assertEquals(
        response, ApiKind.OPENAI_RESPONSES.extractor().fromJsonAnswer(response).orElseThrow());
    assertTrue(ApiKind.ANTHROPIC_MESSAGES.extractor().fromJsonAnswer(json("{}")).isEmpty());
  }

  @Test
  void apiKindIsFoundByProviderAndPath() {
    assertEquals(
        Optional.of(ApiKind.ANTHROPIC_MESSAGES), ApiKind.of(Provider.ANTHROPIC, "/v1/messages"));
    assertEquals(
        Optional.of(ApiKind.OPENAI_RESPONSES), ApiKind.of(Provider.OPENAI, "/v1/responses"));
    assertEquals(Optional.empty(), ApiKind.of(Provider.OPENAI, "/v1/messages"));
  }
}
