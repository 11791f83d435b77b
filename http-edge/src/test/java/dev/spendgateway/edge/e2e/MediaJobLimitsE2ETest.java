package dev.spendgateway.edge.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import java.io.InputStream;
import java.math.BigDecimal;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The media account's limits through the gateway, as a video workflow meets them: a sixth clip
 * while five run is told to wait (429 with retry-after) and never reaches the provider or the
 * books; a storm of provider 429s passes through with the provider's retry-after and leaves every
 * cap as it was; a caller that hangs up while it downloads a video costs the gateway nothing it
 * keeps (no provider connection, no money), and the next download works.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MediaJobLimitsE2ETest {
  static final String VIDEOS = "/media/v1/videos";
  static final String CLIP =
      "{\"model\":\"sora-2\",\"prompt\":\"a cat on a skateboard\",\"seconds\":\"8\",\"size\":\"720x1280\"}";

  /** A video far larger than any socket buffer, so a caller that stops reading is felt upstream. */
  static final long BIG_VIDEO_BYTES = 64L * 1024 * 1024;

  private TestGateway gw;

  @BeforeAll
  void start() throws Exception {
    gw = E2eGateway.start("media-limits");
  }

  @AfterAll
  void stop() throws Exception {
    gw.close();
  }

  @BeforeEach
  void reset() {
    gw.sim.reset();
    gw.sim.clearReceived();
  }

  /** Every job of a test ends before the next: the account's count starts at 0 each time. */
  @AfterEach
  void allJobsEnded() {
    Eventually.until(
        "no media job is open",
        Duration.ofSeconds(25),
        () -> gw.usage("nobody"),
        usage -> usage.get("openReservations").asInt() == 0);
  }

  private HttpResponse<String> submit(Brand brand) throws Exception {
    return gw.send(gw.postJson(VIDEOS, CLIP, brand).build());
  }

  private HttpRequest.Builder authed(String path) {
    return gw.get(path).header("authorization", "Bearer " + E2eGateway.TOKEN);
  }

  private static BigDecimal cap(JsonNode usage, String cap, String field) {
    return TestGateway.money(TestGateway.cap(usage, cap), field);
  }

  @Test
  void aSixthConcurrentClipIsToldToWaitAndNeverReachesTheProviderOrTheBooks() throws Exception {
    // Five jobs that stay unfinished long enough for the sixth submit to meet them.
    gw.sim.setMedia(Duration.ofSeconds(2), Duration.ofMillis(500), false, 5, 10);
    Brand brand = Brand.fresh("media-sixth");
    for (int i = 0; i < 5; i++) {
      HttpResponse<String> r = submit(brand);
      assertEquals(200, r.statusCode(), r.body());
    }
    JsonNode before = gw.usage(brand.id());
    assertEquals(0, new BigDecimal("4.00").compareTo(cap(before, "brand_daily", "reservedUsd")));

    HttpResponse<String> sixth = submit(brand);
    assertEquals(429, sixth.statusCode(), sixth.body());
    assertEquals("30", sixth.headers().firstValue("retry-after").orElse(""), "media.retry-after");
    assertEquals("true", sixth.headers().firstValue("x-gateway-error").orElse(""));
    JsonNode error = TestGateway.JSON.readTree(sixth.body()).get("error");
    assertEquals("rate_limited", error.get("type").asText(), sixth.body());
    assertTrue(error.get("message").asText().contains("5 unfinished jobs"), sixth.body());

    // Nothing sent, nothing reserved: the provider saw five submits, the books hold five clips.
    assertEquals(5, gw.sim.received(SimRoute.MEDIA_CREATE).size());
    JsonNode after = gw.usage(brand.id());
    assertEquals(0, new BigDecimal("4.00").compareTo(cap(after, "brand_daily", "reservedUsd")));
    assertEquals(
        before.get("openReservations").asInt(), after.get("openReservations").asInt(), "no hold");
    gw.awaitAccessLine(
        l ->
            l.path("status").asInt() == 429
                && "rate_limited".equals(l.path("error").asText(""))
                && l.path("route").asText("").startsWith(VIDEOS));

    // Once the five ended and were settled, the sixth goes through.
    JsonNode settled = gw.awaitSettled(brand.id());
    assertEquals(0, new BigDecimal("4.00").compareTo(cap(settled, "brand_daily", "spentUsd")));
    HttpResponse<String> later = submit(brand);
    assertEquals(200, later.statusCode(), later.body());
    assertEquals(6, gw.sim.received(SimRoute.MEDIA_CREATE).size());
  }

  @Test
  void aStormOfProvider429sPassesThroughWithItsRetryAfterAndLeavesTheCapsAsTheyWere()
      throws Exception {
    gw.sim.setMedia(Duration.ofMillis(100), Duration.ofMillis(100), false, 5, 10);
    int storm = 24;
    gw.sim.scriptForever(SimRoute.MEDIA_CREATE, Fault.status(429, Map.of("retry-after", "45")));
    Brand brand = Brand.fresh("media-storm");
    JsonNode before = gw.usage(brand.id());

    // The workflow's clips all at once, more than the account's limit: each is sent (the gateway's
    // count drops back as each 429 voids its hold) and each gets the provider's answer.
    List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
    for (int i = 0; i < storm; i++) {
      calls.add(gw.sendAsync(gw.postJson(VIDEOS, CLIP, brand).build()));
    }
    int passedThrough = 0;
    for (CompletableFuture<HttpResponse<String>> c : calls) {
      HttpResponse<String> r = c.get();
      assertEquals(429, r.statusCode(), r.body());
      if ("45".equals(r.headers().firstValue("retry-after").orElse(""))) {
        passedThrough++;
        assertTrue(r.headers().firstValue("x-gateway-error").isEmpty(), "the provider's own 429");
      } else {
        // Sent while five others were still waiting for their 429: the gateway's own limit.
        assertEquals("30", r.headers().firstValue("retry-after").orElse(""), r.body());
      }
    }
    assertTrue(passedThrough >= 5, "at least the account's limit reached the provider");
    assertEquals(passedThrough, gw.sim.received(SimRoute.MEDIA_CREATE).size());

    // Every hold voided: the caps are as they were, to the micro-dollar.
    JsonNode after = gw.awaitSettled(brand.id());
    for (String field : List.of("spentUsd", "reservedUsd")) {
      for (String name : List.of("global_daily", "global_monthly")) {
        assertEquals(
            0, cap(before, name, field).compareTo(cap(after, name, field)), name + " " + field);
      }
      for (String name : List.of("brand_daily", "brand_monthly")) {
        assertEquals(0, BigDecimal.ZERO.compareTo(cap(after, name, field)), name + " " + field);
      }
    }
    // The storm is over: the next clip goes through, the account's count is back at zero.
    gw.sim.reset();
    gw.sim.setMedia(Duration.ofMillis(100), Duration.ofMillis(100), false, 5, 10);
    gw.sim.reset();
    gw.sim.setMedia(Duration.ofMillis(100), Duration.ofMillis(100), false, 5, 10);
    HttpResponse<String> next = submit(brand);
    assertEquals(200, next.statusCode(), next.body());
  }

  @Test
  void aCallerHangingUpDuringTheDownloadLeavesNothingBehindAndTheNextDownloadWorks()
      throws Exception {
    gw.sim.setMedia(Duration.ZERO, Duration.ofMillis(100), false, 5, BIG_VIDEO_BYTES);
    Brand brand = Brand.fresh("media-hangup");
    String id = TestGateway.JSON.readTree(submit(brand).body()).get("id").asText();
    JsonNode settled = gw.awaitSettled(brand.id());
    BigDecimal spent = cap(settled, "brand_daily", "spentUsd");
    assertEquals(0, new BigDecimal("0.80").compareTo(spent));

    // More hang-ups than the client pool has connections to the provider (4 by default): a
    // download whose provider connection outlived its caller would leave the next one waiting.
    for (int i = 0; i < 8; i++) {
      try (Socket socket = RawCaller.connect(gw)) {
        socket
            .getOutputStream()
            .write(
                ("GET "
                        + VIDEOS
                        + "/"
                        + id
                        + "/content HTTP/1.1\r\nHost: 127.0.0.1\r\nauthorization: Bearer "
                        + E2eGateway.TOKEN
                        + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[64 * 1024];
        long read = 0;
        while (read < 256 * 1024) {
          int n = in.read(buffer);
          assertTrue(n > 0, "the download started");
          read += n;
        }
        RawCaller.reset(socket);
      }
    }

    assertEquals(200, gw.send(gw.get("/healthz").build()).statusCode());
    HttpResponse<InputStream> whole =
        gw.http.send(
            authed(VIDEOS + "/" + id + "/content").timeout(Duration.ofSeconds(30)).build(),
            HttpResponse.BodyHandlers.ofInputStream());
    assertEquals(200, whole.statusCode());
    long bytes;
    try (InputStream in = whole.body()) {
      bytes = in.transferTo(java.io.OutputStream.nullOutputStream());
    }
    assertEquals(BIG_VIDEO_BYTES, bytes, "the next download is whole");
    // Downloads move no money: the clip was paid once, nothing is held.
    JsonNode after = gw.usage(brand.id());
    assertEquals(0, spent.compareTo(cap(after, "brand_daily", "spentUsd")));
    assertEquals(0, BigDecimal.ZERO.compareTo(cap(after, "brand_daily", "reservedUsd")));
    assertEquals(0, after.get("openReservations").asInt());
  }
}
