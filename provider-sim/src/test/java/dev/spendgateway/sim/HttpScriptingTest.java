package dev.spendgateway.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The {@code /_sim} scripting API, driven the way another process (a load test) would. */
class HttpScriptingTest extends SimulatorPerClass {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @BeforeEach
  void reset() throws Exception {
    assertEquals(200, post("/_sim/reset", "").statusCode());
  }

  private HttpResponse<String> post(String path, String body)
      throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create(sim.baseUrl() + path))
            .header("content-type", "application/json")
            .header("authorization", "Bearer sk-test")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(URI.create(sim.baseUrl() + path)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode json(HttpResponse<String> r) throws IOException {
    return MAPPER.readTree(r.body());
  }

  @Test
  void healthAnswers() throws Exception {
    assertEquals("ok", json(get("/_sim/health")).get("status").asText());
  }

  @Test
  void scriptedFaultsApplyInOrderThenDefaultsReturn() throws Exception {
    HttpResponse<String> scripted =
        post(
            "/_sim/script",
            """
        {"route":"openai.chat","faults":[
          {"kind":"status","status":429,"headers":{"retry-after":"2"}},
          {"kind":"status","status":503,"body":"{\\"error\\":{\\"message\\":\\"down\\",\\"type\\":\\"server_error\\",\\"param\\":null,\\"code\\":null}}"}
        ]}""");
    assertEquals(200, scripted.statusCode(), scripted.body());
    assertEquals(2, json(scripted).get("pending").get("openai.chat").asInt());

    HttpResponse<String> first = post("/v1/chat/completions", "{\"model\":\"m\",\"messages\":[]}");
    assertEquals(429, first.statusCode());
    assertEquals("2", first.headers().firstValue("retry-after").orElseThrow());
    assertTrue(first.headers().firstValue("x-request-id").orElseThrow().startsWith("req_"));
    JsonNode error = json(first).get("error");
    assertEquals("rate_limit_exceeded", error.get("code").asText());
    assertTrue(error.has("message") && error.has("type") && error.has("param"));

    HttpResponse<String> second = post("/v1/chat/completions", "{}");
    assertEquals(503, second.statusCode());
    assertEquals("down", json(second).get("error").get("message").asText());

    assertEquals(200, post("/v1/chat/completions", "{}").statusCode());
  }

  @Test
  void stickyFaultOverHttpRepeatsUntilScriptIsCleared() throws Exception {
    post(
        "/_sim/script",
        "{\"route\":\"anthropic.messages\",\"fault\":{\"kind\":\"overloaded\",\"forever\":true}}");
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> r =
          post("/v1/messages", "{\"model\":\"claude-opus-5-5\",\"max_tokens\":5}");
      assertEquals(529, r.statusCode());
      JsonNode body = json(r);
      assertEquals("error", body.get("type").asText());
      assertEquals("overloaded_error", body.get("error").get("type").asText());
      assertTrue(r.headers().firstValue("request-id").orElseThrow().startsWith("req_"));
    }
    http.send(
        HttpRequest.newBuilder(URI.create(sim.baseUrl() + "/_sim/script")).DELETE().build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, post("/v1/messages", "{}").statusCode());
  }

  @Test
  void gzipFaultCompressesJsonAndStreamsWhateverTheCallerAccepts() throws Exception {
    post(
        "/_sim/script",
        "{\"route\":\"anthropic.messages\",\"fault\":{\"kind\":\"gzip\",\"times\":2}}");
    for (boolean stream : new boolean[] {false, true}) {
      HttpResponse<byte[]> r =
          http.send(
              HttpRequest.newBuilder(URI.create(sim.baseUrl() + "/v1/messages"))
                  .header("content-type", "application/json")
                  .header("accept-encoding", "identity")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"model\":\"claude-opus-5-5\",\"max_tokens\":5,\"stream\":"
                              + stream
                              + "}"))
                  .build(),
              HttpResponse.BodyHandlers.ofByteArray());
      assertEquals(200, r.statusCode());
      assertEquals("gzip", r.headers().firstValue("content-encoding").orElseThrow());
      String text;
      try (java.util.zip.GZIPInputStream in =
          new java.util.zip.GZIPInputStream(new java.io.ByteArrayInputStream(r.body()))) {
        text = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      }
      if (stream) {
        assertTrue(text.contains("event: message_stop"), text);
      } else {
        assertEquals("message", MAPPER.readTree(text).get("type").asText(), text);
      }
    }
    assertEquals(
        "gzip",
        json(get("/_sim/received?route=anthropic.messages&limit=1"))
            .get("calls")
            .get(0)
            .get("fault")
            .asText());
  }

  @Test
  void receivedListsHeadersAndParsedBodies() throws Exception {
    post("/v1/chat/completions", "{\"model\":\"gpt-6.1-sol\",\"store\":false}");
    post("/v1/messages", "{\"model\":\"claude-opus-5-5\"}");

    JsonNode all = json(get("/_sim/received"));
    assertEquals(2, all.get("total").asInt());
    JsonNode chat = json(get("/_sim/received?route=openai.chat&limit=1"));
    assertEquals(1, chat.get("count").asInt());
    JsonNode call = chat.get("calls").get(0);
    assertEquals("openai.chat", call.get("route").asText());
    assertEquals("gpt-6.1-sol", call.get("body").get("model").asText());
    assertFalse(call.get("body").get("store").asBoolean());
    assertEquals("Bearer sk-test", call.get("headers").get("authorization").asText());
    assertEquals("normal", call.get("fault").asText());
  }

  @Test
  void defaultsChangeUsageForLaterCalls() throws Exception {
    HttpResponse<String> set =
        post(
            "/_sim/defaults",
            "{\"usage\":{\"inputTokens\":1000,\"outputTokens\":2,\"cacheReadTokens\":24}}");
    assertEquals(200, set.statusCode(), set.body());

    JsonNode usage = json(post("/v1/chat/completions", "{}")).get("usage");
    assertEquals(1024, usage.get("prompt_tokens").asInt());
    assertEquals(24, usage.get("prompt_tokens_details").get("cached_tokens").asInt());
    assertEquals(2, usage.get("completion_tokens").asInt());

    post("/_sim/reset", "");
    assertEquals(
        25, json(post("/v1/chat/completions", "{}")).get("usage").get("prompt_tokens").asInt());
  }

  @Test
  void badScriptsAreRefusedWithTheFieldNamed() throws Exception {
    HttpResponse<String> noRoute = post("/_sim/script", "{\"fault\":{\"kind\":\"reset\"}}");
    assertEquals(400, noRoute.statusCode());
    assertTrue(json(noRoute).get("error").asText().contains("'route'"));

    HttpResponse<String> badRoute =
        post("/_sim/script", "{\"route\":\"gemini\",\"fault\":{\"kind\":\"reset\"}}");
    assertEquals(400, badRoute.statusCode());
    assertTrue(json(badRoute).get("error").asText().contains("unknown route"));

    // A bad entry in a list adds nothing at all.
    HttpResponse<String> half =
        post(
            "/_sim/script",
            "{\"route\":\"openai.chat\",\"faults\":[{\"kind\":\"reset\"},{\"kind\":\"nope\"}]}");
    assertEquals(400, half.statusCode());
    assertEquals(0, sim.pending(SimRoute.OPENAI_CHAT));

    assertEquals(400, post("/_sim/script", "not json").statusCode());
  }

  @Test
  void connectionResetOverHttpIsAnIoError() throws Exception {
    post("/_sim/script", "{\"route\":\"openai.responses\",\"fault\":{\"kind\":\"reset\"}}");
    // A fresh client so no pooled connection can hide the reset behind a retry.
    HttpClient fresh = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    assertThrows(
        IOException.class,
        () ->
            fresh.send(
                HttpRequest.newBuilder(URI.create(sim.baseUrl() + "/v1/responses"))
                    .POST(HttpRequest.BodyPublishers.ofString("{}"))
                    .build(),
                HttpResponse.BodyHandlers.ofString()));
  }

  @Test
  void invalidJsonRequestBodyGetsTheProviderShaped400() throws Exception {
    HttpResponse<String> r = post("/v1/chat/completions", "{not json");
    assertEquals(400, r.statusCode());
    assertEquals("invalid_request_error", json(r).get("error").get("type").asText());
    assertEquals("invalidRequest", sim.lastReceived(SimRoute.OPENAI_CHAT).orElseThrow().fault());
  }

  @Test
  void unknownPathsAre404InOpenAiShape() throws Exception {
    HttpResponse<String> r = post("/v1/embeddings", "{}");
    assertEquals(404, r.statusCode());
    assertTrue(json(r).get("error").get("message").asText().contains("/v1/embeddings"));
  }

  @Test
  void manyParallelCallsAreAllAnsweredAndRecorded() throws Exception {
    List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      String path = i % 2 == 0 ? "/v1/chat/completions" : "/v1/messages";
      calls.add(
          http.sendAsync(
              HttpRequest.newBuilder(URI.create(sim.baseUrl() + path))
                  .POST(HttpRequest.BodyPublishers.ofString("{\"stream\":" + (i % 3 == 0) + "}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString()));
    }
    for (CompletableFuture<HttpResponse<String>> c : calls) {
      assertEquals(200, c.get().statusCode());
    }
    assertEquals(300, sim.receivedCount());
    assertEquals(150, sim.received(SimRoute.ANTHROPIC_MESSAGES).size());
  }
}
