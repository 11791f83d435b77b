package dev.spendgateway.ledger;

import dev.spendgateway.ledger.Decider.BatchDecision;
import dev.spendgateway.ledger.Decider.Decided;
import dev.spendgateway.ledger.Decider.Decision;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.journal.JournalDurability;
import dev.spendgateway.ledger.journal.JournalWriter;
import dev.spendgateway.policy.money.Micros;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.RecoveryCompleted;
import org.apache.pekko.persistence.typed.RecoveryFailed;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReply;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehaviorWithEnforcedReplies;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;
import org.apache.pekko.persistence.typed.javadsl.SignalHandler;

/**
 * The single writer of the spend ledger: every reserve, refusal, settle, void, expiry and operator
 * adjustment is an event in the journal, and the state ({@link LedgerState}) is a fold of those
 * events.
 *
 * <p>This class is only the Pekko wiring. What to do with a command is decided by the pure {@link
 * Decider}; this actor reads the clock, persists the decided events and, once they are durable,
 * sends the decided reply. Reserve, settle and void normally arrive as a {@link Batch} from the
 * {@link ReservationBatcher}: each command is decided in order against the state left by the ones
 * before it, all resulting events are persisted in one journal write (one row, see {@link
 * GroupCommit}), and only then is every caller answered (group commit).
 *
 * <p>It implements {@link LedgerProtocol} and {@link LedgerEvents} so that the names callers use
 * ({@code GlobalBudget.Reserve}, {@code GlobalBudget.ReservationMade}, ...) keep resolving.
 */
