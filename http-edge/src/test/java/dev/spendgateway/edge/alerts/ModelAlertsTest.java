package dev.spendgateway.edge.alerts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.policy.catalog.Provider;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The model and provider alerts' keys (which decide how often each is sent) and the outbox's memory
 * of raised keys, which forgets them after {@link AlertOutbox#KEYS_KEPT} so that months of alerts
 * do not grow it.
 */
class ModelAlertsTest {
  private static final Instant AT = Instant.parse("2026-12-05T10:00:00Z");

  @ParameterizedTest(name = "410 for {0} on {1} at {2}: same key as the first: {3}")
  @CsvSource({
    // model,       route,                 at,                     same
    "gpt-6.1-sol,   /v1/chat/completions,  2026-12-05T23:59:59Z,   true",
    "gpt-6.1-sol,   /v1/responses,         2026-12-05T10:00:00Z,   false",
    "gpt-6-sol,     /v1/chat/completions,  2026-12-05T10:00:00Z,   false",
    "gpt-6.1-sol,   /v1/chat/completions,  2026-12-06T00:00:00Z,   false",
  })
  void aRetiredModelIsAnnouncedOncePerModelRouteAndDay(
      String model, String route, String at, boolean same) {
    Alert first = ModelAlerts.retired(Provider.OPENAI, "gpt-6.1-sol", "/v1/chat/completions", AT);
    Alert other = ModelAlerts.retired(Provider.OPENAI, model, route, Instant.parse(at));
    assertEquals(same, first.key().equals(other.key()));
    assertEquals(same, first.deliveryId().equals(other.deliveryId()));
    assertEquals("model_retired", other.type());
    assertTrue(other.body().contains("\"route\":\"" + route + "\""), other.body());
  }

  @Test
  void eachBreakerOpeningIsItsOwnAlert() {
    assertNotEquals(
        ModelAlerts.circuitOpen(Provider.ANTHROPIC, AT).key(),
        ModelAlerts.circuitOpen(Provider.ANTHROPIC, AT.plusSeconds(60)).key());
  }

  @Test
  void raisedKeysAreForgottenAfterTheirTimeButNotWhileTheirAlertIsPending() {
    Alert old = ModelAlerts.circuitOpen(Provider.OPENAI, AT);
    Alert undelivered = ModelAlerts.circuitOpen(Provider.ANTHROPIC, AT);
    AlertOutbox.State state =
        AlertOutbox.State.empty()
            .withDue(old, AT)
            .withDue(undelivered, AT)
            .withDelivered(old.key());

    Instant later = AT.plus(AlertOutbox.KEYS_KEPT).plus(Duration.ofDays(1));
    AlertOutbox.State after = state.withDue(ModelAlerts.circuitOpen(Provider.OPENAI, later), later);

    assertFalse(after.wasRaised(old.key()), "delivered and past its time: forgotten");
    assertTrue(after.wasRaised(undelivered.key()), "still pending: kept until it is delivered");
    assertEquals(2, after.raised().size());

    AlertOutbox.State recent =
        state.withDue(
            ModelAlerts.circuitOpen(Provider.OPENAI, AT.plusSeconds(5)), AT.plusSeconds(5));
    assertTrue(recent.wasRaised(old.key()), "within its time: remembered");
  }

  @Test
  void aYearOfDailyAlertsKeepsAboutTwoMonthsOfKeys() {
    AlertOutbox.State state = AlertOutbox.State.empty();
    for (int day = 0; day < 365; day++) {
      Instant at = AT.plus(Duration.ofDays(day));
      Alert alert = ModelAlerts.retired(Provider.OPENAI, "gpt-6.1-sol", "/v1/chat/completions", at);
      state = state.withDue(alert, at).withDelivered(alert.key());
    }
    assertTrue(
        state.raised().size() <= AlertOutbox.KEYS_KEPT.toDays() + 1, "" + state.raised().size());
  }
}
