package dev.spendgateway.edge.alerts;

import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.cluster.ClusterMode;
import java.time.Clock;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.typed.ClusterSingleton;
import org.apache.pekko.cluster.typed.SingletonActor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wires the alert webhook: an {@link AlertOutbox} sending through a {@link WebhookSender}, and a
 * timer that every {@code alerts.check-interval} reads every cap's spend from the ledger (the same
 * numbers as {@code /usage}, every brand included) and raises the thresholds reached. Off without
 * {@code GATEWAY_ALERT_WEBHOOK_URL}.
 *
 * <p>All three run in one actor, {@link #onOneNode}: in one process a plain actor, in a cluster a
 * Cluster Singleton, so exactly one node checks, journals and sends (the outbox's journal has one
 * writer, like the ledger's). Every node reaches it through the singleton's proxy, so an alarm
 * raised on any node (a 410, a breaker) goes to the one outbox. When the singleton moves (its node
 * leaves or dies), the old incarnation's retries stop with it and the new one recovers the outbox
 * from the shared journal: what was due and not delivered is sent from the new node, under the same
 * delivery id.
 */
public final class BudgetAlerts {
  private static final Logger log = LoggerFactory.getLogger(BudgetAlerts.class);

  /** The singleton's name (one per cluster). */
  static final String SINGLETON_NAME = "alert-outbox";

  private BudgetAlerts() {}

  /** Starts the alerts when a webhook is configured; the outbox (or its proxy), if started. */
  public static Optional<ActorRef<AlertOutbox.Command>> start(
      ActorSystem<?> system, LedgerClient ledger, AlertSettings settings, Clock clock) {
    if (settings.webhook().isEmpty()) {
      return Optional.empty();
    }
    if (settings.secret().isEmpty()) {
      log.warn(
          "alerts: GATEWAY_ALERT_WEBHOOK_SECRET is not set; alerts are signed with an empty key");
    }
    Behavior<AlertOutbox.Command> alerts =
        onOneNode(
            () -> WebhookSender.of(settings),
            ledger,
            settings,
            clock,
            sender -> AlertOutbox.create(sender, clock));
    ActorRef<AlertOutbox.Command> outbox;
    if (ClusterMode.isClusterNode(system.settings().config())) {
      // A crash restarts it (the outbox recovers from the journal); only the oldest node runs it.
      outbox =
          ClusterSingleton.get(system)
              .init(
                  SingletonActor.of(
                      Behaviors.supervise(alerts).onFailure(SupervisorStrategy.restart()),
                      SINGLETON_NAME));
    } else {
      outbox = system.systemActorOf(alerts, SINGLETON_NAME, Props.empty());
    }
    log.info(
        "alerts: budget thresholds {} to the webhook at {}{}",
        settings.thresholds(),
        settings.webhook().get().getHost(),
        ClusterMode.isClusterNode(system.settings().config())
            ? " (sent by the one node running the alert outbox singleton)"
            : "");
    return Optional.of(outbox);
  }

  /**
   * The alerts of one incarnation: a sender of its own, the outbox sending through it, the
   * threshold check on a timer, and every command passed to the outbox. When it stops (the process
   * ends, or a cluster moves it to another node) its timer and its sender's retries stop too, so
   * two incarnations never send at once.
   */
  static Behavior<AlertOutbox.Command> onOneNode(
      Supplier<WebhookSender> newSender,
      LedgerClient ledger,
      AlertSettings settings,
      Clock clock,
      Function<WebhookSender, Behavior<AlertOutbox.Command>> outboxSendingThrough) {
    return Behaviors.setup(
        context -> {
          WebhookSender sender = newSender.get();
          ActorRef<AlertOutbox.Command> outbox =
              context.spawn(outboxSendingThrough.apply(sender), "outbox");
          Cancellable checks =
              context
                  .getSystem()
                  .scheduler()
                  .scheduleWithFixedDelay(
                      settings.checkInterval(),
                      settings.checkInterval(),
                      () -> check(ledger, settings, clock, outbox),
                      context.getExecutionContext());
          return Behaviors.receive(AlertOutbox.Command.class)
              .onAnyMessage(
                  command -> {
                    outbox.tell(command);
                    return Behaviors.same();
                  })
              .onSignal(
                  PostStop.class,
                  stopped -> {
                    checks.cancel();
                    sender.stop();
                    return Behaviors.same();
                  })
              .build();
        });
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
