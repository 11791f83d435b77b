package dev.spendgateway.edge.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The pass-through routes go through the same guards as the failover router: a caller cannot get
 * past a failing provider, a retired model or a full admission pool by calling the provider's route
 * directly. Each refusal comes before any money is held and nothing reaches the provider.
 */
class DirectRouteGuardsE2ETest {
  private static final String CLAUDE =
      "{\"model\":\"claude-opus-5-5\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
  private static final String CHAT =
      "{\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

  private TestGateway gw;

  @AfterEach
  void stop() throws Exception {
    if (gw != null) {
      gw.close();
    }
  }

  @Test
  void aProviderThatKeepsFailingOpensItsBreakerForDirectCallsToo() throws Exception {
    gw =
        E2eGateway.start(
            "guard-breaker",
            Map.of("failover.breaker.max-failures", 2, "failover.breaker.reset-timeout", "30s"));
    gw.sim.scriptForever(SimRoute.ANTHROPIC_MESSAGES, Fault.status(500));
    Brand brand = Brand.fresh("breaker");
    for (int i = 0; i < 2; i++) {
      assertEquals(
          500, gw.send(gw.postJson(TestGateway.ANTHROPIC, CLAUDE, brand).build()).statusCode());
    }
    int reached = gw.sim.received(SimRoute.ANTHROPIC_MESSAGES).size();

    HttpResponse<String> refused =
        gw.send(
            gw.postJson(TestGateway.ANTHROPIC, CLAUDE, brand)
                .header("x-request-id", "breaker-open-1")
                .build());

    assertEquals(503, refused.statusCode(), refused.body());
    assertEquals(
        "30",
        refused.headers().firstValue("retry-after").orElse(""),
        "waits for the breaker to half-open");
    assertTrue(refused.body().contains("circuit breaker"), refused.body());
    assertEquals(reached, gw.sim.received(SimRoute.ANTHROPIC_MESSAGES).size(), "nothing was sent");
    JsonNode line = gw.awaitAccessLine(l -> "breaker-open-1".equals(l.path("request_id").asText()));
    assertEquals(
        0,
        new java.math.BigDecimal(line.path("settled_usd").asText()).signum(),
        "voided, never billed: " + line);
    assertTrue(line.path("error").asText().contains("breaker_open"), line.toString());
    // The other provider is not affected.
    assertEquals(200, gw.send(gw.postJson(TestGateway.CHAT, CHAT, brand).build()).statusCode());
  }

  @Test
  void aModelThatAnswered410IsRefusedWithoutReachingTheProvider() throws Exception {
    gw = E2eGateway.start("guard-gone");
    Brand brand = Brand.fresh("gone");
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.status(410));
    assertEquals(410, gw.send(gw.postJson(TestGateway.CHAT, CHAT, brand).build()).statusCode());
    int reached = gw.sim.received(SimRoute.OPENAI_CHAT).size();

    HttpResponse<String> refused =
        gw.send(
            gw.postJson(TestGateway.CHAT, CHAT, brand).header("x-request-id", "gone-2").build());

