package dev.spendgateway.edge.reliability;

import static dev.spendgateway.edge.testkit.TestGateway.ANTHROPIC;
import static dev.spendgateway.edge.testkit.TestGateway.CHAT;
import static dev.spendgateway.edge.testkit.TestGateway.RESPONSES;
import static dev.spendgateway.edge.testkit.TestGateway.cap;
import static dev.spendgateway.edge.testkit.TestGateway.money;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every simulator fault on every pass-through route: what the caller gets, what the ledger keeps
 * (the settlement rules of {@code Settlement}: an error status is not billed → 0; a success with
 * usage → the actual cost; a cut, unreadable or timed-out answer, or a connection lost after the
 * request was sent → the worst case), exactly one access line, no gateway-made 5xx but the
 * documented ones, no reservation left open, and the upstream pool still usable: a normal call
 * right after each fault succeeds. The faults that live on the connection or the stream (no start,
 * a cut, a clean early end, a drip) are also run with the gateway reaching the provider over HTTP/2
 * (rows "over h2c": each call one stream of a shared connection); a reset before any header has no
 * HTTP/2 counterpart in the simulator (it resets whole connections, which its h2c listener does not
 * hook).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FaultMatrixTest {
  /** The only 5xx the gateway itself may answer with (docs/ROUTER.md, "Errors"). */
  private static final Set<String> DOCUMENTED_GATEWAY_5XX =
      Set.of("upstream_unavailable", "upstream_unreadable", "ledger_unavailable");

  /** The gateway of the row being run: {@link #overHttp1} or {@link #overH2c}. */
  private TestGateway gw;

  private TestGateway overHttp1;
  private TestGateway overH2c;

  /** How the gateway reaches the provider. */
  enum Upstream {
    HTTP1(""),
    H2C(" over h2c");

    final String words;

    Upstream(String words) {
      this.words = words;
    }
  }

  /** Faults of the connection or the stream: run over HTTP/2 as well. */
  private static final Set<String> ALSO_OVER_H2C =
      Set.of(
          "no response start within the 1s timeout",
          "a connection cut after 2 events",
          "a body ended cleanly after 2 events",
          "events dripping 60ms apart");

  /** What a clean call on each route settles at: the "actual" the fault rows are held to. */
  private final Map<Route, BigDecimal> actualOf = new EnumMap<>(Route.class);

  /** A pass-through route with a body the policy accepts, JSON or streamed. */
  enum Route {
    ANTHROPIC_JSON("anthropic messages (JSON)", ANTHROPIC, SimRoute.ANTHROPIC_MESSAGES, false),
    ANTHROPIC_STREAM("anthropic messages (stream)", ANTHROPIC, SimRoute.ANTHROPIC_MESSAGES, true),
    CHAT_JSON("openai chat (JSON)", CHAT, SimRoute.OPENAI_CHAT, false),
    CHAT_STREAM("openai chat (stream)", CHAT, SimRoute.OPENAI_CHAT, true),
    RESPONSES_JSON("openai responses (JSON)", RESPONSES, SimRoute.OPENAI_RESPONSES, false),
    RESPONSES_STREAM("openai responses (stream)", RESPONSES, SimRoute.OPENAI_RESPONSES, true);

    final String title;
    final String path;
    final SimRoute simRoute;
    final boolean stream;

    Route(String title, String path, SimRoute simRoute, boolean stream) {
      this.title = title;
      this.path = path;
      this.simRoute = simRoute;
      this.stream = stream;
    }

    String body() {
      return switch (simRoute) {
        case ANTHROPIC_MESSAGES ->
            "{\"model\":\"claude-opus-5-5\",\"max_tokens\":800,\"stream\":"
                + stream
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}";
        case OPENAI_CHAT ->
            "{\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":800,\"stream\":"
                + stream
                + ",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}";
        default ->
            "{\"model\":\"gpt-6.1-sol\",\"max_output_tokens\":800,\"stream\":"
                + stream
                + ",\"tools\":[{\"type\":\"web_search\"}],\"input\":\"hello\"}";
      };
    }

    @Override
    public String toString() {
      return title;
    }
  }

  /** What the ledger keeps for a call. */
  enum Effect {
    NOTHING("nothing"),
    ACTUAL("the actual cost"),
    WORST_CASE("the worst case");

    final String words;

    Effect(String words) {
      this.words = words;
    }
  }

  /**
   * The expected outcome: the client's status; {@code gatewayError} the error type when the gateway
   * makes the answer itself, null when it passes the provider's status through.
   */
  record Outcome(int status, String gatewayError, Effect effect) {
    static Outcome passed(int status, Effect effect) {
      return new Outcome(status, null, effect);
    }

    static Outcome made(int status, String type, Effect effect) {
      return new Outcome(status, type, effect);
    }

    String words() {
      return status
          + (gatewayError == null ? "" : " " + gatewayError)
          + ", the ledger keeps "
          + effect.words;
    }
  }

  /** One fault, and what it must come to on a JSON and on a streamed call. */
  record FaultRow(String what, Supplier<Fault> fault, Function<Route, Outcome> expected) {}

  static List<FaultRow> faults() {
    List<FaultRow> rows = new ArrayList<>();
    for (int status :
        new int[] {400, 401, 402, 403, 404, 408, 409, 410, 429, 500, 501, 502, 503, 504, 529}) {
      rows.add(
          new FaultRow(
              "a " + status + " from the provider",
              () -> Fault.status(status),
              r -> Outcome.passed(status, Effect.NOTHING)));
    }
    rows.add(
        new FaultRow(
            "a 429 with retry-after",
            () -> Fault.rateLimited(2),
            r -> Outcome.passed(429, Effect.NOTHING)));
    rows.add(
        new FaultRow(
            "Anthropic's credit-balance-too-low 400",
            Fault::creditBalanceTooLow,
            r -> Outcome.passed(400, Effect.NOTHING)));
    rows.add(
        new FaultRow(
            "a connection reset before any header",
            Fault::connectionReset,
            r -> Outcome.made(502, "upstream_unavailable", Effect.WORST_CASE)));
    rows.add(
        new FaultRow(
            "no response start within the 1s timeout",
            () -> Fault.delayed(Duration.ofMillis(2500)),
            r -> Outcome.made(502, "upstream_unavailable", Effect.WORST_CASE)));
    rows.add(
        new FaultRow(
            "a connection cut after 2 events",
            () -> Fault.streamCut(2),
            r ->
                r.stream
                    ? Outcome.passed(200, Effect.WORST_CASE)
                    : Outcome.made(502, "upstream_unreadable", Effect.WORST_CASE)));
    // A JSON answer cut short but ended cleanly is a complete 200 body the gateway cannot read
    // usage
    // from: passed on as the provider sent it, billed at the worst case.
    rows.add(
        new FaultRow(
            "a body ended cleanly after 2 events",
            () -> Fault.streamTruncated(2),
            r -> Outcome.passed(200, Effect.WORST_CASE)));
    rows.add(
        new FaultRow(
            "events dripping 60ms apart",
            () -> Fault.slowDrip(Duration.ofMillis(60)),
            r -> Outcome.passed(200, Effect.ACTUAL)));
    rows.add(
        new FaultRow(
            "a malformed SSE event after 2 good ones",
            () -> Fault.malformedSse(2),
            r -> Outcome.passed(200, Effect.WORST_CASE)));
    rows.add(
        new FaultRow(
            "an in-stream 529 error after 2 events",
            () -> Fault.streamError(2, 529),
            r ->
                r.stream
                    ? Outcome.passed(200, Effect.WORST_CASE)
                    : Outcome.passed(529, Effect.NOTHING)));
    rows.add(
        new FaultRow(
            "a 200 with truncated JSON",
            Fault::invalidJson,
            r -> Outcome.passed(200, Effect.WORST_CASE)));
    return rows;
  }

  static Stream<Arguments> matrix() {
    List<Arguments> out = new ArrayList<>();
    for (FaultRow fault : faults()) {
      for (Upstream upstream : Upstream.values()) {
        if (upstream == Upstream.H2C && !ALSO_OVER_H2C.contains(fault.what())) {
          continue;
        }
        for (Route route : Route.values()) {
          Outcome expected = fault.expected().apply(route);
          out.add(
              Arguments.of(
                  fault.what() + " on " + route + upstream.words + " → " + expected.words(),
                  route,
                  fault.fault().get(),
                  expected,
                  upstream));
        }
      }
    }
    return out.stream();
  }

  @BeforeAll
  void start() throws Exception {
    overHttp1 = ReliabilityGateway.start("faults");
    overH2c = ReliabilityGateway.startOverH2c("faults-h2c");
    gw = overHttp1;
    for (Route route : Route.values()) {
      Brand brand = Brand.fresh("baseline");
      Call call = call(route, brand);
      assertEquals(200, call.status(), route + ": " + call.body());
      JsonNode line = onlyAccessLine(call.requestId());
      BigDecimal actual = money(cap(gw.awaitSettled(brand.id()), "brand_daily"), "spentUsd");
      assertTrue(
          actual.signum() > 0
              && actual.compareTo(new BigDecimal(line.get("reserved_usd").asText())) < 0,
          route + ": a clean call costs less than its worst case: " + line);
      actualOf.put(route, actual);
    }
  }

  @AfterAll
  void stop() throws Exception {
    overHttp1.close();
    overH2c.close();
  }

  @BeforeEach
  void resetSimulator() {
    overHttp1.sim.reset();
    overH2c.sim.reset();
    gw = overHttp1;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("matrix")
  void aFaultEndsAsDocumented(
      String sentence, Route route, Fault fault, Outcome expected, Upstream upstream)
      throws Exception {
    gw = upstream == Upstream.H2C ? overH2c : overHttp1;
    Brand brand = Brand.fresh("fault");
    gw.sim.script(route.simRoute, fault);

    Call call = call(route, brand);

    // A stream the provider cuts at once can end the caller's connection before the answer's
    // headers are on the wire (the server aborts a connection whose body fails, and an abort drops
    // what was not written yet): the caller sees the stream break without a status, the same end
    // as a 200 whose body breaks. Only a streamed answer billed at its worst case may end so; the
    // books and the access line are checked below as for every row.
    boolean endedBeforeTheHeaders = call.status() == 0;
    if (endedBeforeTheHeaders) {
      assertTrue(
          route.stream && expected.status() == 200 && expected.effect() == Effect.WORST_CASE,
          sentence + ": the connection ended before any answer");
    } else {
      assertEquals(expected.status(), call.status(), sentence + ": " + call.body());
    }
    if (endedBeforeTheHeaders) {
      // nothing the caller read to check
    } else if (expected.gatewayError() == null) {
      assertFalse(
          call.gatewayMade(),
          sentence + ": the provider's answer is passed through: " + call.body());
    } else {
      assertTrue(call.gatewayMade(), sentence + ": " + call.body());
      assertEquals(expected.gatewayError(), errorType(call.body()), sentence + ": " + call.body());
    }
    if (call.status() >= 500 && call.gatewayMade()) {
      assertTrue(
          DOCUMENTED_GATEWAY_5XX.contains(errorType(call.body())),
          sentence + ": undocumented gateway 5xx " + call.body());
    }

    assertEquals(
        upstream == Upstream.H2C,
        gw.lastUpstreamCallWasHttp2(route.simRoute),
        sentence + ": the provider was reached over " + upstream);
    JsonNode usage = gw.awaitSettled(brand.id());
    JsonNode brandDaily = cap(usage, "brand_daily");
    assertEquals(0, usage.get("openReservations").asInt(), "no reservation left open");
    assertEquals(0, money(brandDaily, "reservedUsd").signum(), sentence + ": " + brandDaily);
    JsonNode line = onlyAccessLine(call.requestId());
    assertEquals(
        endedBeforeTheHeaders ? expected.status() : call.status(),
        line.get("status").asInt(),
        line.toString());
    BigDecimal reserved = new BigDecimal(line.get("reserved_usd").asText());
    BigDecimal expectedSpend =
        switch (expected.effect()) {
          case NOTHING -> BigDecimal.ZERO;
          case ACTUAL -> actualOf.get(route);
          case WORST_CASE -> reserved;
        };
    assertEquals(
        0,
        expectedSpend.compareTo(money(brandDaily, "spentUsd")),
        sentence + ": spent " + brandDaily + ", line " + line);
    assertEquals(
        0,
        expectedSpend.compareTo(new BigDecimal(line.get("settled_usd").asText())),
        sentence + ": " + line);
    if (expected.effect() != Effect.ACTUAL) {
      assertTrue(
          line.get("error").isTextual(), sentence + ": the line names what went wrong: " + line);
    }

    // The pool is usable right away: a normal call on the same route succeeds at its actual cost.
    Brand after = Brand.fresh("after");
    Call healthy = call(route, after);
    assertEquals(200, healthy.status(), sentence + ", then a normal call: " + healthy.body());
    assertFalse(healthy.readFailed(), sentence + ", then a normal call was cut");
    assertEquals(
        0,
        actualOf
            .get(route)
            .compareTo(money(cap(gw.awaitSettled(after.id()), "brand_daily"), "spentUsd")));
  }

  @Test
  void aProviderThatRefusesTheConnectionCostsNothing() throws Exception {
    // A port that was free a moment ago: the connect is refused, so nothing reached any provider.
    int closedPort;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    String nobody = "http://127.0.0.1:" + closedPort;
    try (TestGateway refused =
        ReliabilityGateway.start(
            "refused",
            Map.of("providers.openai.base-url", nobody, "providers.anthropic.base-url", nobody))) {
      for (Route route : List.of(Route.ANTHROPIC_JSON, Route.CHAT_STREAM)) {
        Brand brand = Brand.fresh("refused");
        String requestId = "refused-" + System.nanoTime();
        HttpResponse<String> r =
            refused.send(
                refused
                    .postJson(route.path, route.body(), brand)
                    .header("x-request-id", requestId)
                    .build());

        assertEquals(502, r.statusCode(), r.body());
        assertEquals("upstream_unavailable", errorType(r.body()));
        JsonNode usage = refused.awaitSettled(brand.id());
        assertEquals(
            0, money(cap(usage, "brand_daily"), "spentUsd").signum(), route + ": " + usage);
        JsonNode line = refused.awaitOnlyAccessLine(requestId);
        assertEquals("upstream_connect_failed", line.get("error").asText(), line.toString());
        assertEquals(0, new BigDecimal(line.get("settled_usd").asText()).signum(), line.toString());
      }
    }
  }

  // --- one call, read to its end or its failure
  // ---------------------------------------------------

  /** What the caller saw: status, whether the gateway made the answer, the body read so far. */
  record Call(String requestId, int status, boolean gatewayMade, String body, boolean readFailed) {}

  private Call call(Route route, Brand brand) throws Exception {
    String requestId = "fm-" + System.nanoTime();
    HttpRequest request =
        gw.postJson(route.path, route.body(), brand).header("x-request-id", requestId).build();
    HttpResponse<InputStream> r;
    try {
      r = gw.http.send(request, HttpResponse.BodyHandlers.ofInputStream());
    } catch (IOException endedBeforeTheHeaders) {
      return new Call(requestId, 0, false, "", true);
    }
    boolean gatewayMade =
        r.headers().firstValue("x-gateway-error").map("true"::equals).orElse(false);
    java.io.ByteArrayOutputStream read = new java.io.ByteArrayOutputStream();
    boolean failed = false;
    try (InputStream in = r.body()) {
      in.transferTo(read);
    } catch (IOException cut) {
      failed = true;
    }
    return new Call(
        requestId, r.statusCode(), gatewayMade, read.toString(StandardCharsets.UTF_8), failed);
  }

  private JsonNode onlyAccessLine(String requestId) throws Exception {
    JsonNode line = gw.awaitOnlyAccessLine(requestId);
    assertNotNull(line.get("reserved_usd"));
    return line;
  }

  private static String errorType(String body) {
    try {
      return TestGateway.JSON.readTree(body).path("error").path("type").asText(null);
    } catch (IOException notJson) {
      return null;
    }
  }
}
