package dev.spendgateway.edge.router;

import static dev.spendgateway.edge.router.RouterGateway.postAsync;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.GatewayPerClass;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.sim.SimRoute;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Interactive first under the node's pace (issue 38, item 2): a batch flood takes at most the part
 * of a provider's minute above the interactive reserve, so interactive calls sent during the flood
 * all go through at once, while the batch calls past that part are answered 429 with Retry-After,
 * nothing sent or reserved. Without the reserve the flood would spend the whole minute and the
 * interactive calls would wait or be refused behind it (ProviderRateLimitsTest shows both sides on
 * a simulated clock).
 */
class InteractiveFirstE2ETest extends GatewayPerClass {
  private static final int BATCH = 80;
  private static final int INTERACTIVE = 20;

  /** requests-per-minute × (1 - interactive-reserve) in interactive-first-test.conf. */
  private static final int BATCH_SHARE = 30;

  @Override
  protected TestGateway startGateway() throws Exception {
    return RouterGateway.start("router/interactive-first-test.conf", "InteractiveFirstE2ETest");
  }

  @Test
  void aBatchFloodNeverTakesTheShareInteractiveCallsNeed() throws Exception {
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    List<CompletableFuture<HttpResponse<String>>> batch = new ArrayList<>();
    for (int i = 0; i < BATCH; i++) {
      Map<String, String> h = RouterGateway.spendHeaders("flood-" + UUID.randomUUID());
      h.put("x-priority", "batch");
      batch.add(postAsync(gw, client, RouterGateway.chat("fast-summary", false), h));
    }
    List<CompletableFuture<HttpResponse<String>>> interactive = new ArrayList<>();
    List<Long> startedNanos = new ArrayList<>();
    for (int i = 0; i < INTERACTIVE; i++) {
      startedNanos.add(System.nanoTime());
      interactive.add(
          postAsync(
              gw,
              client,
              RouterGateway.chat("fast-summary", false),
              RouterGateway.spendHeaders("person-" + UUID.randomUUID())));
    }

    long slowestMs = 0;
    for (int i = 0; i < INTERACTIVE; i++) {
      HttpResponse<String> r = interactive.get(i).get();
      slowestMs = Math.max(slowestMs, (System.nanoTime() - startedNanos.get(i)) / 1_000_000);
      assertEquals(200, r.statusCode(), "interactive call " + i + ": " + r.body());
      assertEquals(
          "openai", r.headers().firstValue("x-gateway-provider").orElse(""), "on its primary");
    }
    // A paced interactive call would wait whole seconds for its turn (one request refills a
    // second); these never waited for the pace, only for the gateway and the simulator.
    assertTrue(slowestMs < 5_000, "slowest interactive call took " + slowestMs + " ms");

    Map<Integer, Integer> statuses = new TreeMap<>();
    for (CompletableFuture<HttpResponse<String>> c : batch) {
      HttpResponse<String> r = c.get();
      statuses.merge(r.statusCode(), 1, Integer::sum);
      if (r.statusCode() == 429) {
        JsonNode error = TestGateway.JSON.readTree(r.body()).path("error");
        assertEquals("rate_limited", error.path("type").asText(), r.body());
        assertTrue(
            error.path("message").asText().contains("interactive reserve"),
            "the refusal says why: " + r.body());
        assertTrue(r.headers().firstValue("retry-after").isPresent(), "when to come back");
      }
    }
    int batchSent = statuses.getOrDefault(200, 0);
    // The share above the reserve, plus what refilled (one a second) while the flood waited.
    assertTrue(batchSent <= BATCH_SHARE + 3, "batch calls sent: " + statuses);
    assertEquals(BATCH, batchSent + statuses.getOrDefault(429, 0), "only 200 or 429: " + statuses);
    assertEquals(
        INTERACTIVE + batchSent,
        gw.sim.received(SimRoute.OPENAI_CHAT).size(),
        "a refused batch call was never sent");
    assertTrue(
        rateLimitedOf("fast-summary") >= BATCH - batchSent,
        "the refusals are counted under the calls' profile");
  }

  /** {@code gateway_rate_limited_total{profile,provider="openai"}} as served now. */
  private double rateLimitedOf(String profile) throws Exception {
    String series = "gateway_rate_limited_total{profile=\"" + profile + "\",provider=\"openai\"} ";
    return gw.send(
            gw.get("/metrics").header("authorization", "Bearer " + RouterGateway.TOKEN).build())
        .body()
        .lines()
        .filter(l -> l.startsWith(series))
        .mapToDouble(l -> Double.parseDouble(l.substring(series.length())))
        .sum();
  }
}