public final class GlobalBudget
    extends EventSourcedBehaviorWithEnforcedReplies<
        LedgerProtocol.Command, LedgerEvents.Event, LedgerState>
    implements LedgerProtocol, LedgerEvents {

  public static final PersistenceId PERSISTENCE_ID = PersistenceId.ofUniqueId("global");

  private static final String FLUSH_CLOSES_TIMER = "flush-closes";

  /** Longest id the ledger accepts (the edge answers 400 above it). */
  public static final int MAX_ID_LENGTH = CommandValidation.MAX_ID_LENGTH;

  /** Longest operator adjustment id the ledger accepts (the admin API answers 400 above it). */
  public static final int MAX_ADJUSTMENT_ID_LENGTH = CommandValidation.MAX_ADJUSTMENT_ID_LENGTH;

  private final ActorContext<Command> context;
  private final TimerScheduler<Command> timers;
  private final LedgerSettings settings;
  private final Decider decider;
  private final Clock clock;
  private final LedgerObserver observer;
  private final long startedNanos = System.nanoTime();
  private final JournalWriter writer;
  private final SnapshotPolicy snapshots;
  private final ActorRef<Object> snapshotWriter;

  /** {@link LedgerState#factsSinceLoad} at the last snapshot this actor took (0: none yet). */
  private long factsAtLastSnapshot;

  /**
   * Completes once the flush covering the latest write has finished. Every answer waits for it:
   * with {@code ledger.journal.pipeline} a confirmed write may not be on disk yet, and an answer
   * drawn from a state holding it (even one that wrote nothing, e.g. a repeated reserve) must not
   * go out before it is. Completed at once when writes are confirmed only after their flush.
   */
  private CompletionStage<Void> latestWriteFlushed = CompletableFuture.completedFuture(null);

  /**
   * A write holding only the gateway's own closes was confirmed at its commit, after the last flush
   * anybody asked for: the next write covers it (its flush starts after its commit), the next
   * answer that waits for a flush without writing asks for one ({@link #whenFlushed}), and if
   * nobody does within {@link #closeFlushDelay} the timer does ({@link FlushCloses}).
   */
  private boolean closesAwaitFlush;

  /**
   * The row being persisted, the state it was decided on and the state after it: the event handler
   * takes the state the decider already folded instead of folding the row a second time. Any other
   * event (recovery, expiry, compaction, operator commands) is folded as usual.
   */
  private record DecidedRow(Event row, LedgerState from, LedgerState after) {}

  private DecidedRow decidedRow;

  private final Duration closeFlushDelay;

  /**
   * The ledger behavior with its expiry and compaction timers. Restarts with backoff when a journal
   * write fails (the callers of that write get no answer: their asks time out, nothing was acked).
   */
  public static Behavior<Command> create(LedgerSettings settings, Clock clock) {
    return create(settings, clock, LedgerObserver.NONE);
  }

  /**
   * As {@link #create(LedgerSettings, Clock)}, telling {@code observer} about every durable write.
   */
  public static Behavior<Command> create(
      LedgerSettings settings, Clock clock, LedgerObserver observer) {
    return Behaviors.setup(
        context ->
            create(
                settings, clock, observer, JournalWriter.of(context.getSystem().classicSystem())));
  }

  /**
   * As {@link #create(LedgerSettings, Clock, LedgerObserver)}, writing through {@code writer}: the
   * journal's commit, flush, fence and stats ({@link JournalWriter#of} for the system's journal).
   */
  public static Behavior<Command> create(
      LedgerSettings settings, Clock clock, LedgerObserver observer, JournalWriter writer) {
    return Behaviors.setup(
        context ->
            Behaviors.withTimers(
                timers -> {
                  startTimers(timers, settings);
                  return new GlobalBudget(context, timers, settings, clock, observer, writer);
                }));
  }

  private static void startTimers(TimerScheduler<Command> timers, LedgerSettings settings) {
    timers.startTimerWithFixedDelay("expire-due", new ExpireDue(), settings.expiryCheckInterval());
    timers.startTimerWithFixedDelay("compact", new Compact(), settings.compactionInterval());
  }

  private GlobalBudget(
      ActorContext<Command> context,
      TimerScheduler<Command> timers,
      LedgerSettings settings,
      Clock clock,
      LedgerObserver observer,
      JournalWriter writer) {
    super(
        PERSISTENCE_ID,
        SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(5), 0.2));
    this.context = context;
    this.timers = timers;
    this.settings = settings;
    this.decider = new Decider(settings);
    this.clock = clock;
    this.observer = observer;
    this.writer = writer;
    this.closeFlushDelay =
        JournalDurability.closeFlushDelay(context.getSystem().settings().config());
    this.snapshots = new SnapshotPolicy(settings.snapshotEvery());
    this.snapshotWriter = context.spawnAnonymous(SnapshotWriter.create(clock, observer));
  }

  @Override
  public LedgerState emptyState() {
    return LedgerState.empty();
  }

  /**
   * No snapshots by Pekko: they are taken by facts written, not journal rows ({@link
   * SnapshotPolicy}), and written beside the ledger ({@link SnapshotWriter}), which Pekko's own
   * snapshotting cannot do. The snapshot store keeps only the newest ({@code
   * dev.spendgateway.ledger.journal.NewestSnapshotStore}).
   */
  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.disabled();
  }

  @Override
  public SignalHandler<LedgerState> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), this::onRecoveryCompleted)
        // Told so the process can stop after a bounded number of failed recoveries instead of
        // retrying (and logging) forever while answering 503.
        .onSignal(
            RecoveryFailed.class,
            (state, failed) ->
                tellObserver(() -> observer.recoveryFailed(failed.getFailure(), true)))
        .build();
  }

  private void onRecoveryCompleted(LedgerState state) {
    // A write announced as needing no flush of its own by an earlier incarnation that failed
    // before its commit: the next write with its sequence number must wait for its flush.
    writer.noWriteWithoutFlush();
    Duration took = Duration.ofNanos(System.nanoTime() - startedNanos);
    context
        .getLog()
        .info(
            "ledger recovered in {} ms: {} reservation ids known, {} open, {} adjustment ids known;"
                + " {} facts replayed after the snapshot it started from",
            took.toMillis(),
            state.knownReservations(),
            state.openReservations(),
            state.knownAdjustments(),
            state.factsSinceLoad());
    tellObserver(
        () -> observer.recovered(took, state.knownReservations(), state.openReservations()));
    // Re-arm expiry at once: reservations that timed out while the ledger was down expire now.
    context.getSelf().tell(new ExpireDue());
    // Journal a change of ledger.window-zone, if there is one, before anything else is decided in
    // the new zone (it only takes effect at the end of the day under way, so what is decided in
    // between counts in the old zone either way).
    context.getSelf().tell(new AdoptWindowZone());
  }

  @Override
  public CommandHandlerWithReply<Command, Event, LedgerState> commandHandler() {
    return newCommandHandlerWithReplyBuilder()
        .forAnyState()
        .onCommand(Batch.class, this::onBatch)
        .onCommand(Reserve.class, (state, cmd) -> onBatch(state, new Batch(List.of(cmd), null)))
        .onCommand(Settle.class, (state, cmd) -> onBatch(state, new Batch(List.of(cmd), null)))
        .onCommand(
            VoidReservation.class, (state, cmd) -> onBatch(state, new Batch(List.of(cmd), null)))
        .onCommand(ExpireDue.class, this::onExpireDue)
        .onCommand(FlushCloses.class, (state, cmd) -> onFlushCloses())
        .onCommand(Flushed.class, (state, cmd) -> onFlushed(cmd))
        .onCommand(Compact.class, this::onCompact)
        .onCommand(AdoptWindowZone.class, this::onAdoptWindowZone)
        .onCommand(Adjust.class, this::onAdjust)
        .onCommand(
            OperatorSettle.class,
            (state, cmd) ->
                persistThenReply(
                    decider.operatorSettle(state, cmd, clock.instant()), cmd.replyTo()))
        .onCommand(
            OperatorVoid.class,
            (state, cmd) ->
                persistThenReply(decider.operatorVoid(state, cmd, clock.instant()), cmd.replyTo()))
        .onCommand(
            GetUsage.class,
            (state, cmd) ->
                replyWhenFlushed(
                    cmd.replyTo(),
                    state.usage(
                        cmd.subject(), cmd.topSubjects(), clock.instant(), settings.caps())))
        .onCommand(
            GetReservation.class,
            (state, cmd) -> replyWhenFlushed(cmd.replyTo(), Decider.reservation(state, cmd.id())))
        .onCommand(
            ReserveMediaJob.class,
            (state, cmd) ->
                persistThenReply(decider.reserveMedia(state, cmd, clock.instant()), cmd.replyTo()))
        .onCommand(
            RecordMediaJob.class,
            (state, cmd) ->
                persistThenReply(
                    decider.recordMediaJob(state, cmd, clock.instant()), cmd.replyTo()))
        .onCommand(
            GetOpenMediaJobs.class,
            (state, cmd) -> replyWhenFlushed(cmd.replyTo(), Decider.openMediaJobs(state)))
        .onCommand(AwaitReady.class, (state, cmd) -> Effect().reply(cmd.replyTo(), new Ready()))
        .build();
  }

  /**
   * Group commit: the decider decides each command against the state the previous ones left; all
   * events are persisted in one write, as one journal row ({@link GroupCommit}), and every caller
   * is answered after it is durable.
   */
  private ReplyEffect<Event, LedgerState> onBatch(LedgerState state, Batch batch) {
    BatchDecision decided = decider.decideBatch(state, batch.commands(), clock.instant());
    reportDropped(decided.dropped());
    List<Event> events = decided.events();
    BatchWritten written = new BatchWritten(batch.commands().size(), events.size());
    boolean withoutFlush = writer.flushMayWait() && mayGoWithoutFlush(batch, events);
    if (events.isEmpty()) {
      answer(decided.decided());
      return batch.replyTo() == null
          ? Effect().noReply()
          : Effect().reply(batch.replyTo(), written);
    }
    long writeStarted = System.nanoTime();
    // The batcher hears of the write when it is confirmed (with ledger.journal.pipeline at commit,
    // so
    // the next batch is decided and written while this one is flushed); the callers once it is
    // flushed.
    Event row = GroupCommit.of(events);
    decidedRow = new DecidedRow(row, state, decided.after());
    if (withoutFlush) {
      writer.nextWriteWithoutFlush(lastSequenceNumber(context) + 1);
    }
    var effect =
        Effect()
            .persist(row)
            .thenRun(
                newState -> {
                  if (withoutFlush) {
                    writtenWithoutFlush(newState);
                  } else {
                    written(newState);
                  }
                  answer(decided.decided());
                  logOverReserve(events);
                  observePersisted(events, writeStarted);
                });
    return batch.replyTo() == null
        ? effect.thenNoReply()
        : effect.thenReply(batch.replyTo(), s -> written);
  }

  /**
   * Answers a batch's callers: the gateway's own closes at once, everyone else once the batch is
   * flushed.
   *
   * <p>Why a gateway's settle or void need not wait: it only lowers a hold the ledger already
   * answered for (durably), and the gateway does nothing with its answer but log it. Lost in a
   * power cut, the reservation is still held at its worst case and expires at it: the books
   * overstate spend, never understate it. Any answer drawn from a state that includes the close (a
   * reserve that fits only because a close freed room, a usage query) still waits for a flush
   * covering it. A close through the ledger API is answered only after its flush, as before: that
   * caller may act on it.
   */
  private void answer(List<Decided> decided) {
    List<Decided> afterFlush = new java.util.ArrayList<>(decided.size());
    for (Decided d : decided) {
      if (d.decision().isDropped()) {
        continue;
      }
      if (writer.flushMayWait() && isGatewayClose(d.command())) {
        send(d.command(), d.decision().reply());
      } else {
        afterFlush.add(d);
      }
    }
    if (!afterFlush.isEmpty()) {
      whenFlushed(() -> afterFlush.forEach(d -> send(d.command(), d.decision().reply())));
    }
  }

  /** A settle or void the gateway's provider routes sent about their own call. */
  static boolean isGatewayClose(Batchable command) {
    return (command instanceof Settle s && s.closer() == Owner.GATEWAY)
        || (command instanceof VoidReservation v && v.closer() == Owner.GATEWAY);
  }

  /**
   * Whether a batch's write may be confirmed at its commit and flushed with the next write: it
   * holds only the gateway's own settles and voids, none settled above its reservation.
   *
   * <p>Why this is safe. A settle or void only lowers a hold the ledger already answered for
   * durably (the reservation's own write was flushed before it was answered). Its state change is
   * applied at once, so the next decision already sees the room it frees. That would be unsafe only
   * if an answer drawn from that state could reach a caller while the close is not on disk, and
   * none can: the journal is one ordered sequence and a flush forces everything committed before
   * it, so the next reservation's write, committed after the close's, is answered only after a
   * flush that started after its own commit, and that flush covers the close too. A power cut
   * before that flush loses both, and the reservation was never answered. Queries and writes that
   * decide nothing (repeats) ask for a flush first ({@link #whenFlushed}). What a power cut can
   * lose on its own is only the close: its reservation is then still held at its worst case and
   * expires at it, so the books overstate spend, never understate it.
   *
   * <p>That holds only while the close's amount is at most the hold. A settle above its reservation
   * (the provider billed more than the worst case) lost in a cut would leave spend understated by
   * the excess, so such a batch waits for its flush like any other. A close through the ledger API
   * or by an operator always waits: its caller may act on the answer.
   */
  private static boolean mayGoWithoutFlush(Batch batch, List<Event> events) {
    for (Batchable command : batch.commands()) {
      if (!isGatewayClose(command)) {
        return false;
      }
    }
    for (Event e : events) {
      if (e instanceof ReservationSettled s && s.overReserve()) {
        return false;
      }
    }
    return true;
  }

  /** Commands whose callers had given up: counted and logged, never written, never answered. */
  private void reportDropped(int dropped) {
    if (dropped > 0) {
      context
          .getLog()
          .warn(
              "dropped {} ledger commands past their deadline (their callers had given up); "
                  + "nothing was written for them",
              dropped);
      tellObserver(() -> observer.droppedPastDeadline(dropped));
    }
  }

  /** Sends a batched command's reply to its caller (the reply type matches the command's). */
  public static void send(Batchable command, Object reply) {
    if (command instanceof Reserve r) {
      r.replyTo().tell((ReserveReply) reply);
    } else if (command instanceof Settle s) {
      s.replyTo().tell((CloseReply) reply);
    } else if (command instanceof VoidReservation v) {
      v.replyTo().tell((CloseReply) reply);
    }
  }

  /**
   * A provider call's reservation id stays out of the log: the gateway logs the same fact with the
   * call's request id, which is what an operator searches by.
   */
  private void logOverReserve(List<Event> events) {
    for (Event e : events) {
      if (e instanceof ReservationSettled s && s.overReserve()) {
        String id = Owner.impliedBy(s.id()) == Owner.GATEWAY ? "(a provider call)" : s.id();
        context
            .getLog()
            .warn(
                "settled above reserve: id={} lane={} subject={} reservedUsd={} actualUsd={}",
                id,
                s.lane().wireName(),
                s.subject(),
                Micros.toUsd(s.reservedMicros()),
                Micros.toUsd(s.actualMicros()));
      }
    }
  }

  private ReplyEffect<Event, LedgerState> onExpireDue(LedgerState state, ExpireDue cmd) {
    List<Event> expired = decider.expireDue(state, clock.instant());
    if (expired.isEmpty()) {
      return Effect().noReply();
    }
    long writeStarted = System.nanoTime();
    return Effect()
        .persist(GroupCommit.of(expired))
        .thenRun(
            s -> {
              written(s);
              context.getLog().info("expired {} reservations at their worst case", expired.size());
              observePersisted(expired, writeStarted);
            })
        .thenNoReply();
  }

  private ReplyEffect<Event, LedgerState> onCompact(LedgerState state, Compact cmd) {
    Optional<Event> compacted = decider.compact(state, clock.instant());
    if (compacted.isEmpty()) {
      return Effect().noReply();
    }
    long writeStarted = System.nanoTime();
    return Effect()
        .persist(compacted.get())
        .thenRun(
            s -> {
              written(s);
              observePersisted(List.of(compacted.get()), writeStarted);
              // Ids leave the window a slice at a time; the next slice queues behind waiting
              // commands.
              if (decider.moreToCompact(s, clock.instant())) {
                context.getSelf().tell(new Compact());
              }
            })
        .thenNoReply();
  }

  /**
   * Journals the configured window zone when it is not the journal's: one {@link
   * WindowZoneChanged}, taking effect at the end of the day under way in the old zone. The event
   * handler only applies it, so a replay builds the same calendar.
   */
  private ReplyEffect<Event, LedgerState> onAdoptWindowZone(
      LedgerState state, AdoptWindowZone cmd) {
    Optional<Event> changed = decider.adoptWindowZone(state, clock.instant());
    if (changed.isEmpty()) {
      return Effect().noReply();
    }
    WindowZoneChanged e = (WindowZoneChanged) changed.get();
    long writeStarted = System.nanoTime();
    return Effect()
        .persist(e)
        .thenRun(
            s -> {
              written(s);
              context
                  .getLog()
                  .info(
                      "cap windows change zone: {} until {}, then {} (ledger.window-zone); past"
                          + " windows keep their zone",
                      e.previousZone(),
                      e.from(),
                      e.zone());
              observePersisted(List.of(e), writeStarted);
            })
        .thenNoReply();
  }

  private ReplyEffect<Event, LedgerState> onAdjust(LedgerState state, Adjust cmd) {
    Decision<AdjustReply> decision = decider.adjust(state, cmd, clock.instant());
    logAdjustment(cmd, decision);
    return persistThenReply(decision, cmd.replyTo());
  }

  /** Operator and reason are free text: they go to the journal, not into these log lines. */
  private void logAdjustment(Adjust cmd, Decision<AdjustReply> decision) {
    AdjustReply reply = decision.reply();
    if (!decision.events().isEmpty() && reply instanceof Adjusted a) {
      context
          .getLog()
          .info(
              "operator adjustment: id={} lane={} subject={} deltaUsd={}",
              a.adjustmentId(),
              a.lane().wireName(),
              a.subject(),
              Micros.toUsd(a.deltaMicros()));
    } else if (reply instanceof Adjusted a) {
      context
          .getLog()
          .info("operator adjustment repeated: id={}; nothing changed", a.adjustmentId());
    } else if (reply instanceof Conflict) {
      context
          .getLog()
          .info(
              "operator adjustment refused: id={} was already used for a different adjustment",
              cmd.adjustmentId());
    } else if (reply instanceof AdjustRefused refused) {
      context
          .getLog()
          .info(
              "operator adjustment refused: id={} would take {} below zero",
              cmd.adjustmentId(),
              refused.cap().wireName());
    }
  }

  /**
   * Persists a decision's events (if any), then sends its reply; a decision without events answers
   * at once, and a dropped one (its caller had given up) not at all.
   */
  private <R> ReplyEffect<Event, LedgerState> persistThenReply(
      Decision<R> decision, ActorRef<R> replyTo) {
    if (decision.isDropped()) {
      reportDropped(1);
      return Effect().noReply();
    }
    if (decision.events().isEmpty()) {
      return replyWhenFlushed(replyTo, decision.reply());
    }
    long writeStarted = System.nanoTime();
    return Effect()
        .persist(GroupCommit.of(decision.events()))
        .thenRun(
            s -> {
              written(s);
              whenFlushed(() -> replyTo.tell(decision.reply()));
              logOverReserve(decision.events());
              observePersisted(decision.events(), writeStarted);
            })
        .thenNoReply();
  }

  /**
   * A write was confirmed: what is answered from now on waits for the flush that covers it, and a
   * snapshot of {@code newState} is taken if one is due.
   */
  private void written(LedgerState newState) {
    // This write's flush starts after its commit, so it also covers any close written earlier
    // without a flush of its own.
    closesFlushed();
    // Pipelined: a flush that starts now; otherwise the write was confirmed after its flush, and
    // nothing an earlier flush of closes left behind (even a failed one) holds answers back.
    latestWriteFlushed = writer.afterCommit();
    snapshotIfDue(newState);
  }

  /**
   * Hands {@code newState} to the snapshot writer once its row is flushed, if a snapshot is due.
   * The count since the last snapshot starts at the facts the recovery replayed, so a ledger
   * restarted over and over still snapshots on time.
   */
  private void snapshotIfDue(LedgerState newState) {
    long factsSince = newState.factsSinceLoad() - factsAtLastSnapshot;
    if (!snapshots.due(factsSince, newState.knownReservations())) {
      return;
    }
    factsAtLastSnapshot = newState.factsSinceLoad();
    SnapshotWriter.Save save =
        new SnapshotWriter.Save(lastSequenceNumber(context), newState.forSnapshot(), factsSince);
    whenFlushed(() -> snapshotWriter.tell(save));
  }

  /**
   * A write of only the gateway's own closes was confirmed: no flush is started for it; the next
   * one anybody waits for covers it, or the timer's within {@link #closeFlushDelay}.
   */
  private void writtenWithoutFlush(LedgerState newState) {
    writer.committedWithoutFlush();
    if (!closesAwaitFlush) {
      closesAwaitFlush = true;
      timers.startSingleTimer(FLUSH_CLOSES_TIMER, new FlushCloses(), closeFlushDelay);
    }
    snapshotIfDue(newState);
  }

  private ReplyEffect<Event, LedgerState> onFlushCloses() {
    if (closesAwaitFlush) {
      flushCloses();
    }
    return Effect().noReply();
  }

  /** Starts (or joins) a flush covering the closes written without one; answers wait for it. */
  private void flushCloses() {
    closesFlushed();
    latestWriteFlushed = writer.flushCommitted();
  }

  private void closesFlushed() {
    if (closesAwaitFlush) {
      closesAwaitFlush = false;
      timers.cancel(FLUSH_CLOSES_TIMER);
    }
  }

  /**
   * Runs {@code answer} once everything written so far is flushed; never when that flush failed. An
   * answer that must wait runs when the ledger hears of the flush ({@link Flushed}), on its own
   * thread: replies leave from the actor, never from the journal's flush callback.
   */
  private void whenFlushed(Runnable answer) {
    if (closesAwaitFlush) {
      flushCloses(); // the answer may be drawn from a close not flushed yet
    }
    CompletableFuture<Void> flushed = latestWriteFlushed.toCompletableFuture();
    if (flushed.isDone() && !flushed.isCompletedExceptionally()) {
      answer.run();
    } else {
      context.pipeToSelf(flushed, (ok, failure) -> new Flushed(answer, failure));
    }
  }

  private ReplyEffect<Event, LedgerState> onFlushed(Flushed flushed) {
    if (flushed.failure() == null) {
      flushed.answers().run();
    } else {
      // Nobody waiting on this flush is answered (their asks time out, nothing was acknowledged);
      // the rows are committed, so the next flush that succeeds puts them on disk.
      context
          .getLog()
          .warn(
              "ledger journal flush failed; its callers get no answer: {}",
              flushed.failure().toString());
    }
    return Effect().noReply();
  }

  private <R> ReplyEffect<Event, LedgerState> replyWhenFlushed(ActorRef<R> replyTo, R reply) {
    whenFlushed(() -> replyTo.tell(reply));
    return Effect().noReply();
  }

  private void observePersisted(List<Event> events, long writeStartedNanos) {
    Duration took = Duration.ofNanos(System.nanoTime() - writeStartedNanos);
    tellObserver(() -> observer.persisted(events, took));
  }

  /** Metrics must never break the ledger: whatever the observer throws is logged and dropped. */
  private void tellObserver(Runnable call) {
    try {
      call.run();
    } catch (RuntimeException e) {
      context.getLog().warn("ledger observer failed: {}", e.toString());
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Event handler: apply facts only (the same fold the decider uses within a batch; a group
  // commit row applies its facts in order)
  // ---------------------------------------------------------------------------------------------

  @Override
  public EventHandler<LedgerState, Event> eventHandler() {
    return newEventHandlerBuilder().forAnyState().onAnyEvent(this::applied);
  }

  /** The fold, once: a row this writer has just decided is applied as the decider folded it. */
  private LedgerState applied(LedgerState state, Event event) {
    DecidedRow decided = decidedRow;
    decidedRow = null;
    if (decided != null && decided.row() == event && decided.from() == state) {
      return decided.after();
    }
    return state.applied(event);
  }
}
