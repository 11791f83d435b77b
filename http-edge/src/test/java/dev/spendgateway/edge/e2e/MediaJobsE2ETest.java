package dev.spendgateway.edge.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.ReceivedCall;
import dev.spendgateway.sim.SimRoute;
import java.math.BigDecimal;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A video workflow through the gateway with no key of its own: submit, poll, download; the job's
 * worst case reserved first and settled at its billed seconds when it completes ($0 when it fails);
 * an idempotency key that never submits twice; the provider's 429 passed through.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MediaJobsE2ETest {
  static final String MEDIA_KEY = "sk-media-e2e-key-J7r2";
  static final String VIDEOS = "/media/v1/videos";
  static final String CLIP =
      "{\"model\":\"sora-2\",\"prompt\":\"a cat on a skateboard\",\"seconds\":\"8\",\"size\":\"720x1280\"}";

  private TestGateway gw;

  @BeforeAll
  void start() throws Exception {
    gw = E2eGateway.start("media");
  }

  @AfterAll
  void stop() throws Exception {
    gw.close();
  }

  @BeforeEach
  void reset() {
    gw.sim.reset();
    gw.sim.clearReceived();
    gw.sim.setMedia(Duration.ofMillis(100), Duration.ofMillis(300), false, 5, 200_000);
  }

  private HttpResponse<String> submit(Brand brand, String body, String key) throws Exception {
    HttpRequest.Builder b = gw.postJson(VIDEOS, body, brand);
    if (key != null) {
      b.header("idempotency-key", key);
    }
    return gw.send(b.build());
  }

  private HttpRequest.Builder authed(String path) {
    return gw.get(path).header("authorization", "Bearer " + E2eGateway.TOKEN);
  }

  private JsonNode awaitStatus(String id, String status) throws Exception {
    return Eventually.until(
        "job " + id + " reaches " + status,
        Duration.ofSeconds(15),
        () -> {
          HttpResponse<String> r = gw.send(authed(VIDEOS + "/" + id).build());
          assertEquals(200, r.statusCode(), r.body());
          return TestGateway.JSON.readTree(r.body());
        },
        job -> job.get("status").asText().equals(status));
  }

  private static BigDecimal spent(JsonNode usage) {
    return TestGateway.money(TestGateway.cap(usage, "brand_daily"), "spentUsd");
  }

  private static BigDecimal reserved(JsonNode usage) {
    return TestGateway.money(TestGateway.cap(usage, "brand_daily"), "reservedUsd");
  }

  @Test
  void aClipIsReservedThenSettledAtItsBilledSecondsAndDownloadedWithoutAKey() throws Exception {
    Brand brand = Brand.fresh("media");
    HttpResponse<String> created = submit(brand, CLIP, null);
    assertEquals(200, created.statusCode(), created.body());
    JsonNode job = TestGateway.JSON.readTree(created.body());
    assertEquals("video", job.get("object").asText());
    String id = job.get("id").asText();
    assertTrue(created.headers().firstValue("x-request-id").isPresent());
    // 8 s x $0.10 held before the provider was asked.
    assertEquals(0, new BigDecimal("0.80").compareTo(reserved(gw.usage(brand.id()))));

    // The poller settles it without anyone asking.
    JsonNode usage = gw.awaitSettled(brand.id());
    assertEquals(0, new BigDecimal("0.80").compareTo(spent(usage)));
    assertEquals(0, BigDecimal.ZERO.compareTo(reserved(usage)));
    // The job's reservation is journaled with its model and the media provider.
    assertEquals(
        List.of(brand.id() + ",sora-2,media,1,0.800000,0,0.000000,0"),
        E2eGateway.reportCsv(gw, "brand,model,provider").stream()
            .filter(l -> l.startsWith(brand.id() + ","))
            .toList());

    JsonNode done = awaitStatus(id, "completed");
    assertEquals(id, done.get("id").asText());
    HttpResponse<byte[]> content =
        gw.http.send(
            authed(VIDEOS + "/" + id + "/content").build(),
            HttpResponse.BodyHandlers.ofByteArray());
    assertEquals(200, content.statusCode());
    assertEquals(200_000, content.body().length);

    // The provider saw the media key, never the gateway token or another provider's key.
    List<ReceivedCall> calls = gw.sim.received(SimRoute.MEDIA_CREATE);
    assertEquals(1, calls.size());
    assertEquals("Bearer " + MEDIA_KEY, calls.get(0).headers().get("authorization"));
    for (ReceivedCall c : gw.sim.received()) {
      assertFalse(c.headers().toString().contains(E2eGateway.TOKEN));
      assertFalse(c.headers().containsKey("x-spend-brand"));
    }
    // A second GET of the finished job changes nothing.
    awaitStatus(id, "completed");
    assertEquals(0, new BigDecimal("0.80").compareTo(spent(gw.usage(brand.id()))));
  }

  @Test
  void aFailedJobIsSettledAtZero() throws Exception {
    gw.sim.setMedia(Duration.ZERO, Duration.ofMillis(100), true, 5, 10);
    Brand brand = Brand.fresh("media-fail");
    assertEquals(200, submit(brand, CLIP, null).statusCode());
    JsonNode usage = gw.awaitSettled(brand.id());
    assertEquals(0, BigDecimal.ZERO.compareTo(spent(usage)));
  }

  @Test
  void theSameIdempotencyKeyAnswersTheSameJobAndNeverSubmitsTwice() throws Exception {
    gw.sim.setMedia(Duration.ofSeconds(1), Duration.ofMillis(300), false, 5, 10);
    Brand brand = Brand.fresh("media-key");
    HttpResponse<String> first = submit(brand, CLIP, "clip-3");
    HttpResponse<String> again = submit(brand, CLIP, "clip-3");
    assertEquals(200, first.statusCode(), first.body());
    assertEquals(200, again.statusCode(), again.body());
    assertEquals(
        TestGateway.JSON.readTree(first.body()).get("id").asText(),
        TestGateway.JSON.readTree(again.body()).get("id").asText());
    assertEquals(1, gw.sim.received(SimRoute.MEDIA_CREATE).size());
    assertEquals(0, new BigDecimal("0.80").compareTo(reserved(gw.usage(brand.id()))));
    // Another key is another job.
    HttpResponse<String> other = submit(brand, CLIP, "clip-4");
    assertNotEquals(
        TestGateway.JSON.readTree(first.body()).get("id").asText(),
        TestGateway.JSON.readTree(other.body()).get("id").asText());
    JsonNode usage = gw.awaitSettled(brand.id());
    assertEquals(0, new BigDecimal("1.60").compareTo(spent(usage)));
    // Once the job ended its key answers the same, finished job, and it is not submitted again:
    // paid once, however often a resumed workflow repeats it.
    for (int i = 0; i < 2; i++) {
      HttpResponse<String> late = submit(brand, CLIP, "clip-3");
      assertEquals(200, late.statusCode(), late.body());
      JsonNode job = TestGateway.JSON.readTree(late.body());
      assertEquals(
          TestGateway.JSON.readTree(first.body()).get("id").asText(), job.get("id").asText());
      assertEquals("completed", job.get("status").asText(), late.body());
    }
    assertEquals(2, gw.sim.received(SimRoute.MEDIA_CREATE).size());
    JsonNode after = gw.usage(brand.id());
    assertEquals(0, new BigDecimal("1.60").compareTo(spent(after)));
    assertEquals(0, BigDecimal.ZERO.compareTo(reserved(after)));
  }

  @Test
  void aKeyWhoseSubmitTheProviderRefusedWith429IsSubmittedAgainOnItsRetry() throws Exception {
    gw.sim.scriptTimes(
        SimRoute.MEDIA_CREATE, Fault.status(429, java.util.Map.of("retry-after", "7")), 2);
    Brand brand = Brand.fresh("media-key-retry");
    // The workflow's tries of one clip, all under the clip's key: two provider 429s, then a job.
    for (int i = 0; i < 2; i++) {
      HttpResponse<String> busy = submit(brand, CLIP, "clip-7");
      assertEquals(429, busy.statusCode(), busy.body());
      assertEquals("7", busy.headers().firstValue("retry-after").orElse(""));
      gw.awaitSettled(brand.id()); // its hold voided before the next try
    }
    HttpResponse<String> made = submit(brand, CLIP, "clip-7");
    assertEquals(200, made.statusCode(), made.body());
    String id = TestGateway.JSON.readTree(made.body()).get("id").asText();
    // From then on the key answers that job: made once, paid once.
    HttpResponse<String> again = submit(brand, CLIP, "clip-7");
    assertEquals(200, again.statusCode(), again.body());
    assertEquals(id, TestGateway.JSON.readTree(again.body()).get("id").asText());
    assertEquals(3, gw.sim.received(SimRoute.MEDIA_CREATE).size());
    JsonNode usage = gw.awaitSettled(brand.id());
    assertEquals(0, new BigDecimal("0.80").compareTo(spent(usage)));
    assertEquals(
        id, TestGateway.JSON.readTree(submit(brand, CLIP, "clip-7").body()).get("id").asText());
  }

  @Test
  void aProviderRateLimitPassesThroughWithItsRetryAfterAndHoldsNothing() throws Exception {
    gw.sim.scriptTimes(
        SimRoute.MEDIA_CREATE, Fault.status(429, java.util.Map.of("retry-after", "7")), 3);
    Brand brand = Brand.fresh("media-429");
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> r = submit(brand, CLIP, null);
      assertEquals(429, r.statusCode(), r.body());
      assertEquals("7", r.headers().firstValue("retry-after").orElse(""));
    }
    JsonNode usage = gw.awaitSettled(brand.id());
    assertEquals(0, BigDecimal.ZERO.compareTo(spent(usage)));
  }

  @Test
  void onlyJobIdsTheGatewayMadeAreServed() throws Exception {
    Brand brand = Brand.fresh("media-ids");
    String id = TestGateway.JSON.readTree(submit(brand, CLIP, null).body()).get("id").asText();
    String providerId = id.substring(0, id.indexOf('.'));
    assertEquals(404, gw.send(authed(VIDEOS + "/" + providerId).build()).statusCode());
    assertEquals(404, gw.send(authed(VIDEOS + "/" + id + "x").build()).statusCode());
    assertEquals(404, gw.send(authed(VIDEOS + "/" + providerId + "/content").build()).statusCode());
    assertEquals(401, gw.send(gw.get(VIDEOS + "/" + id).build()).statusCode());
    gw.awaitSettled(brand.id());
  }

  @Test
  void thePolicyAndTheSpendHeadersAreCheckedBeforeAnythingIsReservedOrSent() throws Exception {
    Brand brand = Brand.fresh("media-policy");
    HttpResponse<String> tooLong = submit(brand, CLIP.replace("\"8\"", "\"10\""), null);
    assertEquals(400, tooLong.statusCode());
    assertTrue(tooLong.body().contains("media_seconds"), tooLong.body());
    HttpResponse<String> noHeaders =
        gw.send(
            gw.get(VIDEOS)
                .header("authorization", "Bearer " + E2eGateway.TOKEN)
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(CLIP))
                .build());
    assertEquals(400, noHeaders.statusCode());
    HttpResponse<String> overCap = submit(brand.withDaily("0.50"), CLIP, null);
    assertEquals(402, overCap.statusCode(), overCap.body());
    assertEquals(0, gw.sim.received(SimRoute.MEDIA_CREATE).size());
  }
}
