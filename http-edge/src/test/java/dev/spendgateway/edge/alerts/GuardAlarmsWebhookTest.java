package dev.spendgateway.edge.alerts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimConfig;
import dev.spendgateway.sim.SimRoute;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Through a running gateway: the alert webhook carries the guards' alarms beside the budget ones. A
 * 410 sends one {@code model_retired} naming the model and the route; calls to a deprecated model
 * send one {@code model_deprecated} a day, however many calls use it; a provider breaker opening
 * sends {@code circuit_open}. Each signed, never carrying the token.
 */
class GuardAlarmsWebhookTest {
  private static final TestGateway.Suite SUITE =
      new TestGateway.Suite("e2e-test.conf", "guard-alarms", SimConfig.defaults());
  private static final String TOKEN = "gw-e2e-token-7Q2x9";
  private static final ObjectMapper JSON = new ObjectMapper();

  private static WebhookReceiver receiver;
  private static TestGateway gw;

  @BeforeAll
  static void start() throws Exception {
    receiver = WebhookReceiver.answering(() -> 200);
    gw =
        TestGateway.start(
            SUITE,
            "alarms",
            Map.of(
                "alerts.check-interval", "1h", // no budget alerts in the way
                "alerts.webhook.url", receiver.url().toString(),
                "alerts.webhook.secret", "s3cret",
                "alerts.webhook.first-retry", "100ms",
                "alerts.webhook.max-retry-interval", "1s",
                "failover.breaker.max-failures", 2,
                "failover.breaker.reset-timeout", "30s"));
  }

  @AfterAll
  static void stop() throws Exception {
    gw.close();
    receiver.close();
  }

  private static String chat(String model) {
    return "{\"model\":\""
        + model
        + "\",\"max_completion_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
  }

  private static List<JsonNode> alertsOfType(String type) {
    return receiver.received.stream()
        .map(
            r -> {
              try {
                return JSON.readTree(r.body());
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            })
        .filter(a -> type.equals(a.path("type").asText()))
        .toList();
  }

  @Test
  void a410SendsModelRetiredNamingTheModelAndTheRoute() throws Exception {
    gw.sim.clearScripts();
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.status(410));
    assertEquals(
        410,
        gw.send(gw.postJson(TestGateway.CHAT, chat("gpt-6.1-sol"), Brand.fresh("gone")).build())
            .statusCode());

    Eventually.until(
        "model_retired reached the webhook",
        Duration.ofSeconds(10),
        () -> !alertsOfType("model_retired").isEmpty());
    JsonNode alert = alertsOfType("model_retired").get(0);
    assertEquals("gpt-6.1-sol", alert.path("model").asText(), alert.toString());
    assertEquals("openai", alert.path("provider").asText(), alert.toString());
    assertEquals(TestGateway.CHAT, alert.path("route").asText(), alert.toString());
  }

  @Test
  void aDeprecatedModelInUseIsAnnouncedOnceADay() throws Exception {
    gw.sim.clearScripts();
    for (int i = 0; i < 3; i++) {
      assertEquals(
          200,
          gw.send(gw.postJson(TestGateway.CHAT, chat("gpt-6-sol"), Brand.fresh("old")).build())
              .statusCode());
    }

    Eventually.until(
        "model_deprecated reached the webhook",
        Duration.ofSeconds(10),
        () -> !alertsOfType("model_deprecated").isEmpty());
    // Once a day however many calls: WebhookAlarmsTest proves no second one is raised; here, every
    // one that arrived is the same alert.
    List<JsonNode> deprecated = alertsOfType("model_deprecated");
    assertEquals(
        1, deprecated.stream().map(JsonNode::toString).distinct().count(), "" + deprecated);
    assertEquals("gpt-6-sol", deprecated.get(0).path("model").asText());
    assertEquals("2027-02-28", deprecated.get(0).path("endOfSupport").asText());
  }

  @Test
  void aBreakerOpeningSendsCircuitOpen() throws Exception {
    gw.sim.clearScripts();
    gw.sim.scriptForever(SimRoute.ANTHROPIC_MESSAGES, Fault.status(500));
    String claude =
        "{\"model\":\"claude-opus-5-5\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    for (int i = 0; i < 2; i++) {
      gw.send(gw.postJson(TestGateway.ANTHROPIC, claude, Brand.fresh("storm")).build());
    }
    gw.sim.clearScripts();

    Eventually.until(
        "circuit_open reached the webhook",
        Duration.ofSeconds(10),
        () -> !alertsOfType("circuit_open").isEmpty());
    assertEquals("anthropic", alertsOfType("circuit_open").get(0).path("provider").asText());
    for (WebhookReceiver.Received r : receiver.received) {
      assertEquals(
          "sha256="
              + WebhookSender.signature(
                  "s3cret".getBytes(java.nio.charset.StandardCharsets.UTF_8), r.body()),
          r.signature());
      assertTrue(!r.body().contains(TOKEN), r.body());
    }
  }
}
