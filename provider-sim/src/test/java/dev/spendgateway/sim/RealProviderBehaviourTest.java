package dev.spendgateway.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What real providers do on long calls, as the simulator plays it: a long wait before the response
 * headers, a long silence inside a stream, and an answer that ends cleanly without its final usage.
 * Times are scaled down to fractions of a second; the shapes are the real ones.
 */
class RealProviderBehaviourTest extends SimulatorPerClass {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final String CHAT_STREAM =
      "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"stream_options\":{\"include_usage\":true},"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
  private static final String CHAT_JSON =
      "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
  private static final String MESSAGES_STREAM =
      "{\"model\":\"claude-sonnet-4-5\",\"max_tokens\":64,\"stream\":true,"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @BeforeEach
  void reset() {
    sim.reset();
  }

  /** One SSE line and when it arrived (ms after the request was sent). */
  private record Line(String text, long atMs) {}

  private record Answer(int status, long headersAtMs, List<Line> lines) {
    List<String> dataLines() {
      return lines.stream()
          .map(Line::text)
          .filter(t -> t.startsWith("data: "))
          .map(t -> t.substring(6))
          .toList();
    }

    long arrivalOf(String fragment) {
      return lines.stream()
          .filter(l -> l.text().contains(fragment))
          .findFirst()
          .orElseThrow()
          .atMs();
    }
  }

