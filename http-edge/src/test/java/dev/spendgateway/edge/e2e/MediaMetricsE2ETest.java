package dev.spendgateway.edge.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import java.math.BigDecimal;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What an operator sees of media jobs: {@code /metrics} and the operations screen's data show the
 * unfinished jobs and what they hold while they run, what they were settled at once they end, and
 * the 429s by who answered them. The account's limit is 1 here, so the gateway's own 429 is quick
 * to provoke.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MediaMetricsE2ETest {
  static final String VIDEOS = "/media/v1/videos";
  static final String CLIP =
      "{\"model\":\"sora-2\",\"prompt\":\"a cat on a skateboard\",\"seconds\":\"8\",\"size\":\"720x1280\"}";

  private TestGateway gw;

  @BeforeAll
  void start() throws Exception {
    gw = E2eGateway.start("media-metrics", Map.of("media.max-concurrent-jobs", 1));
  }

  @AfterAll
  void stop() throws Exception {
    gw.close();
  }

  private String metrics() throws Exception {
    HttpResponse<String> r =
        gw.send(gw.get("/metrics").header("x-api-key", E2eGateway.TOKEN).build());
    assertEquals(200, r.statusCode(), r.body());
    return r.body();
  }

  private JsonNode opsMedia() throws Exception {
    HttpResponse<String> r =
        gw.send(gw.get("/ops/data").header("x-api-key", E2eGateway.TOKEN).build());
    assertEquals(200, r.statusCode(), r.body());
    return TestGateway.JSON.readTree(r.body()).get("media");
  }

  /** The value of the series whose name and labels are exactly {@code series}, if served. */
  private static Optional<BigDecimal> sample(String metrics, String series) {
    return metrics
        .lines()
        .filter(l -> l.startsWith(series + " "))
        .findFirst()
        .map(l -> new BigDecimal(l.substring(series.length() + 1).trim()));
  }

  private static void assertSample(String metrics, String series, String expected) {
    BigDecimal value =
        sample(metrics, series).orElseThrow(() -> new AssertionError(series + " in " + metrics));
    assertEquals(0, new BigDecimal(expected).compareTo(value), series + " = " + value);
  }

  @Test
  void openJobsTheirHoldTheirSpendAndThe429sAreOnMetricsAndTheOpsScreen() throws Exception {
    // At 0 from the start: an alert sees 0, not "no data".
    String fresh = metrics();
    assertSample(fresh, "gateway_media_open_jobs", "0");
    assertSample(fresh, "gateway_media_reserved_usd", "0");
    assertSample(fresh, "gateway_media_rate_limited_total{by=\"gateway\"}", "0");
    assertSample(fresh, "gateway_media_rate_limited_total{by=\"provider\"}", "0");
    JsonNode before = opsMedia();
    assertEquals(0, before.get("openJobs").asInt());
    assertEquals("0", before.get("settledUsd").asText());

    // One job running (long enough to look at it), then a second submit over the limit of 1.
    gw.sim.setMedia(Duration.ofSeconds(1), Duration.ofMillis(500), false, 5, 10);
    Brand brand = Brand.fresh("media-metrics");
    assertEquals(200, gw.send(gw.postJson(VIDEOS, CLIP, brand).build()).statusCode());
    String running = metrics();
    assertSample(running, "gateway_media_open_jobs", "1");
    assertSample(running, "gateway_media_reserved_usd", "0.8");
    JsonNode held = opsMedia();
    assertEquals(1, held.get("openJobs").asInt());
    assertEquals("0.8", held.get("reservedUsd").asText());
    assertEquals(429, gw.send(gw.postJson(VIDEOS, CLIP, brand).build()).statusCode());
    assertSample(metrics(), "gateway_media_rate_limited_total{by=\"gateway\"}", "1");

    // It completes and is settled: nothing open, its $0.80 counted as completed spend.
    gw.awaitSettled(brand.id());
    String done = metrics();
    assertSample(done, "gateway_media_open_jobs", "0");
    assertSample(done, "gateway_media_reserved_usd", "0");
    assertSample(
        done, "gateway_media_spend_usd_total{model=\"sora-2\",outcome=\"completed\"}", "0.8");
    JsonNode after = opsMedia();
    assertEquals(0, after.get("openJobs").asInt());
    assertEquals("0", after.get("reservedUsd").asText());
    assertEquals("0.8", after.get("settledUsd").asText());

    // A failed job counts at $0 as failed; the provider's own 429 is counted as the provider's.
    gw.sim.setMedia(Duration.ZERO, Duration.ofMillis(100), true, 5, 10);
    assertEquals(200, gw.send(gw.postJson(VIDEOS, CLIP, brand).build()).statusCode());
    gw.awaitSettled(brand.id());
    Eventually.until(
        "the failed job is counted",
        Duration.ofSeconds(10),
        () ->
            sample(metrics(), "gateway_media_spend_usd_total{model=\"sora-2\",outcome=\"failed\"}")
                .isPresent());
    gw.sim.scriptTimes(SimRoute.MEDIA_CREATE, Fault.status(429, Map.of("retry-after", "3")), 1);
    assertEquals(429, gw.send(gw.postJson(VIDEOS, CLIP, brand).build()).statusCode());
    String last = metrics();
    assertSample(last, "gateway_media_rate_limited_total{by=\"provider\"}", "1");
    assertSample(
        last, "gateway_media_spend_usd_total{model=\"sora-2\",outcome=\"completed\"}", "0.8");
    assertTrue(opsMedia().get("settledUsd").asText().equals("0.8"), "a failed job adds $0");
    gw.awaitSettled(brand.id());
  }
}