    assertEquals(410, refused.statusCode(), refused.body());
    assertTrue(refused.body().contains("gpt-6.1-sol"), "names the model: " + refused.body());
    assertEquals(reached, gw.sim.received(SimRoute.OPENAI_CHAT).size(), "nothing was sent");
    JsonNode line = gw.awaitAccessLine(l -> "gone-2".equals(l.path("request_id").asText()));
    assertEquals("model_circuit_open", line.path("error").asText(), line.toString());
    assertTrue(line.path("reserved_usd").isNull(), "nothing was held: " + line);
  }

  @Test
  void aFullAdmissionPoolAnswers429AtOnceOnTheDirectRoute() throws Exception {
    gw =
        E2eGateway.start(
            "guard-pool",
            Map.of(
                "failover.pools.batch.queue-size", 0,
                "failover.pools.batch.concurrency.anthropic", 1));
    gw.sim.setLatency(Duration.ofSeconds(2));
    Brand brand = Brand.fresh("pool");
    CompletableFuture<HttpResponse<String>> first =
        gw.sendAsync(
            gw.postJson(TestGateway.ANTHROPIC, CLAUDE, brand)
                .header("x-priority", "batch")
                .build());
    awaitInFlight(() -> gw.sim.received(SimRoute.ANTHROPIC_MESSAGES).size() == 1);

    HttpResponse<String> refused =
        gw.send(
            gw.postJson(TestGateway.ANTHROPIC, CLAUDE, brand)
                .header("x-priority", "batch")
                .header("x-request-id", "pool-2")
                .build());
    HttpResponse<String> interactive =
        gw.send(gw.postJson(TestGateway.ANTHROPIC, CLAUDE, brand).build());

    assertEquals(429, refused.statusCode(), refused.body());
    assertTrue(refused.headers().firstValue("retry-after").isPresent(), "says when to come back");
    assertTrue(
        refused.body().contains("rate_limit_error"), "the Anthropic SDK's type: " + refused.body());
    assertEquals(
        200, interactive.statusCode(), "the interactive pool is separate: " + interactive.body());
    assertEquals(200, first.get().statusCode());
    JsonNode line = gw.awaitAccessLine(l -> "pool-2".equals(l.path("request_id").asText()));
    assertEquals("pool_full", line.path("error").asText(), line.toString());
    assertTrue(line.path("reserved_usd").isNull(), "nothing was held: " + line);
  }

  @Test
  void aProvidersRateLimitRefusesTheCallOverItAtOnceOnEveryRoute() throws Exception {
    gw =
        E2eGateway.start(
            "guard-rate",
            Map.of(
                // On (e2e-test.conf turns the pace off), by requests only.
                "failover.rate-limits.enabled", true,
                "failover.rate-limits.anthropic.tokens-per-minute", 0,
                "failover.rate-limits.openai.tokens-per-minute", 0,
                "failover.rate-limits.anthropic.requests-per-minute", 2,
                "failover.rate-limits.openai.requests-per-minute", 1,
                "failover.rate-limits.max-wait", "0s"));
    Brand brand = Brand.fresh("rate");
    for (int i = 0; i < 2; i++) {
      assertEquals(
          200,
          gw.send(gw.postJson(TestGateway.ANTHROPIC, CLAUDE, brand).build()).statusCode(),
          "call " + i);
    }
    assertEquals(200, gw.send(gw.postJson(TestGateway.CHAT, CHAT, brand).build()).statusCode());
    int reached = gw.sim.received().size();

    HttpResponse<String> direct =
        gw.send(
            gw.postJson(TestGateway.ANTHROPIC, CLAUDE, brand)
                .header("x-request-id", "rate-3")
                .build());
    HttpResponse<String> routed =
        gw.send(
            gw.postJson(
                    "/v1/chat/completions",
                    "{\"model\":\"fast-summary\",\"max_tokens\":50,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}",
                    brand)
                .build());

    assertEquals(429, direct.statusCode(), direct.body());
    long retryAfter = Long.parseLong(direct.headers().firstValue("retry-after").orElse("0"));
    assertTrue(
        retryAfter >= 1 && retryAfter <= 30,
        "the next free turn, at most 30 s at 2 a minute: " + retryAfter);
    assertTrue(direct.body().contains("requests per minute"), "names the limit: " + direct.body());
    assertEquals(
        429, routed.statusCode(), "both providers are over their limits: " + routed.body());
    assertEquals(reached, gw.sim.received().size(), "nothing reached a provider");
    JsonNode line = gw.awaitAccessLine(l -> "rate-3".equals(l.path("request_id").asText()));
    assertEquals("rate_limited", line.path("error").asText(), line.toString());
    assertTrue(line.path("reserved_usd").isNull(), "nothing was held: " + line);
    String metrics =
        gw.send(gw.get("/metrics").header("x-api-key", E2eGateway.TOKEN).build()).body();
    assertTrue(
        metrics.contains("gateway_rate_limited_total{profile=\"\",provider=\"anthropic\"}"),
        "counted in /metrics");
  }

  private static void awaitInFlight(java.util.function.BooleanSupplier condition) {
    Eventually.until(
        "the first call reaches the provider", Duration.ofSeconds(20), condition::getAsBoolean);
  }
}
