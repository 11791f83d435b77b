package dev.spendgateway.edge.router;

import static dev.spendgateway.edge.router.RouterGateway.attempts;
import static dev.spendgateway.edge.router.RouterGateway.post;
import static dev.spendgateway.edge.router.RouterGateway.usage;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.GatewayPerClass;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The router's failover table (docs/ROUTER.md): (primary fault, fallback state) → (final status,
 * provider used, failover flag, ledger entries per attempt). Each ledger entry is {@code
 * provider:status:settlement} read from the attempt's access-log line, where settlement is {@code
 * zero} (voided: not billed), {@code actual} (settled from the reported usage) or {@code worst}
 * (kept at the reservation: cut or unknown). Profile {@code fast-summary}: OpenAI gpt-6.1-sol-mini
 * first, Claude Haiku as fallback.
 *
 * <p>Cuts after the first byte use {@code streamTruncated} (the body ends early, no final event):
 * with {@code streamCut} the connection reset can reach the gateway before it read the events, and
 * the kernel then discards them — the gateway rightly sees a cut before the first byte and fails
 * over, so such a row would depend on machine load.
 */
class RouterFailoverTableTest extends GatewayPerClass {
  @Override
  protected TestGateway startGateway() throws Exception {
    return RouterGateway.start("router/router-test.conf", "RouterFailoverTableTest");
  }

  record Row(
      String sentence,
      List<Fault> openai,
      List<Fault> anthropic,
      boolean stream,
      int status,
      String provider,
      boolean failover,
      List<String> ledger,
      String bodyCheck) {
    @Override
    public String toString() {
      return sentence;
    }
  }

  private static Row json(
      String sentence,
      List<Fault> openai,
      List<Fault> anthropic,
      int status,
      String provider,
      boolean failover,
      List<String> ledger,
      String bodyCheck) {
    return new Row(
        sentence, openai, anthropic, false, status, provider, failover, ledger, bodyCheck);
  }

  private static Row stream(
      String sentence,
      List<Fault> openai,
      List<Fault> anthropic,
      int status,
      String provider,
      boolean failover,
      List<String> ledger,
      String bodyCheck) {
    return new Row(
        sentence, openai, anthropic, true, status, provider, failover, ledger, bodyCheck);
  }

  private static final String ANSWER = "answer";
  private static final String DONE = "done";
  private static final String CUT = "cut";

