package dev.spendgateway.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Many streams held open at once, scripted over HTTP as a load test does: each stops after its
 * first events until {@code /_sim/release}; {@code /_sim/streams} counts them open, at the peak and
 * finished.
 */
class HeldStreamsTest {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final int STREAMS = 200;

  @Test
  void streams_stay_open_until_released_and_are_counted() throws Exception {
    try (ProviderSimulator sim = ProviderSimulator.start(SimConfig.defaults())) {
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      HttpResponse<String> scripted =
          post(
              http,
              sim,
              "/_sim/script",
              "{\"route\":\"openai.chat\",\"fault\":{\"kind\":\"streamHold\",\"afterEvents\":2,\"forever\":true}}");
      assertEquals(200, scripted.statusCode(), scripted.body());

      List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
      for (int i = 0; i < STREAMS; i++) {
        calls.add(
            http.sendAsync(
                request(
                    sim,
                    "/v1/chat/completions",
                    "{\"model\":\"m\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"),
                HttpResponse.BodyHandlers.ofString()));
      }
      Eventually.until(
          "all " + STREAMS + " streams are held",
          Duration.ofSeconds(30),
          () -> streams(http, sim),
          counts -> counts.get("held").asInt() >= STREAMS);
      // Time is the point: none may finish while held, a non-event watched over a short window.
      Thread.sleep(200);
      JsonNode held = streams(http, sim);
      assertEquals(STREAMS, held.get("open").asInt(), held.toString());
      assertEquals(STREAMS, held.get("held").asInt(), held.toString());
      assertEquals(0, held.get("finished").asInt(), "none may finish before the release: " + held);
      assertTrue(calls.stream().noneMatch(CompletableFuture::isDone));

      assertEquals(200, post(http, sim, "/_sim/release", "").statusCode());
      for (CompletableFuture<HttpResponse<String>> call : calls) {
        assertTrue(call.get(30, TimeUnit.SECONDS).body().stripTrailing().endsWith("data: [DONE]"));
      }
      JsonNode after = streams(http, sim);
      assertEquals(0, after.get("open").asInt(), after.toString());
      assertEquals(0, after.get("held").asInt(), after.toString());
      assertEquals(STREAMS, after.get("peak").asInt(), after.toString());
      assertEquals(STREAMS, after.get("finished").asInt(), after.toString());
    }
  }

  @Test
  void a_hold_ends_by_itself_after_its_maximum() throws Exception {
    try (ProviderSimulator sim = ProviderSimulator.start(SimConfig.defaults())) {
      sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.streamHold(4, Duration.ofMillis(300)));
      HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
      HttpResponse<String> r =
          http.send(
              request(
                  sim,
                  "/v1/messages",
                  "{\"model\":\"m\",\"max_tokens\":8,\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"),
              HttpResponse.BodyHandlers.ofString());
      assertTrue(r.body().contains("event: message_stop"), r.body());
      // The simulator counts the stream finished as its side ends, which can be just after the
      // client has read the last byte: wait for the count rather than race it.
      Eventually.until(
          "the simulator counts the stream finished",
          Duration.ofSeconds(10),
          () -> sim.finishedStreams() >= 1);
      assertEquals(1, sim.finishedStreams());
    }
  }

  private static HttpRequest request(ProviderSimulator sim, String path, String body) {
    return HttpRequest.newBuilder(URI.create(sim.baseUrl() + path))
        .timeout(Duration.ofSeconds(60))
        .header("content-type", "application/json")
        .header("authorization", "Bearer sk-test")
        .header("x-api-key", "sk-test")
        .POST(HttpRequest.BodyPublishers.ofString(body))
        .build();
  }

  private static HttpResponse<String> post(
      HttpClient http, ProviderSimulator sim, String path, String body) throws Exception {
    return http.send(request(sim, path, body), HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode streams(HttpClient http, ProviderSimulator sim) throws Exception {
    return MAPPER.readTree(
        http.send(
                HttpRequest.newBuilder(URI.create(sim.baseUrl() + "/_sim/streams")).GET().build(),
                HttpResponse.BodyHandlers.ofString())
            .body());
  }
}
