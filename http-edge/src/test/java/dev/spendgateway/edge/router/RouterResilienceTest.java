package dev.spendgateway.edge.router;

import static dev.spendgateway.edge.router.RouterGateway.attempts;
import static dev.spendgateway.edge.router.RouterGateway.post;
import static dev.spendgateway.edge.router.RouterGateway.postAsync;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.call.ProviderGuards;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.GatewayPerClass;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.ReceivedCall;
import dev.spendgateway.sim.SimRoute;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * 410 model circuits, Retry-After and budgets, the provider breaker, admission pools, conversation
 * stickiness and the structured-output downgrades — each against the simulator's scripted faults.
 */
class RouterResilienceTest extends GatewayPerClass {
  @Override
  protected TestGateway startGateway() throws Exception {
    return RouterGateway.start("router/resilience-test.conf", "RouterResilienceTest");
  }

  private static String newId() {
    return "res-" + UUID.randomUUID();
  }

  private static Map<String, String> headers(String id, String... extra) {
    Map<String, String> m = RouterGateway.spendHeaders(id);
    for (int i = 0; i < extra.length; i += 2) {
      m.put(extra[i], extra[i + 1]);
    }
    return m;
  }

  private List<String> ledger(String id, int expected) {
    return attempts(gw, id, expected).stream().map(RouterGateway.Entry::brief).toList();
  }

  /** Waits until the batch lane towards OpenAI has {@code calls} calls in its slot or queue. */
  private void awaitBatchLaneToOpenAiHolds(int calls) throws Exception {
    Eventually.until(
        "the batch lane to OpenAI holds " + calls + " calls",
        Duration.ofSeconds(20),
        () -> batchToOpenAi("gateway_pool_in_flight") + batchToOpenAi("gateway_queue_depth"),
        held -> held >= calls);
  }

