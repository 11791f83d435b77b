package dev.spendgateway.edge.alerts;

import dev.spendgateway.edge.call.GuardAlarms;
import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.catalog.Provider;
import java.time.Clock;
import java.time.LocalDate;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * The guards' alarms as webhook alerts, journaled and sent by the {@link AlertOutbox} like the
 * budget thresholds (so they survive a restart and are sent once per key).
 *
 * <p>A deprecated model is asked for by every call to it: the outbox would drop all but the day's
 * first, but only after a message per call to its actor, so the day each model was last raised is
 * remembered here and the rest of the day costs one map lookup per call. The map holds one entry
 * per deprecated model of the catalog.
 */
public final class WebhookAlarms implements GuardAlarms {
  private final ActorRef<AlertOutbox.Command> outbox;
  private final Clock clock;
  private final Map<String, LocalDate> deprecatedRaised = new ConcurrentHashMap<>();

  public WebhookAlarms(ActorRef<AlertOutbox.Command> outbox, Clock clock) {
    this.outbox = outbox;
    this.clock = clock;
  }

  @Override
  public void modelRetired(Provider provider, String model, String route) {
    raise(ModelAlerts.retired(provider, model, route, clock.instant()));
  }

  @Override
  public void modelDeprecatedInUse(ModelInfo model, LocalDate today) {
    if (today.equals(deprecatedRaised.put(model.name(), today))) {
      return;
    }
    raise(ModelAlerts.deprecatedInUse(model, today, clock.instant()));
  }

  @Override
  public void circuitOpened(Provider provider) {
    raise(ModelAlerts.circuitOpen(provider, clock.instant()));
  }

  private void raise(Alert alert) {
    outbox.tell(new AlertOutbox.Raise(List.of(alert)));
  }
}
