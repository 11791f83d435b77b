package dev.spendgateway.ledger;

import dev.spendgateway.ledger.LedgerProtocol.Batch;
import dev.spendgateway.ledger.LedgerProtocol.BatchWritten;
import dev.spendgateway.ledger.LedgerProtocol.Batchable;
import dev.spendgateway.ledger.journal.JournalDurability;
import dev.spendgateway.ledger.journal.JournalFence;
import dev.spendgateway.ledger.journal.JournalWriter;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.AbstractBehavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.Receive;
import org.apache.pekko.actor.typed.javadsl.StashBuffer;

/**
 * The ledger's front door and group-commit buffer. It owns {@link GlobalBudget} as its child and is
 * the one {@code ActorRef<GlobalBudget.Command>} the edge is given.
 *
 * <p>Reserve, settle and void are sent on as one {@link Batch} while no batch is being written;
 * while one is, they queue here and go out together (at most {@code max-batch}) as soon as its
 * write is confirmed, so a batch grows with whatever arrived during the previous write and its
 * flush. With {@code ledger.journal.pipeline = on} a write is confirmed at commit instead, and the
 * next batch is decided and written while the previous one is still being flushed. Each caller is
 * answered by {@code GlobalBudget} only after the batch holding its event is flushed to the
 * journal's disk, except the gateway's own settles and voids: a batch of only those is confirmed at
 * its commit, so the next batch goes at once and its flush covers them ({@code GlobalBudget}
 * explains why that is safe). Queries and operator commands pass straight through.
 *
 * <p>The queue is bounded ({@code ledger.max-queued-commands}): a command arriving when it is full
 * is answered {@link LedgerProtocol.Busy} at once and never decided. A queue that long means the
 * journal is stalled; its callers would give up before their turn, and each command queued past its
 * caller's deadline is work (and memory) for nobody. Commands that do wait carry their caller's
 * deadline, and the writer drops those whose deadline passed while they queued.
 *
 * <p>On start it first runs the journal schema DDL (idempotent), stashing what arrives meanwhile.
 */
public final class ReservationBatcher extends AbstractBehavior<Object> {

  private record SchemaReady(Throwable failure) {}

  private record PrepareAgain() {}

  /** How long after a failed schema step or durability check it is tried again. */
  static final Duration PREPARE_RETRY = Duration.ofSeconds(3);

  private record WriteDone(long batchNo, int commands, long startedNanos, Throwable failure) {}

  /** The journal refused a write because another ledger wrote that sequence number first. */
  private record Fenced(String why) {}

  /** The linger armed as number {@code generation} is over: send what waits, if nothing is. */
  private record LingerOver(long generation) {}

  /** The stopped {@code GlobalBudget} is gone. */
  private record BudgetStopped() {}

  /** The fenced pause is over: recover a new {@code GlobalBudget} from the journal. */
  private record Recover() {}

  /** The key of how long a fenced ledger stays stopped (conf/cluster.conf). */
  static final String FENCED_PAUSE_KEY = "ledger.journal.fenced-pause";

  private final Behavior<GlobalBudget.Command> budget;
  private ActorRef<GlobalBudget.Command> ledger;
  private int incarnation;
  private final int maxBatch;
  private final int maxQueued;
  private final LedgerObserver observer;
  private final Duration writeTimeout;
  private final ArrayDeque<Batchable> queued = new ArrayDeque<>();
  private final JournalFence fence;
  private final Consumer<String> fenceListener;
  private final Duration fencedPause;
  private boolean writing;

  /**
   * How long the gateway's own settles and voids wait for company when the slot is free ({@code
   * ledger.journal.close-linger}); zero sends them at once.
   */
  private final Duration closeLinger;

  /** Queued commands that are not the gateway's own closes. */
  private int queuedOthers;

  /** Numbers the lingers, so an old one's end cannot cut a newer one short; 0 while none runs. */
  private long lingering;

  private long lingers;

  /**
   * Numbers the batches, so the confirmation of one written before a fence cannot end a later one.
   */
  private long batchNo;

  /** The batch being written: answered "busy" by this actor if the journal fences its write. */
  private List<Batchable> inFlight = List.of();

  /**
   * Between a fenced write and the recovery of a new GlobalBudget: every write is answered busy.
   */
  private boolean fenced;

