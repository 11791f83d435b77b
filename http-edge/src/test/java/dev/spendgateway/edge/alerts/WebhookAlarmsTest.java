package dev.spendgateway.edge.alerts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.spendgateway.policy.catalog.ModelCatalog;
import dev.spendgateway.policy.catalog.ModelInfo;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A deprecated model is asked for by every call to it; the outbox hears of it once a model and day,
 * not once a call.
 */
class WebhookAlarmsTest {
  private static final ActorTestKit kit = ActorTestKit.create();

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  @Test
  void aDeprecatedModelInUseIsRaisedOnceAModelAndDay() {
    TestProbe<AlertOutbox.Command> outbox = kit.createTestProbe();
    WebhookAlarms alarms =
        new WebhookAlarms(
            outbox.ref(), Clock.fixed(Instant.parse("2026-12-05T10:00:00Z"), ZoneOffset.UTC));
    ModelInfo old =
        ModelCatalog.fromMap(ConfigFactory.load().getConfig("models").root().unwrapped())
            .find("gpt-6-sol")
            .orElseThrow();
    LocalDate today = LocalDate.parse("2026-12-05");

    for (int call = 0; call < 100; call++) {
      alarms.modelDeprecatedInUse(old, today);
    }
    alarms.modelDeprecatedInUse(old, today.plusDays(1));

    AlertOutbox.Raise first = outbox.expectMessageClass(AlertOutbox.Raise.class);
    AlertOutbox.Raise second = outbox.expectMessageClass(AlertOutbox.Raise.class);
    outbox.expectNoMessage();
    assertEquals("model_deprecated", first.alerts().get(0).type());
    assertTrue(first.alerts().get(0).body().contains("\"day\":\"2026-12-05\""));
    assertTrue(second.alerts().get(0).body().contains("\"day\":\"2026-12-06\""));
  }
}
