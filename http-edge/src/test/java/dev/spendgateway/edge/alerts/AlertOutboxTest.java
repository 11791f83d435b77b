package dev.spendgateway.edge.alerts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.ledger.LedgerProtocol.CapUsage;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import dev.spendgateway.policy.caps.CapName;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.BooleanSupplier;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The outbox and the webhook sender against a real receiver on 127.0.0.1, with retry waits scaled
 * down: each threshold crossed is sent once, signed, with one delivery id on every attempt; a
 * receiver answering 500, timing out or gone is retried until it takes the alert; a crash between
 * "due" and "delivered" sends it again after the restart with the same id, and a delivered alert is
 * never sent again.
 */
class AlertOutboxTest {
  private static final String SECRET = "whsec-test";
  private static final Clock CLOCK =
      Clock.fixed(Instant.parse("2026-12-05T10:00:00Z"), ZoneOffset.UTC);
  private static final List<BigDecimal> THRESHOLDS =
      List.of(new BigDecimal("0.5"), new BigDecimal("0.8"), BigDecimal.ONE);

  private ActorTestKit kit;
  private WebhookReceiver receiver;
  private WebhookSender sender;

  @BeforeEach
  void start() {
    // The in-memory journal outlives an actor's stop within the test kit: a "restart" recovers.
    kit =
        ActorTestKit.create(
            ConfigFactory.parseMap(
                    Map.of(
                        "pekko.persistence.journal.plugin", "pekko.persistence.journal.inmem",
                        "pekko.persistence.snapshot-store.plugin", ""))
                .withFallback(ConfigFactory.defaultReference()));
  }

  @AfterEach
  void stop() {
    if (sender != null) {
      sender.stop();
    }
    if (receiver != null) {
      receiver.close();
    }
    kit.shutdownTestKit();
  }

  private WebhookSender senderTo(WebhookReceiver r, Duration timeout) {
    sender =
        new WebhookSender(r.url(), SECRET, Duration.ofMillis(50), Duration.ofMillis(200), timeout);
    return sender;
  }

  private static Usage acmeSpent(long spentMicros) {
    return new Usage(
        List.of(
            new CapUsage(CapName.BRAND_DAILY, "acme", "2026-12-05", 5_000_000, spentMicros, 0),
            new CapUsage(CapName.GLOBAL_DAILY, null, "2026-12-05", 40_000_000, spentMicros, 0)),
        0);
  }

  private static List<Alert> reached(long spentMicros) {
    return BudgetThresholds.reached(acmeSpent(spentMicros), THRESHOLDS, CLOCK.instant());
  }

  @Test
  void eachThresholdIsSentOnceSignedWithTheBodyTheContractNames() throws Exception {
    receiver = WebhookReceiver.answering(() -> 200);
    ActorRef<AlertOutbox.Command> outbox =
        kit.spawn(AlertOutbox.create(senderTo(receiver, Duration.ofSeconds(5)), CLOCK));
    outbox.tell(new AlertOutbox.Raise(reached(2_400_000))); // 48 %: nothing
    outbox.tell(new AlertOutbox.Raise(reached(4_020_000))); // 80.4 %: 50 and 80
    outbox.tell(new AlertOutbox.Raise(reached(4_020_000))); // again: nothing new
    awaitCondition(() -> receiver.received.size() == 2);
    outbox.tell(new AlertOutbox.Raise(reached(5_000_000))); // 100 %
    awaitCondition(() -> receiver.received.size() == 3);

    ObjectMapper json = new ObjectMapper();
    // The two alerts of one check are sent side by side: find the 80 % one.
    JsonNode at80 =
        json.readTree(
            receiver.received.stream()
                .filter(r -> r.body().contains("\"threshold\":0.8"))
                .findFirst()
                .orElseThrow()
                .body());
    assertEquals(
        json.readTree(
            "{\"type\":\"budget_threshold\",\"cap\":\"brand_daily\",\"subject\":\"acme\","
                + "\"window\":\"2026-12-05\",\"limitUsd\":5,\"spentUsd\":4.02,\"threshold\":0.8,"
                + "\"at\":\"2026-12-05T10:00:00Z\"}"),
        at80);
    for (WebhookReceiver.Received r : receiver.received) {
      assertEquals(
          "sha256=" + WebhookSender.signature(SECRET.getBytes(StandardCharsets.UTF_8), r.body()),
          r.signature());
    }
    assertEquals(
        3, receiver.received.stream().map(WebhookReceiver.Received::deliveryId).distinct().count());
    assertTrue(receiver.received.stream().noneMatch(r -> r.body().contains("global_daily")));
  }