  /** One of the admission gauges in /metrics, for the batch pool towards OpenAI. */
  private double batchToOpenAi(String gauge) throws Exception {
    String metrics =
        gw.send(gw.get("/metrics").header("authorization", "Bearer " + RouterGateway.TOKEN).build())
            .body();
    return metrics
        .lines()
        .filter(
            l ->
                l.startsWith(gauge + "{")
                    && l.contains("pool=\"batch\"")
                    && l.contains("provider=\"openai\""))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + gauge + " for batch/openai in " + metrics));
  }

  private static String provider(HttpResponse<String> r) {
    return r.headers().firstValue("x-gateway-provider").orElse("none");
  }

  // --- 410 -------------------------------------------------------------------------------------

  @Test
  void goneOpensTheModelsCircuitNextCallsGoStraightToTheFallbackAndWithoutOneItIs503()
      throws Exception {
    Logger routerLog = (Logger) LoggerFactory.getLogger(ProviderGuards.class);
    ListAppender<ILoggingEvent> alarms = new ListAppender<>();
    alarms.start();
    routerLog.addAppender(alarms);
    try {
      gw.sim.script(SimRoute.OPENAI_CHAT, Fault.status(410));
      String first = newId();
      HttpResponse<String> r = post(gw, RouterGateway.chat("legacy-draft", false), headers(first));
      assertEquals(200, r.statusCode(), r.body());
      assertEquals("anthropic", provider(r));
      assertEquals(List.of("openai:410:zero", "anthropic:200:actual"), ledger(first, 2));
      assertEquals(
          1,
          alarms.list.stream()
              .filter(
                  e ->
                      e.getLevel() == Level.ERROR
                          && e.getFormattedMessage().contains("ALARM model retired")
                          && e.getFormattedMessage().contains("gpt-6-sol")
                          && e.getFormattedMessage().contains("legacy-draft"))
              .count(),
          "one alarm line");

      for (int i = 0; i < 3; i++) {
        String next = newId();
        HttpResponse<String> again =
            post(gw, RouterGateway.chat("legacy-draft", i == 1), headers(next));
        assertEquals(200, again.statusCode());
        assertEquals("anthropic", provider(again));
        assertEquals("true", again.headers().firstValue("x-gateway-failover").orElse(null));
        assertEquals(List.of("anthropic:200:actual"), ledger(next, 1));
      }
      assertEquals(
          1, gw.sim.received(SimRoute.OPENAI_CHAT).size(), "the retired model is not called again");

      // The circuit is per MODEL: long-draft's gpt-6.1-sol still goes to OpenAI.
      HttpResponse<String> other =
          post(gw, RouterGateway.chat("long-draft", false), headers(newId()));
      assertEquals("openai", provider(other));

      // 'legacy-solo' has the same primary and no fallback: a clear 503 model_retired, nothing sent
      // upstream.
      int before = gw.sim.received().size();
      HttpResponse<String> solo =
          post(gw, RouterGateway.chat("legacy-solo", false), headers(newId()));
      assertEquals(503, solo.statusCode());
      JsonNode error = TestGateway.JSON.readTree(solo.body()).path("error");
      assertEquals("model_retired", error.path("type").asText());
      assertTrue(error.path("message").asText().contains("gpt-6-sol"), solo.body());
      assertTrue(error.path("message").asText().contains("'legacy-solo'"), solo.body());
      assertEquals(before, gw.sim.received().size());
      assertEquals(
          1,
          alarms.list.stream().filter(e -> e.getFormattedMessage().contains("ALARM")).count(),
          "the alarm is raised once per opening");
    } finally {
      routerLog.detachAppender(alarms);
    }
  }

  // --- 429: Retry-After and budgets
  // ---------------------------------------------------------------

  @Test
  void retryAfterIsHonouredOnTheSameProvider() {
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.rateLimited(1));
    String id = newId();
    long t0 = System.nanoTime();
    HttpResponse<String> r = post(gw, RouterGateway.chat("fast-summary", false), headers(id));
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertEquals(200, r.statusCode());
    assertEquals("openai", provider(r));
    assertTrue(ms >= 1000 && ms < 2500, "waited the advised second, took " + ms + " ms");
    assertEquals(List.of("openai:429:zero", "openai:200:actual"), ledger(id, 2));
  }

  @Test
  void aRetryAfterBeyondTheMaximumFailsOverWithoutWaiting() {
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.rateLimited(30));
    long t0 = System.nanoTime();
    HttpResponse<String> r = post(gw, RouterGateway.chat("fast-summary", false), headers(newId()));
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertEquals("anthropic", provider(r));
    assertTrue(ms < 900, "no wait, took " + ms + " ms");
  }

  @Test
  void attemptsAreBoundedByTheInteractiveBudget() {
    gw.sim.scriptForever(SimRoute.OPENAI_CHAT, Fault.status(429));
    gw.sim.scriptForever(SimRoute.ANTHROPIC_MESSAGES, Fault.status(429));
    String id = newId();
    HttpResponse<String> r = post(gw, RouterGateway.chat("fast-summary", false), headers(id));
    assertEquals(429, r.statusCode(), r.body());
    assertTrue(r.body().contains("rate_limited"), r.body());
    assertEquals(
        "1",
        r.headers().firstValue("retry-after").orElse(null),
        "no provider advice: the longest backoff (10 ms here), in whole seconds, so the caller's SDK"
            + " waits instead of retrying at once");
    assertEquals(
        List.of("openai:429:zero", "openai:429:zero", "anthropic:429:zero", "anthropic:429:zero"),
        ledger(id, 4));
    assertEquals(
        4, gw.sim.received().size(), "interactive max-attempts = 4, both providers together");
  }

  @Test
  void totalTimeIsBoundedByTheBatchBudget() {
    // batch: 8 attempts but 1500 ms. Each side asks for 1 s: one wait fits, a second does not.
    gw.sim.scriptForever(SimRoute.OPENAI_CHAT, Fault.rateLimited(1));
    gw.sim.scriptForever(SimRoute.ANTHROPIC_MESSAGES, Fault.rateLimited(1));
    String id = newId();
    long t0 = System.nanoTime();
    HttpResponse<String> r =
        post(gw, RouterGateway.chat("fast-summary", false), headers(id, "x-priority", "batch"));
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertEquals(429, r.statusCode(), r.body());
    assertEquals(
        "1",
        r.headers().firstValue("retry-after").orElse(null),
        "the provider's advice is passed on");
    assertTrue(ms < 2500, "bounded by the 1.5 s budget, took " + ms + " ms");
    assertEquals(
        List.of("openai:429:zero", "openai:429:zero", "anthropic:429:zero"), ledger(id, 3));
  }

  // --- breaker -----------------------------------------------------------------------------------

  @Test
  void theProviderBreakerOpensOnConsecutiveFailuresAndProbesAgain() {
    gw.sim.scriptTimes(SimRoute.OPENAI_CHAT, Fault.status(500), 3);
    for (int i = 0; i < 3; i++) {
      assertEquals(
          "anthropic",
          provider(post(gw, RouterGateway.chat("fast-summary", false), headers(newId()))));
    }
    String open = newId();
    HttpResponse<String> r = post(gw, RouterGateway.chat("fast-summary", false), headers(open));
    assertEquals("anthropic", provider(r));
    assertEquals(
        3,
        gw.sim.received(SimRoute.OPENAI_CHAT).size(),
        "the open breaker kept the call away from OpenAI");
    assertEquals("breaker_open", attempts(gw, open, 2).get(0).error());

    // The test's own pace: past the 500 ms reset timeout, so the next call is the half-open probe,
    // which succeeds and closes it.
    RouterGateway.pause(700);
    HttpResponse<String> probe =
        post(gw, RouterGateway.chat("fast-summary", false), headers(newId()));
    assertEquals("openai", provider(probe));
    assertEquals(4, gw.sim.received(SimRoute.OPENAI_CHAT).size());
  }

  // --- pools -------------------------------------------------------------------------------------

  @Test
  void aFullQueueAnswers429AtOnceWithRetryAfter() throws Exception {
    // batch lane: 1 slot + 2 queued for OpenAI. Three slow calls fill it; the fourth is refused.
    gw.sim.scriptTimes(SimRoute.OPENAI_CHAT, Fault.delayed(Duration.ofMillis(800)), 3);
    List<CompletableFuture<HttpResponse<String>>> slow = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      slow.add(
          postAsync(
              gw,
              RouterGateway.chat("fast-summary", false),
              headers(newId(), "x-priority", "batch")));
      awaitBatchLaneToOpenAiHolds(i + 1); // in order: the first takes the slot, the next two queue
    }
    long t0 = System.nanoTime();
    HttpResponse<String> refused =
        post(
            gw, RouterGateway.chat("fast-summary", false), headers(newId(), "x-priority", "batch"));
    long ms = (System.nanoTime() - t0) / 1_000_000;
    assertEquals(429, refused.statusCode(), refused.body());
    assertTrue(refused.headers().firstValue("retry-after").isPresent());
    assertTrue(ms < 400, "answered at once, took " + ms + " ms");
    assertEquals("true", refused.headers().firstValue("x-gateway-error").orElse(null));

    // Interactive shares nothing with batch: it is served while the batch lane is full.
    HttpResponse<String> interactive =
        post(gw, RouterGateway.chat("fast-summary", false), headers(newId()));
    assertEquals(200, interactive.statusCode());
    for (CompletableFuture<HttpResponse<String>> f : slow) {
      assertEquals(200, f.get().statusCode());
    }
    assertEquals(
        3 + 1,
        gw.sim.received(SimRoute.OPENAI_CHAT).size(),
        "the refused call never went upstream");
  }

  // --- stickiness
  // ----------------------------------------------------------------------------------

  @Test
  void aConversationSwitchesOnceAndStaysOnTheFallback() {
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.status(503));
    String conversation = "conv-" + UUID.randomUUID();
    HttpResponse<String> first =
        post(
            gw,
            RouterGateway.chat("fast-summary", false),
            headers(newId(), "x-conversation-id", conversation));
    assertEquals("anthropic", provider(first));
    for (int i = 0; i < 2; i++) {
      HttpResponse<String> later =
          post(
              gw,
              RouterGateway.chat("fast-summary", false),
              headers(newId(), "x-conversation-id", conversation));
      assertEquals("anthropic", provider(later));
      assertEquals("true", later.headers().firstValue("x-gateway-failover").orElse(null));
    }
    assertEquals(
        1,
        gw.sim.received(SimRoute.OPENAI_CHAT).size(),
        "OpenAI is healthy again but the conversation stays");
    HttpResponse<String> other =
        post(
            gw,
            RouterGateway.chat("fast-summary", false),
            headers(newId(), "x-conversation-id", "conv-" + UUID.randomUUID()));
    assertEquals("openai", provider(other));
  }

  // --- structured output -------------------------------------------------------------------------

  private static String structured(String schemaProperty) {
    return "{\"model\":\"structured-analysis\",\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":\"Analyse.\"}],"
        + "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"r\",\"strict\":true,"
        + "\"schema\":{\"type\":\"object\",\"properties\":{\""
        + schemaProperty
        + "\":{\"type\":\"string\"}}}}}}";
  }

  private static String responseFormat(ReceivedCall call) {
    return call.body().orElseThrow().path("response_format").path("type").asText();
  }

  @Test
  void aStrictSchemaRejectionIsRetriedAsJsonObjectAndRemembered() {
    gw.sim.script(
        SimRoute.OPENAI_CHAT,
        Fault.status(
            400,
            Map.of(),
            "{\"error\":{\"message\":\"Invalid schema for response_format 'r': 'additionalProperties' is required to be supplied and to be false.\","
                + "\"type\":\"invalid_request_error\",\"param\":\"response_format\",\"code\":\"invalid_json_schema\"}}"));
    String property = "p" + UUID.randomUUID().toString().substring(0, 8);
    String id = newId();
    HttpResponse<String> r = post(gw, structured(property), headers(id));
    assertEquals(200, r.statusCode(), r.body());
    assertEquals("openai", provider(r));
    assertEquals(List.of("openai:400:zero", "openai:200:actual"), ledger(id, 2));
    List<ReceivedCall> calls = gw.sim.received(SimRoute.OPENAI_CHAT);
    assertEquals(
        List.of("json_schema", "json_object"),
        calls.stream().map(RouterResilienceTest::responseFormat).toList());

    // Same schema again: straight to json_object, no 400 paid first.
    HttpResponse<String> again = post(gw, structured(property), headers(newId()));
    assertEquals(200, again.statusCode());
    assertEquals("json_object", responseFormat(gw.sim.received(SimRoute.OPENAI_CHAT).get(2)));
  }

  @Test
  void aGrammarTooLargeOnClaudeMovesTheSchemaIntoTheSystemPrompt() {
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.status(503));
    gw.sim.script(
        SimRoute.ANTHROPIC_MESSAGES,
        Fault.status(
            400,
            Map.of(),
            "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"The compiled grammar is too large.\"}}"));
    String id = newId();
    HttpResponse<String> r = post(gw, structured("q"), headers(id));
    assertEquals(200, r.statusCode(), r.body());
    assertEquals("anthropic", provider(r));
    assertEquals(
        List.of("openai:503:zero", "anthropic:400:zero", "anthropic:200:actual"), ledger(id, 3));
    List<ReceivedCall> claude = gw.sim.received(SimRoute.ANTHROPIC_MESSAGES);
    assertFalse(
        claude.get(0).body().orElseThrow().path("output_config").isMissingNode(),
        "native schema first");
    JsonNode retried = claude.get(1).body().orElseThrow();
    assertTrue(
        retried.path("output_config").path("format").isMissingNode(), "no grammar on the retry");
    assertTrue(
        retried.path("system").toString().contains("\\\"q\\\""),
        "the schema is in the system prompt: " + retried.path("system"));
  }
}
