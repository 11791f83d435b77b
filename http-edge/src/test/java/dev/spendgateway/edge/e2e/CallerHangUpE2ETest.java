package dev.spendgateway.edge.e2e;

import static dev.spendgateway.edge.testkit.TestGateway.cap;
import static dev.spendgateway.edge.testkit.TestGateway.money;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A caller that hangs up on a streamed call — before the response headers, or in the middle of the
 * stream — still gets its reservation closed by the usual rules and its access line written: the
 * counting branch drains the provider's stream to its end and settles the real cost. The client is
 * a raw socket, so it can close (FIN) or reset (RST) exactly when the row says. The same holds when
 * the gateway reaches the provider over HTTP/2 (rows "over h2c": the call is one stream of a shared
 * connection).
 */
class CallerHangUpE2ETest {
  private static TestGateway gw;
  private static TestGateway gwOverH2c;

  @BeforeAll
  static void start() throws Exception {
    gw = E2eGateway.start("hangup");
    gwOverH2c = E2eGateway.startOverH2c("hangup-h2c");
  }

  @AfterAll
  static void stop() throws Exception {
    gw.close();
    gwOverH2c.close();
  }

  /** How the gateway reaches the provider. */
  enum Upstream {
    HTTP1,
    H2C
  }

  private static TestGateway gateway(Upstream upstream) {
    return upstream == Upstream.H2C ? gwOverH2c : gw;
  }

  /** When the caller leaves. */
  enum Leave {
    CLOSE_BEFORE_HEADERS,
    RESET_BEFORE_HEADERS,
    RESET_MID_STREAM,
    /** An orderly close inside the provider's pause: the gateway learns it only when it writes. */
    CLOSE_MID_STREAM
  }

  private static final String CLAUDE_STREAM =
      "{\"stream\":true,\"model\":\"claude-opus-5-5\",\"max_tokens\":1000,\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";
  private static final String CHAT_STREAM =
      "{\"stream\":true,\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":900,\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";
  private static final String ROUTED_STREAM =
      "{\"stream\":true,\"model\":\"fast-summary\",\"max_tokens\":1000,\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";

  static Stream<Arguments> hangUps() {
    Stream.Builder<Arguments> rows = Stream.builder();
    for (Leave leave : Leave.values()) {
      rows.add(
          Arguments.of(
              "an Anthropic stream whose caller does " + leave,
              TestGateway.ANTHROPIC,
              SimRoute.ANTHROPIC_MESSAGES,
              CLAUDE_STREAM,
              leave,
              Upstream.HTTP1));
      rows.add(
          Arguments.of(
              "an OpenAI chat stream whose caller does " + leave,
              TestGateway.CHAT,
              SimRoute.OPENAI_CHAT,
              CHAT_STREAM,
              leave,
              Upstream.HTTP1));
      rows.add(
          Arguments.of(
              "a routed stream whose caller does " + leave,
              "/v1/chat/completions",
              SimRoute.OPENAI_CHAT,
              ROUTED_STREAM,
              leave,
              Upstream.HTTP1));
      rows.add(
          Arguments.of(
              "an Anthropic stream over h2c whose caller does " + leave,
              TestGateway.ANTHROPIC,
              SimRoute.ANTHROPIC_MESSAGES,
              CLAUDE_STREAM,
              leave,
              Upstream.H2C));
      rows.add(
          Arguments.of(
              "an OpenAI chat stream over h2c whose caller does " + leave,
              TestGateway.CHAT,
              SimRoute.OPENAI_CHAT,
              CHAT_STREAM,
              leave,
              Upstream.H2C));
    }
    return rows.build();
  }

  @ParameterizedTest(
      name = "{0}: the reservation is settled at the drained real cost and the line is written")
  @MethodSource("hangUps")
  void aCallerThatHangsUpStillGetsItsCallSettledAndLogged(
      String what, String path, SimRoute route, String body, Leave leave, Upstream upstream)
      throws Exception {
    TestGateway gw = gateway(upstream);
    Brand brand = Brand.fresh("hangup");
    String requestId = "hangup-" + System.nanoTime();
    gw.sim.clearScripts();
    gw.sim.script(
        route,
        midStream(leave)
            ? Fault.streamPause(2, Duration.ofMillis(800))
            : Fault.delayed(Duration.ofMillis(800)));
    int before = gw.sim.received(route).size();

    try (Socket socket = RawCaller.connect(gw)) {
      RawCaller.send(socket, path, body, brand, requestId);
      if (midStream(leave)) {
        readPastHeadersAndSomeBody(socket.getInputStream());
      } else {
        awaitUpstreamCalled(gw, route, before);
      }
      if (leave == Leave.RESET_BEFORE_HEADERS || leave == Leave.RESET_MID_STREAM) {
        socket.setSoLinger(true, 0); // close() now sends RST
      }
    }

    JsonNode usage = awaitBrandClosed(gw, brand);
    assertEquals(
        upstream == Upstream.H2C,
        gw.lastUpstreamCallWasHttp2(route),
        what + ": the provider was reached over " + upstream);
    JsonNode line =
        gw.awaitAccessLine(
            l ->
                requestId.equals(l.path("request_id").asText())
                    && !l.path("reserved_usd").isNull());
    JsonNode daily = cap(usage, "brand_daily");
    assertTrue(
        money(daily, "reservedUsd").signum() == 0, what + ": nothing held any more: " + usage);
    assertFalse(
        line.path("settled_usd").isNull(), what + ": the line says what it settled at: " + line);
    BigDecimal settled = new BigDecimal(line.path("settled_usd").asText());
    BigDecimal reserved = new BigDecimal(line.path("reserved_usd").asText());
    assertEquals(
        0,
        settled.compareTo(money(daily, "spentUsd")),
        what + ": the line's amount is the ledger's: " + line + " " + usage);
    assertTrue(
        settled.signum() > 0 && settled.compareTo(reserved) < 0,
        what
            + ": the drained stream reported its usage, so the real cost is billed, not the worst case: "
            + line);
    assertTrue(line.path("error").isNull(), what + ": " + line);
  }

