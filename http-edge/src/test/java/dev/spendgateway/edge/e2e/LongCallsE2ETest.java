package dev.spendgateway.edge.e2e;

import static dev.spendgateway.edge.e2e.E2eGateway.USAGE;
import static dev.spendgateway.edge.testkit.TestGateway.cap;
import static dev.spendgateway.edge.testkit.TestGateway.money;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimConfig;
import dev.spendgateway.sim.SimRoute;
import java.math.BigDecimal;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A call the provider is still serving is never cut by the gateway, end to end over real HTTP: an
 * answer whose headers come late (a non-streamed answer is generated in full first) and a stream
 * that goes silent for a while both complete, on the pass-through routes and through the failover
 * router, billed once. And a call longer than {@code providers.max-call-duration} is cut before its
 * reservation could expire, kept at its worst case.
 *
 * <p>Every timer on the call's path is the shipped one scaled down 50 times, so the shipped
 * relations between them are what is tested: the provider may take 12 s (600 s shipped) to start
 * answering and pause 12.2 s (610 s) inside a stream; the simulator takes 4 s, which the shipped
 * server idle-timeout of old (60 s, 1.2 s here) and breaker call-timeout (60 s) would have cut.
 * (Scaled 100 times, the request-timeout's one-minute margin over the response start would be 0.6 s
 * — less than a loaded test box needs for the reservation in front of the call.)
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LongCallsE2ETest {
  private static final String MESSAGES = "/anthropic/v1/messages";
  private static final String ROUTER = "/v1/chat/completions";
  private static final long SCALE = 50;
  private static final Duration SILENCE = Duration.ofSeconds(4);

  /** The keys of every timer a provider call passes through (those present in the shipped conf). */
  private static final List<String> PATH_TIMERS =
      List.of(
          "pekko.http.server.idle-timeout",
          "pekko.http.server.request-timeout",
          "failover.breaker.call-timeout",
          "providers.openai.response-start-timeout",
          "providers.openai.idle-timeout",
          "providers.anthropic.response-start-timeout",
          "providers.anthropic.idle-timeout",
          "providers.max-call-duration");

  private TestGateway gw;
  private TestGateway bounded;

  /** {@link #gw}'s timers, and the batch pool's shipped 10 min budget scaled down the same. */
  private TestGateway chained;

  /** The shipped path timers divided by {@link #SCALE}, as overrides. */
  static Map<String, Object> shippedTimersScaledDown() {
    Config shipped =
        ConfigFactory.parseResources("e2e-test.conf")
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    Map<String, Object> scaled = new HashMap<>();
    for (String key : PATH_TIMERS) {
      if (shipped.hasPath(key)) {
        scaled.put(key, shipped.getDuration(key).toMillis() / SCALE + "ms");
      }
    }
    return scaled;
  }

  @BeforeAll
  void start() throws Exception {
    gw = E2eGateway.start("long-calls", shippedTimersScaledDown());
    // A call may last 3 s here; the provider must start answering within 2 s.
    bounded =
        E2eGateway.start(
            "max-call",
            Map.of(
                "providers.max-call-duration", "3s",
                "providers.openai.response-start-timeout", "2s",
                "providers.openai.idle-timeout", "2s",
                "providers.anthropic.response-start-timeout", "2s",
                "providers.anthropic.idle-timeout", "2s"));
    Map<String, Object> chainedTimers = new HashMap<>(shippedTimersScaledDown());
    chainedTimers.put("failover.budgets.batch.total-time", 600_000 / SCALE + "ms");
    chained = E2eGateway.start("chained", chainedTimers);
  }

  @AfterAll
  void stop() throws Exception {
    gw.close();
    bounded.close();
    chained.close();
  }

  @BeforeEach
  void resetSimulators() {
    gw.sim.reset();
    bounded.sim.reset();
    chained.sim.reset();
  }

  private static String claude(boolean stream) {
    return "{\"model\":\"claude-opus-5-5\",\"max_tokens\":1000,\"stream\":"
        + stream
        + ","
        + "\"messages\":[{\"role\":\"user\",\"content\":\"Think it through.\"}]}";
  }

  private static String routed(boolean stream) {
    return "{\"model\":\"long-draft\",\"max_completion_tokens\":900,\"stream\":"
        + stream
        + ","
        + "\"messages\":[{\"role\":\"user\",\"content\":\"Think it through.\"}]}";
  }

  private HttpResponse<String> post(TestGateway g, String path, String body, Brand brand)
      throws Exception {
    return g.send(g.postJson(path, body, brand).header("x-request-id", brand.id()).build());
  }

  private static BigDecimal spent(TestGateway g, Brand brand) throws Exception {
    return money(cap(g.awaitSettled(brand.id()), "brand_daily"), "spentUsd");
  }

  private static long millisSince(long startNanos) {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }

  @Test
  void aPassThroughAnswerWhoseHeadersComeLateCompletes() throws Exception {
    Brand brand = Brand.fresh("late-headers");
    gw.sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.delayed(SILENCE));

    long start = System.nanoTime();
    HttpResponse<String> r = post(gw, MESSAGES, claude(false), brand);

    assertEquals(200, r.statusCode(), r.body());
    assertTrue(millisSince(start) >= SILENCE.toMillis() - 100, "the provider took its time");
    assertTrue(r.body().contains(SimConfig.DEFAULT_REPLY), r.body());
    assertEquals(1, gw.sim.received(SimRoute.ANTHROPIC_MESSAGES).size(), "sent once");
    assertEquals(
        0,
        Costs.anthropic(Costs.CLAUDE_OPUS, USAGE).compareTo(spent(gw, brand)),
        "billed its real cost once");
  }

  @Test
  void aRoutedAnswerWhoseHeadersComeLateIsNoFailureAndIsNotFailedOver() throws Exception {
    Brand brand = Brand.fresh("routed-late");
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.delayed(SILENCE));

    HttpResponse<String> r = post(gw, ROUTER, routed(false), brand);

    assertEquals(200, r.statusCode(), r.body());
    assertEquals("openai", r.headers().firstValue("x-gateway-provider").orElse(null));
    assertEquals(1, gw.sim.received(SimRoute.OPENAI_CHAT).size(), "not retried");
    assertTrue(gw.sim.received(SimRoute.ANTHROPIC_MESSAGES).isEmpty(), "not failed over");
    assertEquals(0, Costs.openAi(Costs.GPT_SOL, USAGE).compareTo(spent(gw, brand)));
  }

  /**
   * The server's request-timeout (11 min shipped) is sized for ONE provider call: its response
   * start (600 s) plus a margin. A batch routed call may start its last attempt up to its budget
   * (10 min) in, and that attempt may take its whole response start too. Here (scaled 50 times)
   * OpenAI asks for a 9 s pause, then fails with 500 at 9 s; Claude, started within the 12 s
   * budget, takes 5 s: its answer comes 14 s in, past the 13.2 s request-timeout. The caller must
   * get it, not Pekko's 503 for an answer the provider bills.
   */
  @Test
  void aBatchFailoverStartedLateInItsBudgetIsNotCutByTheRequestTimeout() throws Exception {
    Brand brand = Brand.fresh("late-failover");
    chained.sim.script(SimRoute.OPENAI_CHAT, Fault.status(429, Map.of("retry-after", "9")));
    chained.sim.script(SimRoute.OPENAI_CHAT, Fault.status(500));
    chained.sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.delayed(Duration.ofSeconds(5)));

    long start = System.nanoTime();
    HttpResponse<String> r =
        chained.send(
            chained
                .postJson(ROUTER, routed(false), brand)
                .header("x-request-id", brand.id())
                .header("x-priority", "batch")
                .timeout(Duration.ofSeconds(60))
                .build());

    assertEquals(200, r.statusCode(), r.body());
    assertTrue(millisSince(start) >= 13_200, "past the server's request-timeout");
    assertEquals("anthropic", r.headers().firstValue("x-gateway-provider").orElse(null));
    assertEquals("true", r.headers().firstValue("x-gateway-failover").orElse(null));
    assertEquals(0, Costs.anthropic(Costs.CLAUDE_OPUS, USAGE).compareTo(spent(chained, brand)));
  }

  @Test
  void aPassThroughStreamSilentForAWhileCompletesWhole() throws Exception {
    Brand brand = Brand.fresh("stream-silence");
    // After message_start, content_block_start, ping and the first text delta.
    gw.sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.streamPause(4, SILENCE));

    long start = System.nanoTime();
    HttpResponse<String> r = post(gw, MESSAGES, claude(true), brand);

    assertEquals(200, r.statusCode(), r.body());
    assertTrue(millisSince(start) >= SILENCE.toMillis() - 100, "the pause happened");
    assertTrue(r.body().contains("message_stop"), "whole: " + r.body());
    assertEquals(0, Costs.anthropic(Costs.CLAUDE_OPUS, USAGE).compareTo(spent(gw, brand)));
  }

  @Test
  void aRoutedStreamSilentForAWhileCompletesWhole() throws Exception {
    Brand brand = Brand.fresh("routed-silence");
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.streamPause(2, SILENCE));

    HttpResponse<String> r = post(gw, ROUTER, routed(true), brand);

    assertEquals(200, r.statusCode(), r.body());
    assertEquals("openai", r.headers().firstValue("x-gateway-provider").orElse(null));
    assertTrue(r.body().contains("data: [DONE]"), "whole: " + r.body());
    assertEquals(1, gw.sim.received(SimRoute.OPENAI_CHAT).size(), "not retried");
    assertEquals(0, Costs.openAi(Costs.GPT_SOL, USAGE).compareTo(spent(gw, brand)));
  }

  @Test
  void aStreamLongerThanTheMaxCallDurationIsCutAndKeepsItsWorstCase() throws Exception {
    Brand brand = Brand.fresh("too-long");
    // About a dozen events 800 ms apart: some 10 s, well past the 3 s a call may last here.
    bounded.sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.slowDrip(Duration.ofMillis(800)));

    long start = System.nanoTime();
    HttpResponse<String> r;
    try {
      r = post(bounded, MESSAGES, claude(true), brand);
      assertEquals(200, r.statusCode(), r.body());
      assertFalse(r.body().contains("message_stop"), "cut before the end: " + r.body());
    } catch (java.io.IOException cutMidStream) {
      // The caller may see the cut as a broken chunked body: equally a cut.
    }
    assertTrue(
        millisSince(start) < 8_000,
        "cut near the limit, not at the end: " + millisSince(start) + " ms");

    JsonNode line = bounded.awaitOnlyAccessLine(brand.id());
    assertTrue(line.path("error").asText().contains("max_call_duration"), line.toString());
    assertEquals(
        line.path("reserved_usd").asText(),
        line.path("settled_usd").asText(),
        "kept at the worst case: " + line);
    BigDecimal spent = spent(bounded, brand);
    assertTrue(
        spent.compareTo(Costs.anthropic(Costs.CLAUDE_OPUS, USAGE)) > 0,
        "the worst case, not the usage: " + spent);
  }
}
