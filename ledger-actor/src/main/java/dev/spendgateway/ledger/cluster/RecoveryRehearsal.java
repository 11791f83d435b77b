package dev.spendgateway.ledger.cluster;

import dev.spendgateway.ledger.GlobalBudget;
import java.util.function.Consumer;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.RecoveryCompleted;
import org.apache.pekko.persistence.typed.RecoveryFailed;
import org.apache.pekko.persistence.typed.javadsl.CommandHandler;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehavior;
import org.apache.pekko.persistence.typed.javadsl.SignalHandler;

/**
 * A read-only run through the ledger's recovery, once on every cluster node, as soon as the
 * cluster's ledger answers (so its journal tables exist): the latest snapshot and the events after
 * it are read from the journal and decoded, and nothing is decided or written. The first recovery
 * in a JVM is slow for reasons that have nothing to do with the journal's size: the persistence
 * plugin's journal and snapshot actors are created, its queries compiled, the event and snapshot
 * classes loaded and their decoders built (seconds on a busy machine: a take-over recovery of a
 * dozen events took 4.7 s cold and 0.5 s after a rehearsal). Without the rehearsal a node pays that
 * at the worst moment, while it takes the ledger over and every node answers 503.
 *
 * <p>It reads under the ledger's own persistence id, which is safe because reading is all it can
 * do: its command handler knows one command, stop, and it never persists. Two readers of one
 * journal never disturb each other or the writer (the journal's reads are plain selects).
 */
final class RecoveryRehearsal extends EventSourcedBehavior<RecoveryRehearsal.Stop, Object, Object> {

  /** The only command: stop (sent to itself once the recovery is over). */
  record Stop() {}

  /** The events replayed after the snapshot (the state until the first event is the snapshot). */
  record Replayed(long events) {}

  private final ActorContext<Stop> context;
  private final Consumer<String> done;
  private final long startedNanos = System.nanoTime();

  /**
   * @param done told one line saying how the rehearsal went (for the log)
   */
  static Behavior<Stop> create(Consumer<String> done) {
    return Behaviors.setup(
        context -> new RecoveryRehearsal(context, GlobalBudget.PERSISTENCE_ID, done));
  }

  private RecoveryRehearsal(ActorContext<Stop> context, PersistenceId id, Consumer<String> done) {
    super(id);
    this.context = context;
    this.done = done;
  }

  /**
   * Whatever the ledger's state type is, the snapshot (if any) is taken as it is: decoding it is
   * the rehearsal. The events after it are decoded and counted.
   */
  @Override
  public Object emptyState() {
    return new Replayed(0);
  }

  @Override
  public CommandHandler<Stop, Object, Object> commandHandler() {
    return newCommandHandlerBuilder()
        .forAnyState()
        .onCommand(Stop.class, stop -> Effect().stop())
        .build();
  }

  /** Events are decoded (that is the rehearsal) and counted; nothing else is done with them. */
  @Override
  public EventHandler<Object, Object> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onAnyEvent(
            (state, event) -> new Replayed(state instanceof Replayed r ? r.events() + 1 : 1));
  }

  @Override
  public SignalHandler<Object> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(
            RecoveryCompleted.instance(),
            state -> {
              long events = state instanceof Replayed r ? r.events() : 0;
              long ms = (System.nanoTime() - startedNanos) / 1_000_000;
              done.accept(
                  "ledger recovery rehearsed in "
                      + ms
                      + " ms ("
                      + events
                      + " events after the latest snapshot): a take-over by this node recovers warm");
              context.getSelf().tell(new Stop());
            })
        .onSignal(
            RecoveryFailed.class,
            (state, failed) ->
                done.accept(
                    "ledger recovery rehearsal failed (a take-over by this node recovers cold): "
                        + failed.getFailure()))
        .build();
  }
}
