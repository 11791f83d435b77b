package dev.spendgateway.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The media provider's video job API as the simulator serves it, over HTTP. */
class MediaApiTest extends SimulatorPerClass {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final String VIDEO =
      "{\"model\":\"sora-2\",\"prompt\":\"a cat\",\"seconds\":\"8\",\"size\":\"720x1280\"}";
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  @BeforeEach
  void reset() {
    sim.reset();
  }

  private HttpResponse<String> send(String method, String path, String body, String key)
      throws IOException, InterruptedException {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(sim.baseUrl() + path))
            .header("content-type", "application/json")
            .header("authorization", "Bearer " + key)
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body));
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static JsonNode json(HttpResponse<String> r) throws IOException {
    return MAPPER.readTree(r.body());
  }

  private JsonNode waitForEnd(String id, String key) throws Exception {
    Instant deadline = Instant.now().plusSeconds(10);
    while (Instant.now().isBefore(deadline)) {
      JsonNode job = json(send("GET", "/v1/videos/" + id, null, key));
      String status = job.get("status").asText();
      if (status.equals("completed") || status.equals("failed")) {
        return job;
      }
      Thread.onSpinWait();
    }
    throw new AssertionError("job " + id + " did not end");
  }

  @Test
  void aJobQueuesRunsCompletesAndItsContentStreams() throws Exception {
    sim.setMedia(Duration.ofMillis(100), Duration.ofMillis(200), false, 5, 100_000);
    HttpResponse<String> created = send("POST", "/v1/videos", VIDEO, "k1");
    assertEquals(200, created.statusCode());
    JsonNode job = json(created);
    assertEquals("video", job.get("object").asText());
    assertEquals("queued", job.get("status").asText());
    assertEquals("8", job.get("seconds").asText());
    assertEquals("720x1280", job.get("size").asText());
    String id = job.get("id").asText();

    JsonNode done = waitForEnd(id, "k1");
    assertEquals("completed", done.get("status").asText());
    assertEquals(100, done.get("progress").asInt());

    HttpResponse<byte[]> content =
        http.send(
            HttpRequest.newBuilder(URI.create(sim.baseUrl() + "/v1/videos/" + id + "/content"))
                .header("authorization", "Bearer k1")
                .build(),
            HttpResponse.BodyHandlers.ofByteArray());
    assertEquals(200, content.statusCode());
    assertEquals(100_000, content.body().length);
    assertEquals("video/mp4", content.headers().firstValue("content-type").orElse(""));
  }

  @Test
  void aFailedJobEndsFailedWithAnError() throws Exception {
    sim.setMedia(Duration.ZERO, Duration.ofMillis(50), true, 5, 10);
    String id = json(send("POST", "/v1/videos", VIDEO, "k1")).get("id").asText();
    JsonNode done = waitForEnd(id, "k1");
    assertEquals("failed", done.get("status").asText());
    assertTrue(done.get("error").has("message"));
    assertEquals(400, send("GET", "/v1/videos/" + id + "/content", null, "k1").statusCode());
  }

  @Test
  void aSixthUnfinishedJobOnOneAccountIs429WithRetryAfter() throws Exception {
    sim.setMedia(Duration.ofMinutes(1), Duration.ofMinutes(1), false, 5, 10);
    for (int i = 0; i < 5; i++) {
      assertEquals(200, send("POST", "/v1/videos", VIDEO, "k1").statusCode());
    }
    HttpResponse<String> sixth = send("POST", "/v1/videos", VIDEO, "k1");
    assertEquals(429, sixth.statusCode());
    assertTrue(sixth.headers().firstValue("retry-after").isPresent());
    assertEquals("rate_limit_exceeded", json(sixth).path("error").path("code").asText());
    // Another account has its own five.
    assertEquals(200, send("POST", "/v1/videos", VIDEO, "k2").statusCode());
    assertEquals(5, sim.mediaJobsUnfinished("k1"));
    assertEquals(6, sim.mediaJobsCreated());
    assertEquals(1, sim.mediaJobsRefused());
  }

  @Test
  void finishingTheJobsEndsEveryUnfinishedOneAsItsSettingsSaid() throws Exception {
    sim.setMedia(Duration.ofMinutes(10), Duration.ofMinutes(10), false, 5, 10);
    String queued = json(send("POST", "/v1/videos", VIDEO, "k1")).get("id").asText();
    sim.setMedia(Duration.ZERO, Duration.ofMinutes(10), true, 5, 10);
    String running = json(send("POST", "/v1/videos", VIDEO, "k1")).get("id").asText();
    assertEquals(2, sim.mediaJobsUnfinished("k1"));

    assertEquals(2, sim.finishMediaJobs());

    JsonNode completed = json(send("GET", "/v1/videos/" + queued, null, "k1"));
    assertEquals("completed", completed.get("status").asText());
    assertEquals(100, completed.get("progress").asInt());
    assertEquals(
        "failed", json(send("GET", "/v1/videos/" + running, null, "k1")).get("status").asText());
    assertEquals(0, sim.mediaJobsUnfinished("k1"));
    assertEquals(0, sim.finishMediaJobs(), "nothing left to end");
  }

  @Test
  void jobsOfAnotherAccountAndUnknownIdsAre404AndDeleteForgetsAJob() throws Exception {
    String id = json(send("POST", "/v1/videos", VIDEO, "k1")).get("id").asText();
    assertEquals(404, send("GET", "/v1/videos/" + id, null, "k2").statusCode());
    assertEquals(404, send("GET", "/v1/videos/video_nope", null, "k1").statusCode());
    HttpResponse<String> deleted = send("DELETE", "/v1/videos/" + id, null, "k1");
    assertEquals(200, deleted.statusCode());
    assertTrue(json(deleted).get("deleted").asBoolean());
    assertEquals(404, send("GET", "/v1/videos/" + id, null, "k1").statusCode());
  }

  @Test
  void aNumberOfSecondsIsEchoedAsAString() throws Exception {
    JsonNode job =
        json(
            send(
                "POST",
                "/v1/videos",
                "{\"model\":\"sora-2\",\"prompt\":\"x\",\"seconds\":4}",
                "k1"));
    assertEquals("4", job.get("seconds").asText());
    assertTrue(job.get("seconds").isTextual());
  }

  @Test
  void scriptedFaultsAndSettingsWorkOverTheAdminApi() throws Exception {
    HttpResponse<String> scripted =
        send(
            "POST",
            "/_sim/script",
            "{\"route\":\"media.create\",\"fault\":{\"kind\":\"rateLimited\",\"retryAfter\":7}}",
            "k1");
    assertEquals(200, scripted.statusCode());
    HttpResponse<String> limited = send("POST", "/v1/videos", VIDEO, "k1");
    assertEquals(429, limited.statusCode());
    assertEquals("7", limited.headers().firstValue("retry-after").orElse(""));
    assertEquals(0, sim.mediaJobsCreated(), "a scripted 429 creates no job");

    HttpResponse<String> set =
        send("POST", "/_sim/media", "{\"maxConcurrent\":1,\"queueMs\":60000}", "k1");
    assertEquals(1, json(set).get("maxConcurrent").asInt());
    assertEquals(200, send("POST", "/v1/videos", VIDEO, "k1").statusCode());
    assertEquals(429, send("POST", "/v1/videos", VIDEO, "k1").statusCode());
    assertEquals(1, json(send("GET", "/_sim/media", null, "k1")).get("refused").asInt());
  }
}
