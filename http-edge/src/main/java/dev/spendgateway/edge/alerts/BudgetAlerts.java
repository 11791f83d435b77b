package dev.spendgateway.edge.alerts;

import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.cluster.ClusterMode;
import java.time.Clock;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wires the alert webhook: an {@link AlertOutbox} sending through a {@link WebhookSender}, and a
 * timer that every {@code alerts.check-interval} reads every cap's spend from the ledger (the same
 * numbers as {@code /usage}, every brand included) and raises the thresholds reached. Off without
 * {@code GATEWAY_ALERT_WEBHOOK_URL}.
 */
public final class BudgetAlerts {
  private static final Logger log = LoggerFactory.getLogger(BudgetAlerts.class);

  private BudgetAlerts() {}

  /** Starts the alerts when a webhook is configured; the outbox, if started. */
  public static Optional<ActorRef<AlertOutbox.Command>> start(
      ActorSystem<?> system, LedgerClient ledger, AlertSettings settings, Clock clock) {
    if (settings.webhook().isEmpty()) {
      return Optional.empty();
    }
    if (ClusterMode.isClusterNode(system.settings().config())) {
      // One writer per persistence id: a per-node outbox would be several. Not yet a singleton.
      log.warn(
          "alerts: the webhook is not started on a cluster node (use the Prometheus rules in"
              + " conf/prometheus/ there)");
      return Optional.empty();
    }
    if (settings.secret().isEmpty()) {
      log.warn(
          "alerts: GATEWAY_ALERT_WEBHOOK_SECRET is not set; alerts are signed with an empty key");
    }
    WebhookSender sender = WebhookSender.of(settings);
    ActorRef<AlertOutbox.Command> outbox =
        system.systemActorOf(AlertOutbox.create(sender, clock), "alert-outbox", Props.empty());
    system
        .scheduler()
        .scheduleWithFixedDelay(
            settings.checkInterval(),
            settings.checkInterval(),
            () -> check(ledger, settings, clock, outbox),
            system.executionContext());
    org.apache.pekko.actor.CoordinatedShutdown.get(Adapter.toClassic(system))
        .addJvmShutdownHook(sender::stop);
    log.info(
        "alerts: budget thresholds {} to the webhook at {}",
        settings.thresholds(),
        settings.webhook().get().getHost());
    return Optional.of(outbox);
  }

  private static void check(
      LedgerClient ledger,
      AlertSettings settings,
      Clock clock,
      ActorRef<AlertOutbox.Command> outbox) {
    ledger
        .usage(Optional.empty(), Integer.MAX_VALUE)
        .thenAccept(
            usage ->
                outbox.tell(
                    new AlertOutbox.Raise(
                        BudgetThresholds.reached(usage, settings.thresholds(), clock.instant()))));
  }
}
