package dev.spendgateway.edge.e2e;

import static dev.spendgateway.edge.e2e.DataClassE2ETest.chat;
import static dev.spendgateway.edge.e2e.DataClassE2ETest.sample;
import static dev.spendgateway.edge.testkit.TestGateway.CHAT;
import static dev.spendgateway.edge.testkit.TestGateway.JSON;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A quota or billing 429 is not a rate limit: the router fails over at once (no backoff, no second
 * try on the exhausted account), a provider route hands it back at once; both are counted by kind,
 * and the providers' rate-limit headers become gauges.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TooManyRequestsE2ETest {
  static final String QUOTA =
      "{\"error\":{\"message\":\"You exceeded your current quota, please check your plan and billing details.\","
          + "\"type\":\"insufficient_quota\",\"param\":null,\"code\":\"insufficient_quota\"}}";

  private TestGateway gw;

  @BeforeAll
  void start() throws Exception {
    // A long backoff: a rate-limit retry would be plain to see, a quota 429 must not wait for it.
    gw =
        E2eGateway.start(
            "too-many", Map.of("failover.backoff.base", "3s", "failover.backoff.cap", "3s"));
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

  private String metrics() throws Exception {
    return gw.send(gw.get("/metrics").header("x-api-key", E2eGateway.TOKEN).build()).body();
  }

  @Test
  void theRouterFailsOverAtOnceOnAQuota429() throws Exception {
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.status(429, Map.of(), QUOTA));
    long started = System.nanoTime();
    HttpResponse<String> r =
        gw.send(
            gw.postJson("/v1/chat/completions", chat("fast-summary"), Brand.fresh("q")).build());
    long tookMs = (System.nanoTime() - started) / 1_000_000;
    assertEquals(200, r.statusCode(), r.body());
    assertEquals("anthropic", r.headers().firstValue("x-gateway-provider").orElse(""));
    assertEquals(
        1, gw.sim.received(SimRoute.OPENAI_CHAT).size(), "the exhausted account is asked once");
    assertEquals(1, gw.sim.received(SimRoute.ANTHROPIC_MESSAGES).size());
    assertTrue(tookMs < 2500, "no backoff before the switch: " + tookMs + " ms");
    assertTrue(
        sample(
                metrics(),
                "gateway_upstream_too_many_requests_total",
                "kind=\"quota\",model=\"gpt-6.1-sol-mini\",profile=\"fast-summary\",provider=\"openai\"")
            >= 1);
  }

  @Test
  void aProviderRouteHandsAQuota429BackAtOnceAndCountsItsKind() throws Exception {
    gw.sim.script(
        SimRoute.OPENAI_CHAT,
        Fault.status(
            429,
            Map.of("x-ratelimit-remaining-requests", "0", "x-ratelimit-limit-requests", "500"),
            QUOTA),
        Fault.status(
            429,
            Map.of(
                "retry-after",
                "1",
                "x-ratelimit-remaining-tokens",
                "12",
                "x-ratelimit-limit-tokens",
                "30000")));
    HttpResponse<String> quota =
        gw.send(gw.postJson(CHAT, chat("gpt-6.1-sol-mini"), Brand.fresh("q")).build());
    assertEquals(429, quota.statusCode());
    assertEquals(
        "insufficient_quota",
        JSON.readTree(quota.body()).path("error").path("code").asText(),
        "body intact");
    HttpResponse<String> rate =
        gw.send(gw.postJson(CHAT, chat("gpt-6.1-sol-mini"), Brand.fresh("q")).build());
    assertEquals(429, rate.statusCode());
    assertEquals(
        "1",
        rate.headers().firstValue("retry-after").orElse(""),
        "a rate limit keeps its Retry-After");
    assertEquals(2, gw.sim.received(SimRoute.OPENAI_CHAT).size(), "a provider route never retries");
    String m = metrics();
    assertTrue(
        sample(
                m,
                "gateway_upstream_too_many_requests_total",
                "kind=\"quota\",model=\"gpt-6.1-sol-mini\",profile=\"\",provider=\"openai\"")
            >= 1,
        m);
    assertTrue(
        sample(
                m,
                "gateway_upstream_too_many_requests_total",
                "kind=\"rate_limit\",model=\"gpt-6.1-sol-mini\",profile=\"\",provider=\"openai\"")
            >= 1,
        m);
    assertEquals(
        500,
        sample(m, "gateway_upstream_ratelimit_limit", "provider=\"openai\",resource=\"requests\""),
        m);
    assertEquals(
        12,
        sample(
            m, "gateway_upstream_ratelimit_remaining", "provider=\"openai\",resource=\"tokens\""),
        m);
  }

  @Test
  void tokensAndSpendAreCountedPerProviderModelAndProfile() throws Exception {
    // A usage the tiny request can have: a bigger one is implausible and kept at the worst case.
    gw.sim.setDefaultUsage(new dev.spendgateway.sim.Usage(20, 30, 0, 0, 0));
    HttpResponse<String> routed =
        gw.send(gw.postJson("/v1/chat/completions", chat("long-draft"), Brand.fresh("t")).build());
    assertEquals(200, routed.statusCode(), routed.body());
    HttpResponse<String> direct =
        gw.send(gw.postJson(CHAT, chat("gpt-6.1-sol-mini"), Brand.fresh("t")).build());
    assertEquals(200, direct.statusCode(), direct.body());
    gw.awaitSettled("nobody");
    String m = metrics();
    // The spend is counted when the attempt's line is written, just after the ledger's answer.
    m =
        Eventually.until(
            "the direct call's spend shows in /metrics",
            java.time.Duration.ofSeconds(5),
            () -> metrics(),
            seen -> sample(seen, "gateway_spend_usd_total", "model=\"gpt-6.1-sol-mini\"") >= 0);
    assertEquals(
        20,
        sample(
            m,
            "gateway_tokens_total",
            "kind=\"input\",model=\"gpt-6.1-sol\",profile=\"long-draft\",provider=\"openai\""),
        m);
    assertEquals(
        30,
        sample(
            m,
            "gateway_tokens_total",
            "kind=\"output\",model=\"gpt-6.1-sol-mini\",profile=\"\",provider=\"openai\""),
        m);
    // long-draft's primary gpt-6.1-sol: 20 × $2/M + 30 × $10/M = $0.00034.
    assertEquals(
        0.00034,
        sample(
            m,
            "gateway_spend_usd_total",
            "model=\"gpt-6.1-sol\",profile=\"long-draft\",provider=\"openai\""),
        1e-12,
        m);
  }
}
