package dev.spendgateway.edge.capacity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import java.math.BigDecimal;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A node at one of its limits answers the next call at once with a 503 in the caller's provider
 * shape and {@code retry-after}, voids what it reserved for it, and counts the refusal by kind on
 * {@code /metrics} — it never queues the call until a timeout resets it. The limits are scaled down
 * to a handful of calls; the streams holding them pause far longer than the refusal may take.
 */
class OverloadTest {
  private static final int HELD = 3;
  private static final Duration PAUSE = Duration.ofSeconds(4);

  /** "At once": far below the pause, which a queued call would have to wait out. */
  private static final Duration PROMPTLY = Duration.ofMillis(1500);

  @ParameterizedTest(name = "{0} with {1} = " + HELD + " → 503 {2}, reserved {3}")
  @CsvSource({
    // route,   limit key,                              kind,          reserves first
    "openai,    providers.openai.max-connections,      upstream_busy, true",
    "anthropic, providers.anthropic.max-connections,   upstream_busy, true",
    "openai,    gateway.max-open-calls,                open_calls,    false",
    "anthropic, gateway.max-open-calls,                open_calls,    false",
  })
  void a_call_past_the_limit_is_refused_at_once_and_holds_nothing(
      String route, String limitKey, String kind, boolean reservesFirst) throws Exception {
    boolean anthropic = route.equals("anthropic");
    try (TestGateway gw =
        CapacityGateway.start("overload-" + kind + "-" + route, Map.of(limitKey, HELD))) {
      gw.sim.scriptForever(
          anthropic ? SimRoute.ANTHROPIC_MESSAGES : SimRoute.OPENAI_CHAT,
          Fault.streamPause(anthropic ? 4 : 2, PAUSE));
      Brand brand = Brand.fresh("overload");
      HttpClient client =
          HttpClient.newBuilder()
              .version(HttpClient.Version.HTTP_1_1)
              .connectTimeout(Duration.ofSeconds(10))
              .build();

      List<CompletableFuture<HttpResponse<String>>> holding = new ArrayList<>();
      for (int i = 0; i < HELD; i++) {
        holding.add(
            client.sendAsync(
                call(gw, anthropic, brand, "held-" + i), HttpResponse.BodyHandlers.ofString()));
      }
      awaitOpenUpstream(gw, HELD);

      long sent = System.nanoTime();
      HttpResponse<String> refused =
          client.send(call(gw, anthropic, brand, "refused"), HttpResponse.BodyHandlers.ofString());
      Duration took = Duration.ofNanos(System.nanoTime() - sent);

      // At once, in the provider's shape, with retry-after, marked as the gateway's own.
      assertEquals(503, refused.statusCode(), refused.body());
      assertTrue(took.compareTo(PROMPTLY) < 0, "refused after " + took);
      assertEquals("1", refused.headers().firstValue("retry-after").orElse(null));
      assertEquals("true", refused.headers().firstValue("x-gateway-error").orElse(null));
      JsonNode error = TestGateway.JSON.readTree(refused.body());
      if (anthropic) {
        assertEquals("error", error.path("type").asText(), refused.body());
        assertEquals("overloaded_error", error.path("error").path("type").asText(), refused.body());
      } else {
        assertEquals(
            "gateway_overloaded", error.path("error").path("code").asText(), refused.body());
      }
      // The held streams were not disturbed, and nothing more reached the provider.
      assertEquals(HELD, gw.sim.openStreams());
      assertEquals(HELD, gw.sim.receivedCount());

      JsonNode line = gw.awaitAccessLine(l -> "refused".equals(l.path("request_id").asText()));
      assertEquals(503, line.path("status").asInt(), line.toString());
      assertEquals(kind, line.path("error").asText(), line.toString());
      if (reservesFirst) {
        // Reserved before the upstream refused it, then voided: $0 settled, nothing left held.
        assertTrue(
            new BigDecimal(line.path("reserved_usd").asText()).signum() > 0, line.toString());
        assertEquals(
            0,
            BigDecimal.ZERO.compareTo(new BigDecimal(line.path("settled_usd").asText())),
            line.toString());
      } else {
        assertTrue(line.path("reserved_usd").isNull(), line.toString());
      }

      // A full node still answers its operators.
      HttpResponse<String> metrics =
          gw.send(gw.get("/metrics").header("x-api-key", CapacityGateway.TOKEN).build());
      assertEquals(200, metrics.statusCode());
      assertTrue(
          metrics.body().contains("gateway_overload_refusals_total{kind=\"" + kind + "\"} 1.0"),
          "refusal counted: "
              + metrics.body().lines().filter(l -> l.contains("overload")).toList());

      for (CompletableFuture<HttpResponse<String>> call : holding) {
        assertEquals(200, call.get(30, TimeUnit.SECONDS).statusCode());
      }
      // Only the held calls were billed, each at its real cost; the refused one holds nothing.
      JsonNode daily = TestGateway.cap(gw.awaitSettled(brand.id()), "brand_daily");
      BigDecimal perCall =
          anthropic ? CapacityGateway.ANTHROPIC_CALL_USD : CapacityGateway.OPENAI_CALL_USD;
      assertEquals(
          0,
          perCall
              .multiply(BigDecimal.valueOf(HELD))
              .compareTo(TestGateway.money(daily, "spentUsd")),
          daily.toString());
      assertEquals(
          0, BigDecimal.ZERO.compareTo(TestGateway.money(daily, "reservedUsd")), daily.toString());
    }
  }

  private static HttpRequest call(
      TestGateway gw, boolean anthropic, Brand brand, String requestId) {
    HttpRequest.Builder b =
        gw.postJson(
                anthropic ? TestGateway.ANTHROPIC : TestGateway.CHAT,
                anthropic ? CapacityGateway.messagesStream() : CapacityGateway.chatStream(),
                brand)
            .header("x-request-id", requestId)
            .timeout(Duration.ofSeconds(30));
    if (anthropic) {
      b.header("anthropic-version", "2023-06-01");
    }
    return b.build();
  }

  private static void awaitOpenUpstream(TestGateway gw, int streams) {
    Eventually.until(
        streams + " streams are open upstream",
        Duration.ofSeconds(20),
        () -> gw.sim.openStreams(),
        open -> open >= streams);
  }
}