  private Answer call(String path, String body) throws Exception {
    long start = System.nanoTime();
    HttpResponse<InputStream> r =
        http.send(
            HttpRequest.newBuilder(URI.create(sim.baseUrl() + path))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofInputStream());
    long headersAt = msSince(start);
    List<Line> lines = new ArrayList<>();
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        lines.add(new Line(line, msSince(start)));
      }
    }
    return new Answer(r.statusCode(), headersAt, lines);
  }

  private static long msSince(long startNanos) {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }

  @Test
  void aDelayHoldsBackTheHeadersOfAStreamedAnswer() throws Exception {
    sim.script(SimRoute.OPENAI_CHAT, Fault.delayed(Duration.ofMillis(700)));
    Answer a = call("/v1/chat/completions", CHAT_STREAM);
    assertEquals(200, a.status());
    assertTrue(a.headersAtMs() >= 650, "headers after " + a.headersAtMs() + " ms");
    assertEquals("[DONE]", a.dataLines().get(a.dataLines().size() - 1));
  }

  @Test
  void aDelayHoldsBackTheHeadersOfAJsonAnswer() throws Exception {
    sim.script(SimRoute.OPENAI_CHAT, Fault.delayed(Duration.ofMillis(700)));
    Answer a = call("/v1/chat/completions", CHAT_JSON);
    assertEquals(200, a.status());
    assertTrue(a.headersAtMs() >= 650, "headers after " + a.headersAtMs() + " ms");
  }

  @Test
  void anAnthropicStreamPausesAfterTheFirstContentEventThenSendsTheRest() throws Exception {
    // message_start, content_block_start, ping, then the first text delta: pause after event 4.
    sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.streamPause(4, Duration.ofMillis(800)));
    Answer a = call("/v1/messages", MESSAGES_STREAM);
    long firstDelta = a.arrivalOf("\"text_delta\"");
    long afterPause = a.arrivalOf("content_block_stop");
    long lastDelta =
        a.lines().stream()
            .filter(l -> l.text().contains("text_delta"))
            .mapToLong(Line::atMs)
            .max()
            .orElseThrow();
    assertTrue(a.headersAtMs() < 500, "headers came at once: " + a.headersAtMs());
    assertTrue(lastDelta - firstDelta >= 700, "silence of " + (lastDelta - firstDelta) + " ms");
    assertTrue(afterPause >= lastDelta);
    assertEquals(sim.config().replyText(), anthropicText(a));
    assertTrue(a.lines().stream().anyMatch(l -> l.text().equals("event: message_stop")));
  }

  @Test
  void aChatStreamPausesAfterTheFirstContentChunk() throws Exception {
    // The role chunk, then the first word: pause after event 2.
    sim.script(SimRoute.OPENAI_CHAT, Fault.streamPause(2, Duration.ofMillis(800)));
    Answer a = call("/v1/chat/completions", CHAT_STREAM);
    List<Line> data = a.lines().stream().filter(l -> l.text().startsWith("data: ")).toList();
    assertTrue(
        data.get(2).atMs() - data.get(1).atMs() >= 700,
        "silence of " + (data.get(2).atMs() - data.get(1).atMs()) + " ms");
    assertTrue(data.get(1).atMs() - data.get(0).atMs() < 500, "no pause before the cut point");
    assertEquals("data: [DONE]", data.get(data.size() - 1).text());
    assertTrue(
        a.dataLines().stream().anyMatch(d -> d.contains("\"choices\":[]")),
        "usage chunk still sent");
  }

  @Test
  void aPausedJsonAnswerWaitsBeforeItsHeaders() throws Exception {
    sim.script(SimRoute.OPENAI_CHAT, Fault.streamPause(2, Duration.ofMillis(700)));
    Answer a = call("/v1/chat/completions", CHAT_JSON);
    assertEquals(200, a.status());
    assertTrue(a.headersAtMs() >= 650, "headers after " + a.headersAtMs() + " ms");
  }

  @Test
  void anAnthropicStreamWithoutFinalUsageKeepsMessageStartUsageOnly() throws Exception {
    sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.usageMissing());
    Answer a = call("/v1/messages", MESSAGES_STREAM);
    List<JsonNode> events = json(a.dataLines());
    JsonNode start =
        events.stream()
            .filter(e -> e.path("type").asText().equals("message_start"))
            .findFirst()
            .orElseThrow();
    JsonNode delta =
        events.stream()
            .filter(e -> e.path("type").asText().equals("message_delta"))
            .findFirst()
            .orElseThrow();
    assertEquals(
        sim.defaultUsage().inputTokens(),
        start.path("message").path("usage").path("input_tokens").asLong());
    assertFalse(delta.has("usage"), delta.toString());
    assertEquals("end_turn", delta.path("delta").path("stop_reason").asText());
    assertEquals("message_stop", events.get(events.size() - 1).path("type").asText());
  }

  @Test
  void aChatStreamWithoutUsageEndsWithDoneAndNoUsageChunkAlthoughAsked() throws Exception {
    sim.script(SimRoute.OPENAI_CHAT, Fault.usageMissing());
    Answer a = call("/v1/chat/completions", CHAT_STREAM);
    List<String> data = a.dataLines();
    assertEquals("[DONE]", data.get(data.size() - 1));
    List<JsonNode> chunks = json(data.subList(0, data.size() - 1));
    assertTrue(chunks.stream().noneMatch(c -> c.path("usage").isObject()), "no usage anywhere");
    assertTrue(chunks.stream().allMatch(c -> c.path("choices").size() == 1), "no usage-only chunk");
    assertEquals(
        "stop",
        chunks.get(chunks.size() - 1).path("choices").get(0).path("finish_reason").asText());
  }

  @Test
  void aResponsesStreamWithoutUsageCompletesWithNullUsage() throws Exception {
    sim.script(SimRoute.OPENAI_RESPONSES, Fault.usageMissing());
    Answer a =
        call("/v1/responses", "{\"model\":\"gpt-4o-mini\",\"stream\":true,\"input\":\"hi\"}");
    JsonNode completed =
        json(a.dataLines()).stream()
            .filter(e -> e.path("type").asText().equals("response.completed"))
            .findFirst()
            .orElseThrow();
    assertTrue(completed.path("response").path("usage").isNull(), completed.toString());
  }

  @Test
  void aJsonAnswerWithoutUsageHasNoUsageField() throws Exception {
    sim.script(SimRoute.OPENAI_CHAT, Fault.usageMissing());
    Answer a = call("/v1/chat/completions", CHAT_JSON);
    JsonNode body = MAPPER.readTree(String.join("\n", a.lines().stream().map(Line::text).toList()));
    assertFalse(body.has("usage"), body.toString());
    assertEquals(
        sim.config().replyText(),
        body.path("choices").get(0).path("message").path("content").asText());
  }

  @Test
  void bothAreScriptableOverHttp() throws Exception {
    HttpResponse<String> scripted =
        http.send(
            HttpRequest.newBuilder(URI.create(sim.baseUrl() + "/_sim/script"))
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        """
                {"route":"anthropic.messages","faults":[
                  {"kind":"streamPause","afterEvents":4,"pauseMs":600},
                  {"kind":"usageMissing"}]}"""))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, scripted.statusCode(), scripted.body());

    Answer paused = call("/v1/messages", MESSAGES_STREAM);
    long silence = paused.arrivalOf("content_block_stop") - paused.arrivalOf("\"text_delta\"");
    assertTrue(silence >= 500, "silence of " + silence + " ms");
    Answer missing = call("/v1/messages", MESSAGES_STREAM);
    assertTrue(
        json(missing.dataLines()).stream()
            .filter(e -> e.path("type").asText().equals("message_delta"))
            .noneMatch(e -> e.has("usage")));
    assertEquals(
        List.of("streamPause", "usageMissing"),
        sim.received(SimRoute.ANTHROPIC_MESSAGES).stream().map(ReceivedCall::fault).toList());
  }

  private static String anthropicText(Answer a) throws Exception {
    StringBuilder text = new StringBuilder();
    for (JsonNode e : json(a.dataLines())) {
      if (e.path("delta").path("type").asText().equals("text_delta")) {
        text.append(e.path("delta").path("text").asText());
      }
    }
    return text.toString();
  }

  private static List<JsonNode> json(List<String> data) throws Exception {
    List<JsonNode> out = new ArrayList<>();
    for (String d : data) {
      out.add(MAPPER.readTree(d));
    }
    return out;
  }
}
