package dev.spendgateway.edge.e2e;

import static dev.spendgateway.edge.testkit.TestGateway.ANTHROPIC;
import static dev.spendgateway.edge.testkit.TestGateway.CHAT;
import static dev.spendgateway.edge.testkit.TestGateway.JSON;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code x-data-class} on every route, against the shipped conf/data-classes.conf ({@code public}
 * and {@code internal} → both providers, {@code restricted} → openai, default {@code internal}),
 * with one profile narrowed for the test: {@code long-draft} sends {@code internal} data to Claude
 * only.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DataClassE2ETest {
  static final String ROUTER = "/v1/chat/completions";

  private TestGateway gw;

  @BeforeAll
  void start() throws Exception {
    gw =
        E2eGateway.start(
            "data-class",
            Map.of(
                "profiles.long-draft.data-classes.internal",
                List.of("anthropic"),
                // Retries on the primary stay fast: the rows below count attempts, not seconds.
                "failover.backoff.base",
                "2ms",
                "failover.backoff.cap",
                "10ms",
                // The outage rows must not open the provider breaker for the rows after them.
                "failover.breaker.max-failures",
                1000));
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

  static String chat(String model) {
    return "{\"model\":\""
        + model
        + "\",\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
  }

  static String claude() {
    return "{\"model\":\"claude-haiku-5-5\",\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
  }

  private HttpResponse<String> send(String path, String body, String dataClass, String requestId)
      throws Exception {
    HttpRequest.Builder b =
        gw.postJson(path, body, Brand.fresh("dc")).header("x-request-id", requestId);
    if (dataClass != null) {
      b.header("x-data-class", dataClass);
    }
    return gw.send(b.build());
  }

  @ParameterizedTest(name = "class {0} on {1}: {2}")
  @CsvSource(
      nullValues = "none",
      value = {
        "none,       " + ANTHROPIC + ", 200, internal",
        "public,     " + ANTHROPIC + ", 200, public",
        "restricted, " + CHAT + ",      200, restricted",
        "restricted, " + ANTHROPIC + ", 403, restricted",
        "secret,     " + ANTHROPIC + ", 400, none",
      })
  void aProviderRouteServesOnlyWhatTheClassAllows(
      String dataClass, String path, int status, String logged) throws Exception {
    String id = "dc-" + UUID.randomUUID();
    String body = path.equals(ANTHROPIC) ? claude() : chat("gpt-6.1-sol-mini");
    HttpResponse<String> r = send(path, body, dataClass, id);
    assertEquals(status, r.statusCode(), r.body());
    JsonNode line = gw.awaitOnlyAccessLine(id);
    assertEquals(
        logged == null ? null : logged,
        line.path("data_class").isNull() ? null : line.path("data_class").asText());
    if (status == 403) {
      JsonNode error = JSON.readTree(r.body());
      assertEquals("error", error.path("type").asText(), "Anthropic's error shape");
      assertEquals("data_class_forbidden", error.path("error").path("type").asText());
      assertEquals(
          "data class 'restricted' may not be sent to anthropic; it may go to openai",
          error.path("error").path("message").asText());
      assertEquals("true", r.headers().firstValue("x-gateway-error").orElse(""));
      assertEquals("data_class_forbidden", line.path("error").asText());
      assertEquals(
          0, gw.sim.received(SimRoute.ANTHROPIC_MESSAGES).size(), "nothing sent to the provider");
      assertTrue(line.path("reserved_usd").isNull(), "nothing reserved");
    }
    if (status == 400) {
      assertTrue(
          r.body().contains("x-data-class must be one of internal, public, restricted"), r.body());
    }
  }

  @Test
  void aDataClassSentTwiceIsRefused() throws Exception {
    HttpResponse<String> r =
        gw.send(
            gw.postJson(CHAT, chat("gpt-6.1-sol-mini"), Brand.fresh("dc"))
                .header("x-data-class", "public")
                .header("x-data-class", "restricted")
                .build());
    assertEquals(400, r.statusCode(), r.body());
    assertTrue(r.body().contains("x-data-class was sent 2 times"), r.body());
  }

  @Test
  void theRouterNeverFailsOverOutsideTheClass() throws Exception {
    gw.sim.scriptForever(SimRoute.OPENAI_CHAT, Fault.status(503));
    String id = "dc-" + UUID.randomUUID();
    HttpResponse<String> r = send(ROUTER, chat("fast-summary"), "restricted", id);
    assertEquals(503, r.statusCode(), r.body());
    JsonNode error = JSON.readTree(r.body()).path("error");
    assertEquals("fallback_not_permitted", error.path("type").asText());
    assertTrue(
        error
            .path("message")
            .asText()
            .contains("data class 'restricted' may not be sent to anthropic"),
        error.toString());
    assertEquals("openai", error.path("primary").path("provider").asText());
    assertEquals(503, error.path("primary").path("status").asInt(), "carries the primary's error");
    assertTrue(
        error.path("primary").path("error").path("message").asText().length() > 0,
        error.toString());
    assertEquals(
        0, gw.sim.received(SimRoute.ANTHROPIC_MESSAGES).size(), "never sent to the fallback");
    assertTrue(gw.sim.received(SimRoute.OPENAI_CHAT).size() >= 1);
    // The same outage with a class that allows Claude fails over.
    HttpResponse<String> internal =
        send(ROUTER, chat("fast-summary"), "internal", "dc-" + UUID.randomUUID());
    assertEquals(200, internal.statusCode(), internal.body());
    assertEquals("anthropic", internal.headers().firstValue("x-gateway-provider").orElse(""));
    // Four attempts at OpenAI (the interactive budget's max-attempts) and the call's own line.
    List<JsonNode> lines = gw.awaitExactlyAccessLines(id, 4 + 1);
    assertTrue(
        lines.stream()
            .allMatch(
                l ->
                    "restricted".equals(l.path("data_class").asText())
                        && "fast-summary".equals(l.path("profile").asText())),
        lines.toString());
    assertTrue(
        lines.stream().anyMatch(l -> "fallback_not_permitted".equals(l.path("error").asText())),
        lines.toString());
  }

  @Test
  void aProfileNarrowingTheClassSendsTheCallOnlyWhereBothAllow() throws Exception {
    HttpResponse<String> r = send(ROUTER, chat("long-draft"), null, "dc-" + UUID.randomUUID());
    assertEquals(200, r.statusCode(), r.body());
    assertEquals("anthropic", r.headers().firstValue("x-gateway-provider").orElse(""));
    assertEquals(
        "false",
        r.headers().firstValue("x-gateway-failover").orElse(""),
        "the class's only provider, no failover");
    assertEquals(0, gw.sim.received(SimRoute.OPENAI_CHAT).size());
    // restricted allows only OpenAI; long-draft allows only Claude for internal, but restricted is
    // not narrowed.
    HttpResponse<String> restricted =
        send(ROUTER, chat("long-draft"), "restricted", "dc-" + UUID.randomUUID());
    assertEquals(200, restricted.statusCode(), restricted.body());
    assertEquals("openai", restricted.headers().firstValue("x-gateway-provider").orElse(""));
  }

  @Test
  void callsAreCountedByClassAndOutcome() throws Exception {
    send(ANTHROPIC, claude(), "restricted", "dc-" + UUID.randomUUID());
    send(CHAT, chat("gpt-6.1-sol-mini"), "restricted", "dc-" + UUID.randomUUID());
    String metrics =
        gw.send(gw.get("/metrics").header("x-api-key", E2eGateway.TOKEN).build()).body();
    assertTrue(
        sample(
                metrics,
                "gateway_data_class_calls_total",
                "class=\"restricted\",outcome=\"forbidden\"")
            >= 1,
        metrics);
    assertTrue(
        sample(
                metrics,
                "gateway_data_class_calls_total",
                "class=\"restricted\",outcome=\"allowed\"")
            >= 1,
        metrics);
  }

  static double sample(String metrics, String name, String labels) {
    Matcher m =
        Pattern.compile("(?m)^" + Pattern.quote(name + "{" + labels) + "[^}]*\\} (\\S+)$")
            .matcher(metrics);
    return m.find() ? Double.parseDouble(m.group(1)) : -1;
  }
}
