package dev.spendgateway.edge.e2e;

import static dev.spendgateway.edge.testkit.TestGateway.cap;
import static dev.spendgateway.edge.testkit.TestGateway.money;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A caller that hangs up while its call waits in the gateway — queued for a slot behind a slow
 * call, or waiting for its turn under the node's pace towards the provider — gets no provider call
 * and no reservation: Pekko HTTP would run the route on for nobody, and the provider would bill an
 * answer nobody reads (twice, for an SDK that timed out and retried). Its access line says 499
 * {@code caller_gone}, and the queue's next caller gets the slot. The leaving client is a raw
 * socket, so it can reset the connection exactly when the row says.
 */
class CallerGoneWhileWaitingE2ETest {
  /** One slot per provider, so a second call queues behind a slow first one. */
  private static TestGateway oneSlot;

  /** One request a minute per provider, waited for up to two minutes. */
  private static TestGateway slowPace;

  @BeforeAll
  static void start() throws Exception {
    oneSlot =
        E2eGateway.start(
            "gone-queued",
            Map.of(
                "failover.pools.interactive.concurrency.openai", 1,
                "failover.pools.interactive.concurrency.anthropic", 1));
    slowPace =
        E2eGateway.start(
            "gone-pace",
            Map.of(
                // On (e2e-test.conf turns the pace off), by requests only.
                "failover.rate-limits.enabled", true,
                "failover.rate-limits.openai.tokens-per-minute", 0,
                "failover.rate-limits.anthropic.tokens-per-minute", 0,
                "failover.rate-limits.openai.requests-per-minute", 1,
                "failover.rate-limits.anthropic.requests-per-minute", 1,
                "failover.rate-limits.max-wait", "120s"));
  }

  @AfterAll
  static void stop() throws Exception {
    oneSlot.close();
    slowPace.close();
  }

  private static final String CLAUDE =
      "{\"model\":\"claude-opus-5-5\",\"max_tokens\":200,\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";
  private static final String CHAT =
      "{\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":200,\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";
  private static final String ROUTED =
      "{\"model\":\"fast-summary\",\"max_tokens\":200,\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";

  static Stream<Arguments> queued() {
    return Stream.of(
        Arguments.of(
            "the Anthropic route", TestGateway.ANTHROPIC, SimRoute.ANTHROPIC_MESSAGES, CLAUDE),
        Arguments.of("the OpenAI chat route", TestGateway.CHAT, SimRoute.OPENAI_CHAT, CHAT),
        Arguments.of("the router", "/v1/chat/completions", SimRoute.OPENAI_CHAT, ROUTED));
  }