  /** The singleton is leaving this node: finish the write in progress, take nothing new. */
  private boolean handingOver;

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
      LedgerSettings settings,
      Clock clock,
      Supplier<CompletionStage<Done>> schema,
      LedgerObserver observer) {
    Behavior<Object> behavior =
        Behaviors.withStash(
            10_000,
            stash ->
                Behaviors.setup(
                    context -> {
                      if (schema == null) {
                        return new ReservationBatcher(context, settings, clock, observer);
                      }
                      context.pipeToSelf(schema.get(), (done, failure) -> new SchemaReady(failure));
                      return creatingSchema(context, stash, settings, clock, observer, schema);
                    }));
    return behavior.narrow();
  }

  private static Behavior<Object> creatingSchema(
      ActorContext<Object> context,
      StashBuffer<Object> stash,
      LedgerSettings settings,
      Clock clock,
      LedgerObserver observer,
      Supplier<CompletionStage<Done>> schema) {
    return Behaviors.receive(Object.class)
        .onMessage(
            SchemaReady.class,
            ready -> {
              if (ready.failure() != null) {
                // Tried again rather than given up: a database that is still starting, or a pool
                // that had no
                // connection free, must not leave the gateway without a ledger until someone
                // restarts it.
                // The observer counts the tries (the gateway stops after a bounded number).
                context
                    .getLog()
                    .error(
                        "ledger journal could not be prepared (schema, or a PostgreSQL whose commit is not"
                            + " durable); the ledger does not start, trying again in {}",
                        PREPARE_RETRY,
                        ready.failure());
                observer.recoveryFailed(ready.failure(), true);
                context.scheduleOnce(PREPARE_RETRY, context.getSelf(), new PrepareAgain());
                return Behaviors.same();
              }
              return stash.unstashAll(new ReservationBatcher(context, settings, clock, observer));
            })
        .onMessage(
            PrepareAgain.class,
            again -> {
              context.pipeToSelf(schema.get(), (done, failure) -> new SchemaReady(failure));
              return Behaviors.same();
            })
        .onAnyMessage(
            message -> {
              stash.stash(message);
              return Behaviors.same();
            })
        .build();
  }

  private ReservationBatcher(
      ActorContext<Object> context, LedgerSettings settings, Clock clock, LedgerObserver observer) {
    super(context);
    JournalWriter writer = JournalWriter.of(context.getSystem().classicSystem());
    this.budget =
        Behaviors.supervise(GlobalBudget.create(settings, clock, observer, writer))
            .onFailure(
                SupervisorStrategy.restartWithBackoff(
                    Duration.ofMillis(200), Duration.ofSeconds(10), 0.2));
    this.maxBatch = settings.maxBatch();
    this.maxQueued = settings.maxQueuedCommands();
    this.observer = observer;
    this.writeTimeout = settings.askTimeout();
    var config = context.getSystem().settings().config();
    this.fencedPause =
        config.hasPath(FENCED_PAUSE_KEY)
            ? config.getDuration(FENCED_PAUSE_KEY)
            : Duration.ofSeconds(2);
    this.fence = writer.fence();
    this.closeLinger = JournalDurability.closeLinger(config);
    ActorRef<Object> self = context.getSelf();
    this.fenceListener = why -> self.tell(new Fenced(why));
    fence.onClosed(fenceListener);
    fence.reopen(); // this ledger recovers from the journal before it writes anything
    spawnBudget();
  }

  /**
   * A new GlobalBudget (it recovers from the journal first); each under its own name, so a stopping
   * one never clashes.
   */
  private void spawnBudget() {
    String name = incarnation == 0 ? "global-budget" : "global-budget-" + incarnation;
    incarnation++;
    this.ledger = getContext().spawn(budget, name);
    getContext().watchWith(ledger, new BudgetStopped());
  }

  @Override
  public Receive<Object> createReceive() {
    return newReceiveBuilder()
        .onMessage(Batchable.class, this::onBatchable)
        .onMessage(LedgerProtocol.NodeBatch.class, this::onNodeBatch)
        .onMessage(WriteDone.class, this::onWriteDone)
        // Before the pass-through: HandOver is a command too, but it is this actor's, not
        // GlobalBudget's.
        .onMessage(LedgerProtocol.HandOver.class, this::onHandOver)
        .onMessage(GlobalBudget.Command.class, this::onPassThrough)
        .onMessage(Fenced.class, this::onFenced)
        .onMessage(BudgetStopped.class, stopped -> this)
        .onMessage(Recover.class, this::onRecover)
        .onMessage(LingerOver.class, this::onLingerOver)
        .onSignal(
            PostStop.class,
            stop -> {
              fence.removeListener(fenceListener);
              return this;
            })
        .build();
  }

  /**
   * Another ledger is ahead in the journal: this one's state is stale. Its GlobalBudget is stopped
   * at once (nothing it decides may be written or answered), everyone waiting is answered busy
   * (nothing was written for them: the fenced write failed as a whole), and after {@code
   * ledger.journal.fenced-pause} a new GlobalBudget recovers from the journal, the other writer's
   * events included. The pause keeps two live ledgers from taking turns at full speed; in a cluster
   * the stale one's node is normally downed within it.
   */
  private Behavior<Object> onFenced(Fenced signal) {
    if (fenced) {
      return this;
    }
    fenced = true;
    int waiting = inFlight.size() + queued.size();
    getContext()
        .getLog()
        .error(
            "ledger fenced: {}; stopped, {} waiting commands answered busy, recovering from the"
                + " journal again in {}",
            signal.why(),
            waiting,
            fencedPause);
    getContext().stop(ledger);
    inFlight.forEach(this::answerUnavailable);
    inFlight = List.of();
    queued.forEach(this::answerUnavailable);
    queued.clear();
    queuedOthers = 0;
    writing = false;
    batchNo++; // whatever confirmation the fenced batch still gets is stale
    getContext().scheduleOnce(fencedPause, getContext().getSelf(), new Recover());
    return this;
  }

  private Behavior<Object> onRecover(Recover recover) {
    getContext().getLog().info("ledger recovering from the journal after being fenced");
    fence.reopen();
    fenced = false;
    spawnBudget();
    return this;
  }

  /**
   * Nothing was decided or written for {@code command}: its caller may send it again after the
   * pause.
   */
  private void answerUnavailable(Batchable command) {
    int seconds = (int) Math.max(1, (fencedPause.toMillis() + 999) / 1000);
    GlobalBudget.send(command, new LedgerProtocol.Busy(Decider.busy(command).id(), seconds));
  }

  /**
   * The singleton moves to another node: finish the write in progress (its callers are answered as
   * usual), answer everything still queued busy, then stop. Commands arriving meanwhile are
   * answered busy too; the next ledger recovers everything written here from the journal.
   */
  private Behavior<Object> onHandOver(LedgerProtocol.HandOver handOver) {
    handingOver = true;
    getContext()
        .getLog()
        .info(
            "ledger handing over: {} queued commands answered busy{}",
            queued.size(),
            writing ? ", stopping once the batch being written is confirmed" : "");
    queued.forEach(this::answerUnavailable);
    queued.clear();
    queuedOthers = 0;
    return writing ? this : Behaviors.stopped();
  }

  private Behavior<Object> onBatchable(Batchable command) {
    if (fenced || handingOver) {
      answerUnavailable(command);
      return this;
    }
    if (queued.size() >= maxQueued) {
      shed(command);
      return this;
    }
    queued.add(command);
    if (!GlobalBudget.isGatewayClose(command)) {
      queuedOthers++;
    }
    if (!writing) {
      sendOrLinger();
    }
    return this;
  }

  /**
   * The slot is free and something waits: send it, unless it is only the gateway's own closes,
   * which linger for company first. Also when the slot frees up: a provider call's close is sent as
   * its reservation's answer leaves, so it often reaches this actor just before the write's
   * confirmation does, and the caller's next reservation is a moment behind it.
   */
  private void sendOrLinger() {
    if (queuedOthers == 0 && !closeLinger.isZero()) {
      lingerForCompany();
    } else {
      sendBatch();
    }
  }

  /**
   * Only the gateway's own closes wait and the slot is free: they wait up to {@link #closeLinger}
   * for a command to ride with, so the next call's reservation is written together with them
   * instead of behind them. Why: a provider call's close is sent just before its answer reaches the
   * caller, and that caller's next call arrives a fraction of a millisecond later; written alone,
   * the close holds the write slot (on PostgreSQL for a whole durable commit) while the reservation
   * waits. Nobody waits for a close's answer, so the wait costs no caller anything.
   */
  private void lingerForCompany() {
    if (lingering == 0) {
      lingering = ++lingers;
      getContext().scheduleOnce(closeLinger, getContext().getSelf(), new LingerOver(lingering));
    }
  }

  private Behavior<Object> onLingerOver(LingerOver over) {
    if (over.generation() == lingering) {
      lingering = 0;
      if (!writing && !queued.isEmpty() && !fenced && !handingOver) {
        sendBatch();
      }
    }
    return this;
  }

  /**
   * Another node's commands, sent as one message: each is queued here as if it had come alone
   * (through this actor's own mailbox, so fencing, hand-over, shedding and deadlines treat it like
   * any other), and once all are answered the answers go back as one message. A command not
   * answered within {@code ledger.ask-timeout} is left out; its caller's own ask times out.
   */
  private Behavior<Object> onNodeBatch(LedgerProtocol.NodeBatch nodeBatch) {
    List<CompletableFuture<LedgerSerializable>> answers =
        new ArrayList<>(nodeBatch.commands().size());
    for (Batchable command : nodeBatch.commands()) {
      answers.add(askSelf(command).toCompletableFuture());
    }
    CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new))
        .whenComplete(
            (all, someTimedOut) -> {
              List<LedgerProtocol.NodeAnswer> replies = new ArrayList<>(answers.size());
              for (int i = 0; i < answers.size(); i++) {
                CompletableFuture<LedgerSerializable> answer = answers.get(i);
                if (!answer.isCompletedExceptionally()) {
                  replies.add(new LedgerProtocol.NodeAnswer(i, answer.join()));
                }
              }
              nodeBatch.replyTo().tell(new LedgerProtocol.NodeAnswers(nodeBatch.batch(), replies));
            });
    return this;
  }

  private CompletionStage<LedgerSerializable> askSelf(Batchable command) {
    return AskPattern.<Object, LedgerSerializable>ask(
        getContext().getSelf(),
        command::answeredTo,
        writeTimeout,
        getContext().getSystem().scheduler());
  }

  private Behavior<Object> onWriteDone(WriteDone done) {
    if (done.batchNo() != batchNo) {
      return this; // a batch from before a fence, already answered busy
    }
    if (done.failure() != null) {
      getContext()
          .getLog()
          .warn(
              "ledger batch of {} commands got no write confirmation: {}",
              done.commands(),
              done.failure().toString());
    }
    if (getContext().getLog().isDebugEnabled()) {
      getContext()
          .getLog()
          .debug(
              "batch of {} commands written in {} us, {} queued",
              done.commands(),
              (System.nanoTime() - done.startedNanos()) / 1000,
              queued.size());
    }
    writing = false;
    inFlight = List.of();
    if (handingOver) {
      return Behaviors.stopped();
    }
    if (fenced) {
      return this; // its answer (if any) came from the fence
    }
    if (!queued.isEmpty()) {
      sendOrLinger();
    }
    return this;
  }

  /**
   * Answers busy at once; metrics must never break the ledger, so the observer's failure is
   * dropped.
   */
  private void shed(Batchable command) {
    GlobalBudget.send(command, Decider.busy(command));
    try {
      observer.shed(1);
    } catch (RuntimeException e) {
      getContext().getLog().warn("ledger observer failed: {}", e.toString());
    }
  }

  /**
   * While fenced, queries and operator commands go to the stopped ledger's dead letters: their asks
   * time out (503).
   */
  private Behavior<Object> onPassThrough(GlobalBudget.Command command) {
    if (lingering != 0 && !writing && !fenced && !handingOver) {
      sendBatch(); // a query must not overtake a lingering close it may be asked about
    }
    ledger.tell(command);
    return this;
  }

  private void sendBatch() {
    lingering = 0; // whatever lingered goes now
    List<Batchable> batch = new ArrayList<>(Math.min(queued.size(), maxBatch));
    while (!queued.isEmpty() && batch.size() < maxBatch) {
      Batchable next = queued.poll();
      if (!GlobalBudget.isGatewayClose(next)) {
        queuedOthers--;
      }
      batch.add(next);
    }
    writing = true;
    inFlight = batch;
    long thisBatch = ++batchNo;
    long started = System.nanoTime();
    getContext()
        .ask(
            BatchWritten.class,
            ledger,
            writeTimeout,
            replyTo -> new Batch(List.copyOf(batch), replyTo),
            (written, failure) -> new WriteDone(thisBatch, batch.size(), started, failure));
  }
}