  static Stream<Arguments> table() {
    List<Fault> none = List.of();
    Stream<Row> failoverClasses =
        Stream.of(401, 402, 403, 408, 409, 500, 501, 502, 503, 504)
            .map(
                s ->
                    json(
                        "OpenAI " + s + " fails over to a healthy Claude",
                        List.of(Fault.status(s)),
                        none,
                        200,
                        "anthropic",
                        true,
                        List.of("openai:" + s + ":zero", "anthropic:200:actual"),
                        ANSWER));
    Stream<Row> rows =
        Stream.of(
            json(
                "a healthy OpenAI answers itself",
                none,
                none,
                200,
                "openai",
                false,
                List.of("openai:200:actual"),
                ANSWER),
            json(
                "an OpenAI connection reset after the request was sent fails over; the request may have been"
                    + " billed (connection_lost), so that attempt keeps its worst case",
                List.of(Fault.connectionReset()),
                none,
                200,
                "anthropic",
                true,
                List.of("openai:0:worst", "anthropic:200:actual"),
                ANSWER),
            json(
                "an OpenAI 429 without Retry-After retries once with backoff, then fails over",
                List.of(Fault.status(429), Fault.status(429)),
                none,
                200,
                "anthropic",
                true,
                List.of("openai:429:zero", "openai:429:zero", "anthropic:200:actual"),
                ANSWER),
            json(
                "an OpenAI 429 that clears on the retry stays on OpenAI",
                List.of(Fault.status(429)),
                none,
                200,
                "openai",
                false,
                List.of("openai:429:zero", "openai:200:actual"),
                ANSWER),
            json(
                "an OpenAI 429 asking for longer than max-retry-after fails over at once",
                List.of(Fault.rateLimited(30)),
                none,
                200,
                "anthropic",
                true,
                List.of("openai:429:zero", "anthropic:200:actual"),
                ANSWER),
            json(
                "an OpenAI 429 whose retry-after-ms is too large for a long (2^64 ns) fails over at"
                    + " once, never read as a wait of 0",
                List.of(Fault.status(429, Map.of("retry-after-ms", "18446744073709.551616"))),
                none,
                200,
                "anthropic",
                true,
                List.of("openai:429:zero", "anthropic:200:actual"),
                ANSWER),
            json(
                "an invalid request (OpenAI 400) goes back to the caller, no failover",
                List.of(Fault.status(400)),
                none,
                400,
                "openai",
                false,
                List.of("openai:400:zero"),
                "invalid_request_error"),
            json(
                "a content refusal (OpenAI 400 content_policy_violation) goes back, no failover",
                List.of(
                    Fault.status(
                        400,
                        Map.of(),
                        "{\"error\":{\"message\":\"Your request was rejected by the safety system.\",\"type\":\"invalid_request_error\",\"param\":null,\"code\":\"content_policy_violation\"}}")),
                none,
                400,
                "openai",
                false,
                List.of("openai:400:zero"),
                "content_policy_violation"),
            json(
                "an OpenAI 404 goes back to the caller, no failover",
                List.of(Fault.status(404)),
                none,
                404,
                "openai",
                false,
                List.of("openai:404:zero"),
                "error"),
            json(
                "an OpenAI 422 goes back to the caller, no failover",
                List.of(Fault.status(422)),
                none,
                422,
                "openai",
                false,
                List.of("openai:422:zero"),
                "error"),
            json(
                "OpenAI 503 then Claude 529 once: Claude is retried and answers",
                List.of(Fault.status(503)),
                List.of(Fault.overloaded()),
                200,
                "anthropic",
                true,
                List.of("openai:503:zero", "anthropic:529:zero", "anthropic:200:actual"),
                ANSWER),
            json(
                "OpenAI 503 and Claude 529 throughout: bounded by 4 attempts, then 503 upstream_unavailable",
                List.of(Fault.status(503), Fault.status(503)),
                List.of(Fault.overloaded(), Fault.overloaded(), Fault.overloaded()),
                503,
                "anthropic",
                true,
                List.of(
                    "openai:503:zero",
                    "anthropic:529:zero",
                    "anthropic:529:zero",
                    "anthropic:529:zero"),
                "upstream_unavailable"),
            json(
                "OpenAI 503 and Claude 'credit balance is too low': no way back, 503 upstream_unavailable",
                List.of(Fault.status(503)),
                List.of(Fault.creditBalanceTooLow()),
                503,
                "anthropic",
                true,
                List.of("openai:503:zero", "anthropic:400:zero"),
                "upstream_unavailable"),
            json(
                "OpenAI 500 and a Claude caller error: Claude's 400 goes back in the OpenAI shape",
                List.of(Fault.status(500)),
                List.of(Fault.status(400)),
                400,
                "anthropic",
                true,
                List.of("openai:500:zero", "anthropic:400:zero"),
                "invalid_request_error"),
            json(
                "a JSON answer cut mid-body (no byte reached the caller) fails over; the cut attempt keeps its worst case",
                List.of(Fault.streamCut(0)),
                none,
                200,
                "anthropic",
                true,
                List.of("openai:0:worst", "anthropic:200:actual"),
                ANSWER),
            stream(
                "a healthy OpenAI stream ends with [DONE]",
                none,
                none,
                200,
                "openai",
                false,
                List.of("openai:200:actual"),
                DONE),
            stream(
                "an OpenAI 503 on a stream fails over; Claude's SSE is re-emitted as OpenAI chunks",
                List.of(Fault.status(503)),
                none,
                200,
                "anthropic",
                true,
                List.of("openai:503:zero", "anthropic:200:actual"),
                DONE),
            stream(
                "an OpenAI stream cut before its first byte fails over (worst case kept for the cut attempt)",
                List.of(Fault.streamCut(0)),
                none,
                200,
                "anthropic",
                true,
                List.of("openai:0:worst", "anthropic:200:actual"),
                DONE),
            stream(
                "a Claude stream cut after the first byte ends with an error event, worst case kept",
                List.of(Fault.status(502)),
                List.of(Fault.streamTruncated(3)),
                200,
                "anthropic",
                true,
                List.of("openai:502:zero", "anthropic:200:worst"),
                CUT),
            stream(
                "an OpenAI stream that ends early (no [DONE]) after the first byte ends with an error event, worst case kept",
                List.of(Fault.streamTruncated(3)),
                none,
                200,
                "openai",
                false,
                List.of("openai:200:worst"),
                CUT));
    return Stream.concat(failoverClasses, rows).map(Arguments::of);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("table")
  void row(Row row) throws Exception {
    if (!row.openai().isEmpty()) {
      gw.sim.script(SimRoute.OPENAI_CHAT, row.openai().toArray(Fault[]::new));
    }
    if (!row.anthropic().isEmpty()) {
      gw.sim.script(SimRoute.ANTHROPIC_MESSAGES, row.anthropic().toArray(Fault[]::new));
    }
    String id = "table-" + UUID.randomUUID();
    HttpResponse<String> r =
        post(gw, RouterGateway.chat("fast-summary", row.stream()), RouterGateway.spendHeaders(id));

    assertEquals(row.status(), r.statusCode(), () -> "status; body " + r.body());
    assertEquals(
        row.provider(),
        r.headers().firstValue("x-gateway-provider").orElse(null),
        "x-gateway-provider");
    assertEquals(
        Boolean.toString(row.failover()),
        r.headers().firstValue("x-gateway-failover").orElse(null),
        "x-gateway-failover");
    assertEquals(id, r.headers().firstValue("x-request-id").orElse(null), "x-request-id");
    List<String> ledger =
        attempts(gw, id, row.ledger().size()).stream().map(RouterGateway.Entry::brief).toList();
    assertEquals(row.ledger(), ledger, "ledger entries per attempt");
    checkBody(row, r.body());
  }

  private static void checkBody(Row row, String body) throws Exception {
    switch (row.bodyCheck()) {
      case ANSWER -> {
        JsonNode answer = TestGateway.JSON.readTree(body);
        assertEquals("chat.completion", answer.path("object").asText());
        assertEquals(
            "fast-summary",
            answer.path("model").asText(),
            "the model is the profile, whoever answered");
        assertFalse(
            answer.path("choices").path(0).path("message").path("content").asText().isEmpty());
        assertTrue(answer.path("usage").path("total_tokens").asInt() > 0);
      }
      case DONE -> {
        assertTrue(body.contains("\"chat.completion.chunk\""), body);
        assertTrue(body.contains("\"model\":\"fast-summary\""), body);
        // The table's callers do not ask for stream usage: the gateway counts it but does not
        // forward it.
        assertFalse(
            body.contains("\"choices\":[]"),
            "no usage chunk for a caller that did not ask: " + body);
        assertTrue(body.strip().endsWith("data: [DONE]"), body);
        assertFalse(body.contains("\"error\""), body);
      }
      case CUT -> {
        assertTrue(
            body.contains("\"chat.completion.chunk\""), "some chunks reached the caller: " + body);
        assertTrue(
            body.contains("\"upstream_cut\""), "the stream ends with an error event: " + body);
        assertFalse(body.contains("[DONE]"), body);
      }
      default -> {
        JsonNode error = TestGateway.JSON.readTree(body).path("error");
        assertTrue(error.isObject(), "OpenAI error shape: " + body);
        assertTrue(body.contains(row.bodyCheck()), body);
      }
    }
  }

  @Test
  void unknownProfileIs400ListingTheProfiles() throws Exception {
    String id = "table-" + UUID.randomUUID();
    HttpResponse<String> r =
        post(gw, RouterGateway.chat("gpt-6.1-sol", false), RouterGateway.spendHeaders(id));
    assertEquals(400, r.statusCode());
    JsonNode error = TestGateway.JSON.readTree(r.body()).path("error");
    assertEquals("model", error.path("param").asText());
    for (String profile : List.of("fast-summary", "long-draft", "structured-analysis", "solo")) {
      assertTrue(error.path("message").asText().contains(profile), r.body());
    }
    assertEquals("true", r.headers().firstValue("x-gateway-error").orElse(null));
    assertEquals(0, gw.sim.received().size(), "nothing went upstream");
  }

  @Test
  void aRequestTheFallbackCannotServeDoesNotFailOver() throws Exception {
    // fast-summary's Haiku has no native json_schema: an OpenAI outage gives a clear 503, not
    // Claude.
    gw.sim.scriptTimes(SimRoute.OPENAI_CHAT, Fault.status(503), 4);
    String id = "table-" + UUID.randomUUID();
    String body =
        "{\"model\":\"fast-summary\",\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
            + "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\",\"strict\":true,"
            + "\"schema\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},\"required\":[\"a\"],\"additionalProperties\":false}}}}";
    HttpResponse<String> r = post(gw, body, RouterGateway.spendHeaders(id));
    assertEquals(503, r.statusCode(), r.body());
    assertTrue(r.body().contains("fallback_unsupported"), r.body());
    assertTrue(r.body().contains("json_schema"), r.body());
    assertEquals(0, gw.sim.received(SimRoute.ANTHROPIC_MESSAGES).size());
    assertEquals(
        List.of("openai:503:zero", "openai:503:zero", "openai:503:zero", "openai:503:zero"),
        attempts(gw, id, 4).stream().map(RouterGateway.Entry::brief).toList());
  }

  @Test
  void aRequestThatDoesNotTranslateDoesNotFailOver() {
    // n = 2 has no Claude equivalent: during an OpenAI outage the caller is told why, in a 503.
    gw.sim.scriptTimes(SimRoute.OPENAI_CHAT, Fault.status(503), 4);
    String body =
        "{\"model\":\"fast-summary\",\"max_tokens\":64,\"n\":2,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    HttpResponse<String> r =
        post(gw, body, RouterGateway.spendHeaders("table-" + UUID.randomUUID()));
    assertEquals(503, r.statusCode(), r.body());
    assertTrue(r.body().contains("fallback_unsupported"), r.body());
    assertEquals(0, gw.sim.received(SimRoute.ANTHROPIC_MESSAGES).size());
  }

  @Test
  void theV1PrefixSpeaksOpenAi() throws Exception {
    Map<String, String> noToken =
        new java.util.LinkedHashMap<>(RouterGateway.spendHeaders("table-" + UUID.randomUUID()));
    noToken.remove("authorization");
    HttpResponse<String> unauthorized =
        post(gw, RouterGateway.chat("fast-summary", false), noToken);
    assertEquals(401, unauthorized.statusCode());
    assertEquals(
        "invalid_api_key",
        TestGateway.JSON.readTree(unauthorized.body()).path("error").path("type").asText());

    HttpResponse<String> missing =
        gw.http.send(
            java.net.http.HttpRequest.newBuilder(java.net.URI.create(gw.base + "/v1/embeddings"))
                .header("authorization", "Bearer " + RouterGateway.TOKEN)
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(404, missing.statusCode());
    assertTrue(
        TestGateway.JSON.readTree(missing.body()).path("error").has("param"),
        "OpenAI shape: " + missing.body());
    assertEquals(0, gw.sim.received().size());
  }

  @Test
  void everyReservationIsClosedAfterTheTable() throws Exception {
    // Runs in any order with the rows; whatever ran before has closed its reservations.
    post(
        gw,
        RouterGateway.chat("fast-summary", false),
        RouterGateway.spendHeaders("table-" + UUID.randomUUID()));
    int open =
        Eventually.until(
            "no reservation is open",
            java.time.Duration.ofSeconds(5),
            () -> usage(gw).path("openReservations").asInt(-1),
            n -> n == 0);
    assertEquals(0, open, "open reservations");
  }
}
