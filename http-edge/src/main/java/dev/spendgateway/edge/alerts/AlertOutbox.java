package dev.spendgateway.edge.alerts;

import dev.spendgateway.ledger.LedgerSerializable;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.RecoveryCompleted;
import org.apache.pekko.persistence.typed.javadsl.CommandHandler;
import org.apache.pekko.persistence.typed.javadsl.Effect;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehavior;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;
import org.apache.pekko.persistence.typed.javadsl.SignalHandler;

/**
 * The alerts' outbox: journals that an alert is due before it is sent and that it was delivered
 * once the receiver took it (persistence id {@code alerts}, in the ledger's journal database,
 * beside the ledger's own events and never among them). A restart sends again every alert due and
 * not delivered, with its delivery id, and never one delivered; an alert whose key was raised
 * before is not raised again, so each (cap, subject, window, threshold) is sent once.
 *
 * <p>A crash after the receiver took an alert but before its delivery was journaled sends it once
 * more with the same delivery id: a receiver drops a delivery id it has seen (at-least-once, made
 * exactly-once by the id).
 */
public final class AlertOutbox
    extends EventSourcedBehavior<AlertOutbox.Command, AlertOutbox.Event, AlertOutbox.State> {

  public static final PersistenceId ID = PersistenceId.ofUniqueId("alerts");

  public sealed interface Command extends LedgerSerializable {}

  /** Alerts whose condition holds now; those never raised before become due. */
  public record Raise(List<Alert> alerts) implements Command {}

  /** The receiver took the alert with this key. */
  public record Delivered(String key) implements Command {}

  public sealed interface Event extends LedgerSerializable {}

  /** Event: the alert is due (journaled before the first attempt). */
  public record AlertDue(String key, String type, String body, Instant at) implements Event {}

  /** Event: the receiver answered 2xx for the alert with this key. */
  public record AlertDelivered(String key, Instant at) implements Event {}

  /**
   * How long a raised key is remembered. Every key names its own window, day or opening, and no
   * alert is raised for a window that ended (thresholds are read from the current windows, the
   * model alerts carry their day): 62 days outlasts the longest window (a 31-day month) twice, so
   * forgetting a key never sends it again, and a gateway running for years keeps two months of
   * keys, not all of them.
   */
  static final Duration KEYS_KEPT = Duration.ofDays(62);

  /**
   * Events between two snapshots of the outbox: a restart replays at most this many, not every
   * alert ever sent.
   */
  static final int SNAPSHOT_EVERY = 200;

  /**
   * What the outbox knows: the alerts due and not delivered, and every key raised in the last
   * {@link #KEYS_KEPT} with when it was.
   */
  public record State(Map<String, Alert> pending, Map<String, Instant> raised)
      implements LedgerSerializable {
    static State empty() {
      return new State(Map.of(), Map.of());
    }

    boolean wasRaised(String key) {
      return raised.containsKey(key);
    }

    /**
     * With {@code alert} due, raised at {@code at}; keys raised more than {@link #KEYS_KEPT} before
     * {@code at} are forgotten (by the event's own time, so a replay forgets the same).
     */
    State withDue(Alert alert, Instant at) {
      Map<String, Alert> p = new HashMap<>(pending);
      p.put(alert.key(), alert);
      Instant forgetBefore = at.minus(KEYS_KEPT);
      Map<String, Instant> r = new HashMap<>();
      raised.forEach(
          (key, when) -> {
            if (!when.isBefore(forgetBefore) || p.containsKey(key)) {
              r.put(key, when);
            }
          });
      r.put(alert.key(), at);
      return new State(Map.copyOf(p), Map.copyOf(r));
    }

    State withDelivered(String key) {
      Map<String, Alert> p = new HashMap<>(pending);
      p.remove(key);
      return new State(Map.copyOf(p), raised);
    }
  }

  private final ActorContext<Command> context;
  private final BiConsumer<Alert, ActorRef<Command>> send;
  private final Clock clock;

  /**
   * @param send starts delivering an alert and tells the outbox {@link Delivered} when done (a
   *     {@link WebhookSender}, or a test's stand-in)
   */
  public static Behavior<Command> create(BiConsumer<Alert, ActorRef<Command>> send, Clock clock) {
    return Behaviors.setup(ctx -> new AlertOutbox(ctx, send, clock));
  }

  /** The outbox sending through {@code sender}. */
  public static Behavior<Command> create(WebhookSender sender, Clock clock) {
    return create(
        (alert, outbox) -> sender.deliver(alert, a -> outbox.tell(new Delivered(a.key()))), clock);
  }

  private AlertOutbox(
      ActorContext<Command> context, BiConsumer<Alert, ActorRef<Command>> send, Clock clock) {
    super(ID);
    this.context = context;
    this.send = send;
    this.clock = clock;
  }

  @Override
  public State emptyState() {
    return State.empty();
  }

  @Override
  public CommandHandler<Command, Event, State> commandHandler() {
    return newCommandHandlerBuilder()
        .forAnyState()
        .onCommand(Raise.class, this::onRaise)
        .onCommand(Delivered.class, this::onDelivered)
        .build();
  }

  private Effect<Event, State> onRaise(State state, Raise cmd) {
    Instant now = clock.instant();
    List<Event> due = new ArrayList<>();
    List<Alert> toSend = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (Alert a : cmd.alerts()) {
      if (!state.wasRaised(a.key()) && seen.add(a.key())) {
        due.add(new AlertDue(a.key(), a.type(), a.body(), now));
        toSend.add(a);
      }
    }
    if (due.isEmpty()) {
      return Effect().none();
    }
    // Sent only once journaled: a crash before the write loses nothing (the condition still
    // holds at the next check), a crash after it is resent from the journal.
    return Effect()
        .persist(due)
        .thenRun(s -> toSend.forEach(a -> send.accept(a, context.getSelf())));
  }

  private Effect<Event, State> onDelivered(State state, Delivered cmd) {
    if (!state.pending().containsKey(cmd.key())) {
      return Effect().none();
    }
    return Effect().persist(new AlertDelivered(cmd.key(), clock.instant()));
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onEvent(
            AlertDue.class, (s, e) -> s.withDue(new Alert(e.key(), e.type(), e.body()), e.at()))
        .onEvent(AlertDelivered.class, (s, e) -> s.withDelivered(e.key()))
        .build();
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    // Snapshots only bound the replay; every event stays in the journal as the alerts' history.
    return RetentionCriteria.snapshotEvery(SNAPSHOT_EVERY, 2);
  }

  @Override
  public SignalHandler<State> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(
            RecoveryCompleted.instance(),
            state -> state.pending().values().forEach(a -> send.accept(a, context.getSelf())))
        .build();
  }
}
