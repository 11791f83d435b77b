package dev.spendgateway.edge.alerts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.sim.SimConfig;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Through a running gateway with its H2 journal: settling spend past 50 % and 80 % of a brand's
 * daily cap sends one signed budget alert per threshold to the webhook, and nothing for a cap below
 * its thresholds. The outbox's events go through the journal's real serialization.
 */
class BudgetAlertsTest {
  private static final TestGateway.Suite SUITE =
      new TestGateway.Suite("e2e-test.conf", "budget-alerts", SimConfig.defaults());
  private static final String TOKEN = "gw-e2e-token-7Q2x9";

  private WebhookReceiver receiver;
  private TestGateway gateway;

  @AfterEach
  void stop() throws Exception {
    if (gateway != null) {
      gateway.close();
    }
    if (receiver != null) {
      receiver.close();
    }
  }

  @Test
  void settledSpendCrossingThresholdsIsSentOncePerThreshold() throws Exception {
    receiver = WebhookReceiver.answering(() -> 200);
    gateway =
        TestGateway.start(
            SUITE,
            "thresholds",
            Map.of(
                "alerts.thresholds", List.of("0.5", "0.8", "1.0"),
                "alerts.check-interval", "100ms",
                "alerts.webhook.url", receiver.url().toString(),
                "alerts.webhook.secret", "s3cret",
                "alerts.webhook.first-retry", "100ms",
                "alerts.webhook.max-retry-interval", "1s",
                "alerts.webhook.request-timeout", "2s"));
    reserveAndSettle("a-1", "4.02");

    awaitCondition(() -> receiver.received.size() >= 2);
    ObjectMapper json = new ObjectMapper();
    JsonNode first = json.readTree(receiver.received.get(0).body());
    JsonNode second = json.readTree(receiver.received.get(1).body());
    assertEquals("budget_threshold", first.get("type").textValue());
    assertEquals("brand_daily", first.get("cap").textValue());
    assertEquals("acme", first.get("subject").textValue());
    assertEquals(
        List.of("0.5", "0.8"),
        List.of(first.get("threshold").asText(), second.get("threshold").asText()).stream()
            .sorted()
            .toList());
    for (WebhookReceiver.Received r : receiver.received) {
      assertEquals(
          "sha256=" + WebhookSender.signature("s3cret".getBytes(StandardCharsets.UTF_8), r.body()),
          r.signature());
    }
    // Many checks later, the cap reaches 100 %: only that threshold is new.
    reserveAndSettle("a-2", "0.98");
    awaitCondition(() -> receiver.received.size() >= 3);
    assertTrue(
        receiver.received.get(2).body().contains("\"threshold\":1"), receiver.received.toString());
    assertEquals(
        3, receiver.received.stream().map(WebhookReceiver.Received::deliveryId).distinct().count());
    assertEquals("5", spentUsd());
    assertTrue(receiver.received.stream().noneMatch(r -> r.body().contains(TOKEN)));
  }

  private void reserveAndSettle(String id, String usd) throws Exception {
    HttpResponse<String> reserved =
        send(
            "/ledger/reservations",
            "{\"id\":\""
                + id
                + "\",\"lane\":\"app\",\"brand\":\"acme\",\"amountUsd\":"
                + usd
                + ",\"brandDailyUsd\":5,\"brandMonthlyUsd\":50}");
    assertEquals(201, reserved.statusCode(), reserved.body());
    HttpResponse<String> settled =
        send("/ledger/reservations/" + id + "/settle", "{\"actualUsd\":" + usd + "}");
    assertEquals(200, settled.statusCode(), settled.body());
  }

  private String spentUsd() {
    try {
      JsonNode usage = gateway.usage("acme");
      return TestGateway.money(TestGateway.cap(usage, "brand_daily"), "spentUsd")
          .stripTrailingZeros()
          .toPlainString();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private HttpResponse<String> send(String path, String body) throws Exception {
    return gateway.send(
        HttpRequest.newBuilder(java.net.URI.create(gateway.base + path))
            .header("x-api-key", TOKEN)
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build());
  }

  private static void awaitCondition(BooleanSupplier condition) {
    Eventually.until(
        "the webhook deliveries arrive", Duration.ofSeconds(15), condition::getAsBoolean);
  }
}
