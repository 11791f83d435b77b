package dev.spendgateway.ledger;

import dev.spendgateway.ledger.LedgerProtocol.Batch;
import dev.spendgateway.ledger.LedgerProtocol.BatchWritten;
import dev.spendgateway.ledger.LedgerProtocol.Batchable;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;

/**
 * The ledger's front door and group-commit buffer. It owns {@link GlobalBudget} as its child and
 * is the one {@code ActorRef<GlobalBudget.Command>} the edge is given.
 *
 * <p>Reserve, settle and void are sent on as one {@link Batch} while no batch is being written;
 * while one is, they queue here and go out together (at most {@code max-batch}) as soon as its
 * write is confirmed, so a batch grows with whatever arrived during the previous write and its
 * flush. With {@code ledger.journal.pipeline = on} a write is confirmed at commit instead, and the
 * next batch is decided and written while the previous one is still being flushed. Each caller is answered by {@code GlobalBudget}
 * only after the batch holding its event is flushed to the journal's disk. Queries and operator
 * commands pass straight through.
 *
 * <p>The queue is bounded ({@code ledger.max-queued-commands}): a command arriving when it is full
 * is answered {@link LedgerProtocol.Busy} at once and never decided. A queue that long means the
 * journal is stalled; its callers would give up before their turn, and each command queued past
 * its caller's deadline is work (and memory) for nobody. Commands that do wait carry their
 * caller's deadline, and the writer drops those whose deadline passed while they queued.
 *
 * <p>On start it first runs the journal schema DDL (idempotent), stashing what arrives meanwhile.
 */
public final class ReservationBatcher extends AbstractBehavior<Object> {

  private record SchemaReady(Throwable failure) {}

  private record WriteDone(int commands, long startedNanos, Throwable failure) {}

  private final ActorRef<GlobalBudget.Command> ledger;
  private final int maxBatch;
  private final int maxQueued;
  private final LedgerObserver observer;
  private final Duration writeTimeout;
  private final ArrayDeque<Batchable> queued = new ArrayDeque<>();
  private boolean writing;

  /**
   * @param schema runs the journal DDL before the ledger starts; {@code null} to skip (schema
   *     managed elsewhere, e.g. PostgreSQL migrations)
   */
  static Behavior<GlobalBudget.Command> create(
      LedgerSettings settings, Clock clock, Supplier<CompletionStage<Done>> schema) {
    return create(settings, clock, schema, LedgerObserver.NONE);
  }

  /** As above; {@code observer} is told about every durable write and the recovery. */
  static Behavior<GlobalBudget.Command> create(
      LedgerSettings settings, Clock clock, Supplier<CompletionStage<Done>> schema, LedgerObserver observer) {
    Behavior<Object> behavior = Behaviors.withStash(10_000, stash -> Behaviors.setup(context -> {
      if (schema == null) {
        return new ReservationBatcher(context, settings, clock, observer);
      }
      context.pipeToSelf(schema.get(), (done, failure) -> new SchemaReady(failure));
      return creatingSchema(context, stash, settings, clock, observer);
    }));
    return behavior.narrow();
  }

  private static Behavior<Object> creatingSchema(
      ActorContext<Object> context, StashBuffer<Object> stash, LedgerSettings settings, Clock clock,
      LedgerObserver observer) {
    return Behaviors.receive(Object.class)
        .onMessage(SchemaReady.class, ready -> {
          if (ready.failure() != null) {
            context.getLog().error("ledger journal schema could not be created; the ledger is not started",
                ready.failure());
            observer.recoveryFailed(ready.failure(), false);
            return Behaviors.stopped();
          }
          return stash.unstashAll(new ReservationBatcher(context, settings, clock, observer));
        })
        .onAnyMessage(message -> {
          stash.stash(message);
          return Behaviors.same();
        })
        .build();
  }

  private ReservationBatcher(
      ActorContext<Object> context, LedgerSettings settings, Clock clock, LedgerObserver observer) {
    super(context);
    Behavior<GlobalBudget.Command> budget = Behaviors.supervise(GlobalBudget.create(settings, clock, observer))
        .onFailure(SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(10), 0.2));
    this.ledger = context.spawn(budget, "global-budget");
    this.maxBatch = settings.maxBatch();
    this.maxQueued = settings.maxQueuedCommands();
    this.observer = observer;
    this.writeTimeout = settings.askTimeout();
  }

  @Override
  public Receive<Object> createReceive() {
    return newReceiveBuilder()
        .onMessage(Batchable.class, this::onBatchable)
        .onMessage(WriteDone.class, this::onWriteDone)
        .onMessage(GlobalBudget.Command.class, this::onPassThrough)
        .build();
  }

  private Behavior<Object> onBatchable(Batchable command) {
    if (queued.size() >= maxQueued) {
      shed(command);
      return this;
    }
    queued.add(command);
    if (!writing) {
      sendBatch();
    }
    return this;
  }

  private Behavior<Object> onWriteDone(WriteDone done) {
    if (done.failure() != null) {
      getContext().getLog().warn("ledger batch of {} commands got no write confirmation: {}",
          done.commands(), done.failure().toString());
    }
    if (getContext().getLog().isDebugEnabled()) {
      getContext().getLog().debug("batch of {} commands written in {} us, {} queued",
          done.commands(), (System.nanoTime() - done.startedNanos()) / 1000, queued.size());
    }
    writing = false;
    if (!queued.isEmpty()) {
      sendBatch();
    }
    return this;
  }

  /** Answers busy at once; metrics must never break the ledger, so the observer's failure is dropped. */
  private void shed(Batchable command) {
    GlobalBudget.send(command, Decider.busy(command));
    try {
      observer.shed(1);
    } catch (RuntimeException e) {
      getContext().getLog().warn("ledger observer failed: {}", e.toString());
    }
  }

  private Behavior<Object> onPassThrough(GlobalBudget.Command command) {
    ledger.tell(command);
    return this;
  }

  private void sendBatch() {
    List<Batchable> batch = new ArrayList<>(Math.min(queued.size(), maxBatch));
    while (!queued.isEmpty() && batch.size() < maxBatch) {
      batch.add(queued.poll());
    }
    writing = true;
    long started = System.nanoTime();
    getContext().ask(BatchWritten.class, ledger, writeTimeout,
        replyTo -> new Batch(List.copyOf(batch), replyTo),
        (written, failure) -> new WriteDone(batch.size(), started, failure));
  }
}