  @Test
  void aReceiverAnswering500ThenTimingOutIsRetriedWithTheSameDeliveryId() throws Exception {
    // 1st: 500, 2nd: hangs past the 300 ms timeout, 3rd: taken.
    receiver = new WebhookReceiver(n -> n == 1 ? 500 : n == 2 ? -1 : 200);
    ActorRef<AlertOutbox.Command> outbox =
        kit.spawn(AlertOutbox.create(senderTo(receiver, Duration.ofMillis(300)), CLOCK));
    outbox.tell(new AlertOutbox.Raise(reached(2_500_000).subList(0, 1)));
    awaitCondition(() -> receiver.received.size() >= 3);
    assertEquals(
        1, receiver.received.stream().map(WebhookReceiver.Received::deliveryId).distinct().count());
  }

  @Test
  void aReceiverThatWentAwayGetsTheAlertWhenItIsBack() throws Exception {
    receiver = WebhookReceiver.answering(() -> 200);
    receiver.stop();
    ActorRef<AlertOutbox.Command> outbox =
        kit.spawn(AlertOutbox.create(senderTo(receiver, Duration.ofMillis(500)), CLOCK));
    outbox.tell(new AlertOutbox.Raise(reached(2_500_000)));
    awaitCondition(() -> sender.attempts() >= 2); // refused twice while it was away
    receiver.restart();
    awaitCondition(() -> receiver.received.size() == 1);
  }

  @Test
  void aCrashBetweenDueAndDeliveredResendsWithTheSameIdAndADeliveredOneIsNeverResent()
      throws Exception {
    receiver = WebhookReceiver.answering(() -> 200);
    // First life: the sends are recorded but never delivered (the process dies before).
    ConcurrentLinkedQueue<Alert> attempted = new ConcurrentLinkedQueue<>();
    ActorRef<AlertOutbox.Command> first =
        kit.spawn(AlertOutbox.create((alert, self) -> attempted.add(alert), CLOCK));
    first.tell(new AlertOutbox.Raise(reached(4_020_000))); // 50 and 80 due
    awaitCondition(() -> attempted.size() == 2);
    // The 50 % one was delivered before the crash, the 80 % one not.
    Alert at50 =
        attempted.stream()
            .filter(a -> a.body().contains("\"threshold\":0.5"))
            .findFirst()
            .orElseThrow();
    first.tell(new AlertOutbox.Delivered(at50.key()));
    kit.stop(first);

    ActorRef<AlertOutbox.Command> second =
        kit.spawn(AlertOutbox.create(senderTo(receiver, Duration.ofSeconds(5)), CLOCK));
    awaitCondition(() -> receiver.received.size() == 1);
    Alert at80 = attempted.stream().filter(a -> a != at50).findFirst().orElseThrow();
    assertEquals(at80.deliveryId(), receiver.received.get(0).deliveryId());
    // Raised again after the restart (the condition still holds): neither is sent again.
    second.tell(new AlertOutbox.Raise(reached(4_020_000)));
    second.tell(new AlertOutbox.Raise(reached(5_000_000))); // only the 100 % one is new
    awaitCondition(() -> receiver.received.size() == 2);
    assertTrue(
        receiver.received.get(1).body().contains("\"threshold\":1"), receiver.received.toString());
    Map<String, Long> perId =
        receiver.received.stream()
            .collect(
                java.util.stream.Collectors.groupingBy(
                    WebhookReceiver.Received::deliveryId, java.util.stream.Collectors.counting()));
    assertTrue(perId.values().stream().allMatch(c -> c == 1), perId.toString());
  }

  private static void awaitCondition(BooleanSupplier condition) {
    Eventually.until(
        "the webhook deliveries arrive", Duration.ofSeconds(10), condition::getAsBoolean);
  }
}
