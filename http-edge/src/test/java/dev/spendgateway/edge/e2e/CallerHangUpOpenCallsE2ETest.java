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
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A caller that hangs up before its response headers no longer holds one of the node's open calls
 * ({@code gateway.max-open-calls}) once its call is settled. Pekko HTTP drops the response of a
 * connection that has ended without ever running its entity, so an answer counted "until its last
 * byte is out" would be counted for ever: after {@code max-open-calls} such hang-ups every provider
 * call is a 503 {@code open_calls}, and a shutdown waits out its whole drain for answers that never
 * end. Here the node has one open call, so a single leaked one refuses the next caller.
 */
class CallerHangUpOpenCallsE2ETest {
  private static TestGateway gw;

  @BeforeAll
  static void start() throws Exception {
    gw =
        E2eGateway.start(
            "hangup-open-calls",
            Map.of(
                "gateway.max-open-calls",
                1,
                // A response nobody starts reading counts as abandoned after 1 s (5 s shipped).
                "providers.client-subscribe-timeout",
                "1s"));
  }

  @AfterAll
  static void stop() throws Exception {
    gw.close();
  }

  private static final String CLAUDE =
      "{\"stream\":%s,\"model\":\"claude-opus-5-5\",\"max_tokens\":1000,\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";
  private static final String CHAT =
      "{\"stream\":%s,\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":900,\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";
  private static final String ROUTED =
      "{\"stream\":%s,\"model\":\"fast-summary\",\"max_tokens\":1000,\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";

  @ParameterizedTest(
      name = "{0} {1} whose caller {2} before the headers: settled, and the next call is served")
  @CsvSource({
    // what,        streamed, leaves
    "anthropic,     true,     resets",
    "anthropic,     true,     closes",
    "openai-chat,   true,     resets",
    "openai-chat,   true,     closes",
    "router,        true,     resets",
    "router,        true,     closes",
    "anthropic,     false,    resets",
    "router,        false,    resets",
  })
  void aCallerGoneBeforeTheHeadersGivesItsOpenCallBack(String what, boolean streamed, String leaves)
      throws Exception {
    String path =
        switch (what) {
          case "anthropic" -> TestGateway.ANTHROPIC;
          case "openai-chat" -> TestGateway.CHAT;
          default -> "/v1/chat/completions";
        };
    SimRoute route = what.equals("anthropic") ? SimRoute.ANTHROPIC_MESSAGES : SimRoute.OPENAI_CHAT;
    String body =
        String.format(
            what.equals("anthropic") ? CLAUDE : what.equals("openai-chat") ? CHAT : ROUTED,
            streamed);
    Brand brand = Brand.fresh("gone-open");
    String requestId = "gone-open-" + System.nanoTime();
    gw.sim.clearScripts();
    gw.sim.script(route, Fault.delayed(Duration.ofMillis(800)));
    int before = gw.sim.received(route).size();

    try (Socket socket = RawCaller.connect(gw)) {
      RawCaller.send(socket, path, body, brand, requestId);
      awaitUpstreamCalled(route, before);
      if (leaves.equals("resets")) {
        socket.setSoLinger(true, 0); // close() now sends RST
      }
    }

    // The hung-up call is settled at its real cost and its line written...
    JsonNode line =
        gw.awaitAccessLine(
            l ->
                requestId.equals(l.path("request_id").asText()) && !l.path("settled_usd").isNull());
    JsonNode daily = cap(gw.awaitSettled(brand.id()), "brand_daily");
    assertEquals(0, money(daily, "reservedUsd").signum(), what + ": nothing held: " + daily);
    assertTrue(money(daily, "spentUsd").signum() > 0, what + ": billed: " + daily + " " + line);

    // ...and the node's only open call is free again for the next caller. Not always at once: in
    // some runs (seen for a caller that closed, not reset, before a streamed answer) the slot came
    // back only seconds after the settle, so the next caller may first be told 503 open_calls
    // (nothing sent or billed, retry-after 1 s) and is served on a retry. What must never happen
    // is the slot held for ever; why it lingers is still open.
    gw.sim.clearScripts();
    Brand next = Brand.fresh("gone-open-next");
    HttpResponse<String> served =
        Eventually.until(
            what + ": the next call is served",
            Duration.ofSeconds(30),
            () -> gw.send(gw.postJson(path, body, next).build()),
            response -> response.statusCode() == 200);
    assertEquals(200, served.statusCode(), what + ": " + served.body());
  }

  private static void awaitUpstreamCalled(SimRoute route, int before) {
    Eventually.until(
        "the provider was called",
        Duration.ofSeconds(10),
        () -> gw.sim.received(route).size() > before);
  }
}