  @ParameterizedTest(
      name = "{0}: a caller who leaves the queue is never sent and its place is skipped")
  @MethodSource("queued")
  void aCallerWhoHangsUpWhileQueuedForASlotIsNeverSent(
      String what, String path, SimRoute route, String body) throws Exception {
    TestGateway gw = oneSlot;
    String provider = route == SimRoute.ANTHROPIC_MESSAGES ? "anthropic" : "openai";
    gw.sim.clearScripts();
    gw.sim.script(route, Fault.delayed(Duration.ofMillis(1_500)));
    int before = gw.sim.received(route).size();
    Brand holderBrand = Brand.fresh("gone-holder");
    Brand leaverBrand = Brand.fresh("gone-leaver");
    Brand nextBrand = Brand.fresh("gone-next");
    String leaver = "gone-queued-" + System.nanoTime();

    CompletableFuture<HttpResponse<String>> holder =
        gw.sendAsync(gw.postJson(path, body, holderBrand).build());
    awaitQueueDepth(gw, provider, 0, 1); // the slow call holds the only slot
    try (Socket socket = RawCaller.connect(gw)) {
      RawCaller.send(socket, path, body, leaverBrand, leaver);
      awaitQueueDepth(gw, provider, 1, 1); // queued behind it
      CompletableFuture<HttpResponse<String>> next =
          gw.sendAsync(gw.postJson(path, body, nextBrand).build());
      awaitQueueDepth(gw, provider, 2, 1); // and one more behind the leaver
      RawCaller.reset(socket);

      JsonNode line = gw.awaitAccessLines(leaver, 1).get(0);
      assertEquals(499, line.path("status").asInt(), what + ": " + line);
      assertEquals("caller_gone", line.path("error").asText(), what + ": " + line);
      assertTrue(line.path("reserved_usd").isNull(), what + ": nothing reserved: " + line);

      assertEquals(200, holder.get().statusCode(), what + ": the slot's holder is answered");
      assertEquals(
          200, next.get().statusCode(), what + ": the slot went to the caller behind the leaver");
    }
    gw.awaitOnlyAccessLine(leaver);
    assertTrue(
        metric(gw, "gateway_callers_gone_total", provider, "wait=\"queue\"") >= 1,
        what + ": counted on /metrics");
    assertEquals(
        2,
        gw.sim.received(route).size() - before,
        what + ": the holder and the next caller reached the provider, the leaver did not");
    JsonNode leaverUsage = gw.usage(leaverBrand.id());
    if (leaverUsage.toString().contains(leaverBrand.id())) {
      JsonNode daily = cap(leaverUsage, "brand_daily");
      assertEquals(0, money(daily, "reservedUsd").signum(), what + ": " + leaverUsage);
      assertEquals(0, money(daily, "spentUsd").signum(), what + ": " + leaverUsage);
    }
  }

  /**
   * A client that half-closes its connection after sending the request (it sends nothing more but
   * still reads) has not hung up: its call waits for the slot like any other and is answered.
   */
  @ParameterizedTest(
      name = "{0}: a caller that half-closes after its request still gets its answer")
  @MethodSource("queued")
  void aCallerThatOnlyHalfClosesIsNotTakenForGone(
      String what, String path, SimRoute route, String body) throws Exception {
    TestGateway gw = oneSlot;
    String provider = route == SimRoute.ANTHROPIC_MESSAGES ? "anthropic" : "openai";
    gw.sim.clearScripts();
    gw.sim.script(route, Fault.delayed(Duration.ofMillis(1_000)));
    int before = gw.sim.received(route).size();
    String halfClosed = "half-closed-" + System.nanoTime();
    CompletableFuture<HttpResponse<String>> holder =
        gw.sendAsync(gw.postJson(path, body, Brand.fresh("half-holder")).build());
    awaitQueueDepth(gw, provider, 0, 1);
    try (Socket socket = RawCaller.connect(gw)) {
      RawCaller.send(socket, path, body, Brand.fresh("half-closed"), halfClosed);
      awaitQueueDepth(gw, provider, 1, 1);
      socket.shutdownOutput(); // FIN: nothing more to send, still reading
      String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertTrue(answer.startsWith("HTTP/1.1 200"), what + ": " + answer);
    }
    assertEquals(200, holder.get().statusCode());
    JsonNode line = gw.awaitAccessLines(halfClosed, 1).get(0);
    assertEquals(200, line.path("status").asInt(), what + ": " + line);
    assertEquals(2, gw.sim.received(route).size() - before, what + ": both calls were sent");
  }

  static Stream<Arguments> paced() {
    return Stream.of(
        Arguments.of(
            "the Anthropic route", TestGateway.ANTHROPIC, SimRoute.ANTHROPIC_MESSAGES, CLAUDE),
        Arguments.of("the router", "/v1/chat/completions", SimRoute.OPENAI_CHAT, ROUTED));
  }