  /**
   * A caller that hangs up while the router waits out a provider's 429 {@code retry-after}: the
   * router learns it from the connection's end and does not retry (the provider would bill an
   * answer nobody reads), the 429's reservation is voided, nothing stays held, the access line is
   * the ledger's, and no fallback is sent for a caller who is gone.
   */
  @ParameterizedTest(name = "reset once the 429 is logged (inside the wait): {0}")
  @ValueSource(booleans = {true, false})
  void aCallerThatHangsUpDuringARateLimitWaitIsNotRetriedAndLeavesNothingHeld(boolean inTheWait)
      throws Exception {
    Brand brand = Brand.fresh("hangup-429");
    String requestId = "hangup-429-" + System.nanoTime();
    gw.sim.clearScripts();
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.rateLimited(2));
    int chatBefore = gw.sim.received(SimRoute.OPENAI_CHAT).size();
    int claudeBefore = gw.sim.received(SimRoute.ANTHROPIC_MESSAGES).size();
    String routed =
        "{\"model\":\"fast-summary\",\"max_tokens\":200,\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";

    try (Socket socket = RawCaller.connect(gw)) {
      RawCaller.send(socket, "/v1/chat/completions", routed, brand, requestId);
      awaitUpstreamCalled(gw, SimRoute.OPENAI_CHAT, chatBefore); // the 429 is on its way back
      if (inTheWait) {
        gw.awaitAccessLines(requestId, 1); // the 429's attempt is over: the 2 s wait has begun
      }
      socket.setSoLinger(true, 0); // close() now sends RST
    }

    // Time is the point: no retry may come, so past the provider's retry-after and a retry's time.
    Thread.sleep(3_500);
    JsonNode usage =
        Eventually.until(
            "nothing of " + brand.id() + " is held any more",
            Duration.ofSeconds(15),
            () -> gw.usage(brand.id()),
            seen -> money(cap(seen, "brand_daily"), "reservedUsd").signum() == 0);
    JsonNode daily = cap(usage, "brand_daily");
    assertEquals(0, money(daily, "reservedUsd").signum(), "nothing held any more: " + usage);
    // One line, the 429's (its reservation voided): exactly what the ledger booked.
    List<JsonNode> lines = gw.awaitAccessLines(requestId, 1);
    BigDecimal settled = BigDecimal.ZERO;
    for (JsonNode line : lines) {
      if (!line.path("settled_usd").isNull()) {
        settled = settled.add(new BigDecimal(line.path("settled_usd").asText()));
      }
    }
    assertEquals(
        0,
        settled.compareTo(money(daily, "spentUsd")),
        "the lines' amounts are the ledger's: " + lines + " " + usage);
    assertEquals(
        1,
        gw.sim.received(SimRoute.OPENAI_CHAT).size() - chatBefore,
        "the 429 only: no retry for a caller who is gone");
    assertEquals(1, lines.size(), "a line per attempt: " + lines);
    assertEquals(0, money(daily, "spentUsd").signum(), "the 429 was not billed: " + usage);
    assertEquals(
        claudeBefore,
        gw.sim.received(SimRoute.ANTHROPIC_MESSAGES).size(),
        "no fallback for a caller who is gone");
  }

  private static boolean midStream(Leave leave) {
    return leave == Leave.RESET_MID_STREAM || leave == Leave.CLOSE_MID_STREAM;
  }

  /**
   * Polls the brand's daily cap until nothing is held and something is spent (the gateway's own
   * open-reservation count is global: another row's leak must not fail this one).
   */
  private static JsonNode awaitBrandClosed(TestGateway gw, Brand brand) {
    return Eventually.until(
        "nothing of " + brand.id() + " is held and something is spent",
        Duration.ofSeconds(25),
        () -> gw.usage(brand.id()),
        usage -> {
          if (!usage.toString().contains(brand.id())) {
            return false;
          }
          JsonNode daily = cap(usage, "brand_daily");
          return money(daily, "reservedUsd").signum() == 0 && money(daily, "spentUsd").signum() > 0;
        });
  }

  /** The gateway has read the request, reserved, and is waiting for the provider's headers. */
  private static void awaitUpstreamCalled(TestGateway gw, SimRoute route, int before) {
    Eventually.until(
        "the provider was called",
        Duration.ofSeconds(10),
        () -> gw.sim.received(route).size() > before);
  }

  /** Reads the status line, the headers and the first body bytes (the stream has started). */
  private static void readPastHeadersAndSomeBody(InputStream in) throws Exception {
    StringBuilder seen = new StringBuilder();
    int b;
    while ((b = in.read()) >= 0) {
      seen.append((char) b);
      int head = seen.indexOf("\r\n\r\n");
      if (head >= 0 && seen.length() > head + 16) {
        assertTrue(seen.toString().startsWith("HTTP/1.1 200"), seen.toString());
        return;
      }
    }
    throw new AssertionError("the stream ended before it started: " + seen);
  }
}