  @ParameterizedTest(name = "{0}: a caller who leaves during its turn's wait is never sent")
  @MethodSource("paced")
  void aCallerWhoHangsUpWhileWaitingForItsTurnIsNeverSent(
      String what, String path, SimRoute route, String body) throws Exception {
    TestGateway gw = slowPace;
    gw.sim.clearScripts();
    int before = gw.sim.received(route).size();
    Brand brand = Brand.fresh("gone-pace");
    String waiter = "gone-pace-" + System.nanoTime();

    // The minute's one request goes at once; the next would wait a minute for its turn.
    assertEquals(200, gw.send(gw.postJson(path, body, brand).build()).statusCode());
    long left;
    try (Socket socket = RawCaller.connect(gw)) {
      RawCaller.send(socket, path, body, brand, waiter);
      // Read, vetted and waiting for its turn by now (no gauge shows that wait). On a machine so
      // busy that it is not, the call meets the hang-up at the guards' door instead ("before"):
      // the same outcome, which is what this row asserts; ProviderGuardsClearanceTest pins both.
      Thread.sleep(1_000);
      RawCaller.reset(socket);
      left = System.nanoTime();
    }
    // Not awaitOnlyAccessLine: its marker call would itself wait a minute for a turn here.
    JsonNode line = gw.awaitAccessLines(waiter, 1).get(0);
    long answeredMs = (System.nanoTime() - left) / 1_000_000;
    assertEquals(499, line.path("status").asInt(), what + ": " + line);
    assertEquals("caller_gone", line.path("error").asText(), what + ": " + line);
    assertTrue(line.path("reserved_usd").isNull(), what + ": nothing reserved: " + line);
    assertTrue(
        answeredMs < 20_000,
        what
            + ": the wait ended with the connection, not with the turn a minute later: "
            + answeredMs
            + " ms");
    assertEquals(
        1, gw.sim.received(route).size() - before, what + ": only the minute's first request");
    String provider = route == SimRoute.ANTHROPIC_MESSAGES ? "anthropic" : "openai";
    assertTrue(
        metric(gw, "gateway_callers_gone_total", provider, "wait=\"pace\"")
                + metric(gw, "gateway_callers_gone_total", provider, "wait=\"before\"")
            >= 1,
        what + ": counted on /metrics");
    JsonNode daily = cap(gw.awaitSettled(brand.id()), "brand_daily");
    assertEquals(0, money(daily, "reservedUsd").signum(), what + ": nothing held: " + daily);
    assertEquals(1, gw.accessLines(waiter).size(), what + ": one line: " + gw.accessLines(waiter));
  }

  /** A series' value on /metrics for {@code provider} and one more label, 0 when absent. */
  private static double metric(TestGateway gw, String name, String provider, String label)
      throws Exception {
    return metric(scrape(gw), name, provider, label);
  }

  private static String scrape(TestGateway gw) throws Exception {
    return gw.send(gw.get("/metrics").header("authorization", "Bearer " + E2eGateway.TOKEN).build())
        .body();
  }

  /**
   * The series' sum over the labels not named (the routing profile: a routed call counts under its
   * profile, a provider-route call under the empty one); 0 when none is there yet.
   */
  private static double metric(String metrics, String name, String provider, String label) {
    return metrics
        .lines()
        .filter(
            l ->
                l.startsWith(name + "{")
                    && l.contains(label)
                    && l.contains("provider=\"" + provider + "\""))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .sum();
  }

  /**
   * Polls the interactive lane's queue gauge towards {@code provider} until it reads {@code depth}.
   */
  private static void awaitQueueDepth(TestGateway gw, String provider, int depth, int inFlight)
      throws Exception {
    String pool = "pool=\"interactive\"";
    Eventually.until(
        "the " + provider + " lane holds " + inFlight + " call(s) and " + depth + " queued",
        Duration.ofSeconds(20),
        () -> {
          String metrics = scrape(gw); // one scrape: depth and slots seen at the same moment
          return metric(metrics, "gateway_queue_depth", provider, pool) == depth
              && metric(metrics, "gateway_pool_in_flight", provider, pool) == inFlight;
        });
  }
}
