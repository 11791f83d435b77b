package dev.spendgateway.ledger;

import dev.spendgateway.ledger.LedgerProtocol.CloseReply;
import dev.spendgateway.ledger.LedgerProtocol.ReservationReply;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import dev.spendgateway.ledger.Reservation.Owner;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.Done;
import org.apache.pekko.actor.ActorRefProvider;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Scheduler;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import scala.concurrent.ExecutionContext;

/**
 * Ask-based Java facade over the ledger ref, for the edge and the gateway (a ledger in this process
 * answers to an {@link AnswerRef} instead of Pekko's per-ask temporary actor; see {@link
 * #answeredDirectly}). Every call completes with the ledger's answer (given only after the event is
 * durable) or fails with a {@code TimeoutException} after the ask timeout ({@code
 * ledger.ask-timeout}). Every write command carries that instant as its deadline: the ledger drops
 * a command it reaches later, so a call answered 503 is not booked afterwards. A reserve, settle or
 * void may also complete at once with {@link LedgerProtocol.Busy} when the ledger's queue is full
 * (map it to 503 {@code ledger_busy} with {@code retry-after}).
 *
 * <p>The returned stages are plain {@link CompletableFuture}s completed on {@code executor} (the
 * actor system's dispatcher). Pekko's own ask stage runs every dependent stage asynchronously on
 * {@code ForkJoinPool.commonPool()}, which on a 2-core machine has parallelism 1 and so makes the
 * JDK start a new thread per callback; completing on the dispatcher avoids that and keeps caller
 * code off the ledger's thread.
 *
 * <p>One exception: for a client {@link #answeredInPlace}, answers given inside {@link
 * #answeringInline} (a cluster node's batcher hands out a remote ledger's answers that way) go on
 * in the answering thread. That thread is not the ledger's, and a hand-off to another thread per
 * answer was a measurable share of a node's CPU when several nodes share the cores.
 *
 * <p>A client acts for one {@link Owner}: its reservations are recorded as that owner's, and it can
 * settle or void only those. {@link #of} gives the gateway's own client; the ledger API narrows it
 * with {@link #actingAs}.
 */
public final class LedgerClient {
  private final ActorRef<GlobalBudget.Command> ledger;
  private final Scheduler scheduler;
  private final Executor executor;
  private final Duration askTimeout;
  private final Owner owner;
  private final Clock clock;

  /** Whether answers given inside {@link #answeringInline} go on in the answering thread. */
  private final boolean inPlace;

  /**
   * Set: each ask's reply goes to an {@link AnswerRef} made by this provider, straight to the
   * caller's stage; null: Pekko's ask (a temporary actor per ask), which a reply from another
   * process can find.
   */
  private final ActorRefProvider answerRefs;

  /** Where an ask's timeout fails it: the executor, as an answer would complete. */
  private final ExecutionContext timeouts;

  /**
   * The gateway's client: it reserves, settles and voids as {@link Owner#GATEWAY}; deadlines on the
   * system clock.
   */
  public LedgerClient(
      ActorRef<GlobalBudget.Command> ledger,
      Scheduler scheduler,
      Executor executor,
      Duration askTimeout) {
    this(ledger, scheduler, executor, askTimeout, Owner.GATEWAY, Clock.systemUTC(), false, null);
  }

  /**
   * @param executor where answers complete, normally {@code system.executionContext()}
   * @param clock the ledger's clock: every write command carries the instant its ask times out on
   *     it as its deadline, and the ledger drops a command it reaches only after that instant
   */
  private LedgerClient(
      ActorRef<GlobalBudget.Command> ledger,
      Scheduler scheduler,
      Executor executor,
      Duration askTimeout,
      Owner owner,
      Clock clock,
      boolean inPlace,
      ActorRefProvider answerRefs) {
    this.ledger = ledger;
    this.scheduler = scheduler;
    this.executor = executor;
    this.askTimeout = askTimeout;
    this.owner = owner;
    this.clock = clock;
    this.inPlace = inPlace;
    this.answerRefs = answerRefs;
    this.timeouts = ExecutionContext.fromExecutor(executor);
  }

  /** The same ledger, reserving, settling and voiding as {@code owner}. */
  public LedgerClient actingAs(Owner owner) {
    return new LedgerClient(
        ledger, scheduler, executor, askTimeout, owner, clock, inPlace, answerRefs);
  }

  /**
   * The same client, for callers whose code after an answer is cheap (map the reply to a response):
   * answers handed out inside {@link #answeringInline} go on in the answering thread. Not for
   * callers that start more work on an answer (a provider call after its reserve): that work would
   * hold up the answering actor's next message.
   */
  public LedgerClient answeredInPlace() {
    return new LedgerClient(
        ledger, scheduler, executor, askTimeout, owner, clock, true, answerRefs);
  }

  /**
   * The same client, its replies sent straight to the caller's stage ({@link AnswerRef}) instead of
   * through a temporary actor per ask: one hand-off fewer between the ledger and the caller. Only
   * for a ledger in this process: such a reply target cannot be found from another one.
   */
  public LedgerClient answeredDirectly(ActorSystem<?> system) {
    return new LedgerClient(
        ledger,
        scheduler,
        executor,
        askTimeout,
        owner,
        clock,
        inPlace,
        ((org.apache.pekko.actor.ExtendedActorSystem) system.classicSystem()).provider());
  }

  /** Whose reservations this client makes and may close. */
  public Owner owner() {
    return owner;
  }

  /** The gateway's client of a ledger running on the system clock. */
  public static LedgerClient of(
      ActorSystem<?> system, ActorRef<GlobalBudget.Command> ledger, LedgerSettings settings) {
    return of(system, ledger, settings, Clock.systemUTC());
  }

  /**
   * The gateway's client of a ledger running on {@code clock} (the one given to {@link
   * Ledger#spawn}). Outside cluster mode the ledger runs in this process, so replies go straight to
   * the caller ({@link #answeredDirectly}); a cluster node keeps Pekko's ask, whose reply target a
   * ledger on another node can reach.
   */
  public static LedgerClient of(
      ActorSystem<?> system,
      ActorRef<GlobalBudget.Command> ledger,
      LedgerSettings settings,
      Clock clock) {
    LedgerClient client =
        new LedgerClient(
            ledger,
            system.scheduler(),
            system.executionContext(),
            settings.askTimeout(),
            Owner.GATEWAY,
            clock,
            false,
            null);
    return dev.spendgateway.ledger.cluster.ClusterMode.isClusterNode(system.settings().config())
        ? client
        : client.answeredDirectly(system);
  }

  /** When a command sent now stops being worth deciding: when its ask times out. */
  private Instant deadline() {
    return clock.instant().plus(askTimeout);
  }

  public CompletionStage<ReserveReply> reserve(ReserveRequest r) {
    return ask(
        replyTo ->
            new GlobalBudget.Reserve(
                r.id(),
                r.lane(),
                r.subject(),
                r.amountMicros(),
                r.brandDailyMicros(),
                r.brandMonthlyMicros(),
                owner,
                deadline(),
                r.tag(),
                r.model(),
                r.provider(),
                replyTo));
  }

  /**
   * Reserves for a media job of {@code account} unless it has {@code maxConcurrentJobs} unfinished
   * ones; the reservation lives for {@code lifetime}.
   */
  public CompletionStage<LedgerProtocol.MediaReserveReply> reserveMediaJob(
      ReserveRequest r,
      String account,
      String idempotencyKey,
      int maxConcurrentJobs,
      Duration lifetime) {
    return ask(
        replyTo ->
            new GlobalBudget.ReserveMediaJob(
                new GlobalBudget.Reserve(
                    r.id(),
                    r.lane(),
                    r.subject(),
                    r.amountMicros(),
                    r.brandDailyMicros(),
                    r.brandMonthlyMicros(),
                    owner,
                    deadline(),
                    r.tag(),
                    r.model(),
                    r.provider(),
                    null),
                account,
                idempotencyKey,
                maxConcurrentJobs,
                lifetime,
                replyTo));
  }

  /** Records the provider's job id on the media reservation {@code id}. */
  public CompletionStage<LedgerProtocol.MediaJobRecorded> recordMediaJob(String id, String jobId) {
    return ask(replyTo -> new GlobalBudget.RecordMediaJob(id, jobId, replyTo));
  }

  /** Every open media job, soonest to expire first. */
  public CompletionStage<LedgerProtocol.OpenMediaJobs> openMediaJobs() {
    return ask(GlobalBudget.GetOpenMediaJobs::new);
  }

  public CompletionStage<CloseReply> settle(String id, long actualMicros) {
    return ask(replyTo -> new GlobalBudget.Settle(id, actualMicros, owner, deadline(), replyTo));
  }

  /** The provider did not bill: close at zero. */
  public CompletionStage<CloseReply> voidReservation(String id) {
    return ask(replyTo -> new GlobalBudget.VoidReservation(id, owner, deadline(), replyTo));
  }

  /** Operator's settle: journaled with {@code operator} and {@code reason}. */
  public CompletionStage<CloseReply> operatorSettle(
      String id, long actualMicros, String operator, String reason) {
    return ask(
        replyTo ->
            new GlobalBudget.OperatorSettle(
                id, actualMicros, operator, reason, deadline(), replyTo));
  }

  /** Operator's void: journaled with {@code operator} and {@code reason}. */
  public CompletionStage<CloseReply> operatorVoid(String id, String operator, String reason) {
    return ask(replyTo -> new GlobalBudget.OperatorVoid(id, operator, reason, deadline(), replyTo));
  }

  /**
   * Operator's correction of settled spend ({@code deltaMicros} negative = credit) on the caps of
   * the lane that {@code scope} names, in the windows containing {@code window} (a UTC day or
   * month), journaled as {@code SpendAdjusted} with who and why. Idempotent by {@code
   * adjustmentId}: a repeat answers the first {@code Adjusted}; the id reused for a different
   * adjustment answers {@code Conflict}.
   */
  public CompletionStage<LedgerProtocol.AdjustReply> adjust(
      String adjustmentId,
      String operator,
      String reason,
      dev.spendgateway.policy.access.Lane lane,
      String subject,
      long deltaMicros,
      String window,
      AdjustmentScope scope) {
    return ask(
        replyTo ->
            new GlobalBudget.Adjust(
                adjustmentId,
                operator,
                reason,
                lane,
                subject,
                deltaMicros,
                window,
                scope,
                deadline(),
                replyTo));
  }

  public CompletionStage<ReservationReply> get(String id) {
    return ask(replyTo -> new GlobalBudget.GetReservation(id, replyTo));
  }

  /**
   * @param subject a brand or preview id to narrow the per-subject caps to
   */
  public CompletionStage<Usage> usage(Optional<String> subject) {
    return ask(replyTo -> new GlobalBudget.GetUsage(subject, replyTo));
  }

  /** As above; without a subject, at most {@code topSubjects} brands' or preview ids' caps. */
  public CompletionStage<Usage> usage(Optional<String> subject, int topSubjects) {
    return ask(replyTo -> new GlobalBudget.GetUsage(subject, topSubjects, replyTo));
  }

  /**
   * Completes once the ledger has created its schema and recovered from the journal (asks again
   * after each ask timeout, so a long recovery is waited out). {@code /readyz} depends on it.
   */
  public CompletionStage<Done> awaitReady() {
    CompletionStage<GlobalBudget.Ready> ready = ask(GlobalBudget.AwaitReady::new);
    return ready
        .handle((r, failure) -> failure == null)
        .thenCompose(
            ok -> ok ? CompletableFuture.completedFuture(Done.getInstance()) : awaitReady());
  }

  /** Whether this thread is inside {@link #answeringInline}. */
  private static final ThreadLocal<boolean[]> INLINE =
      ThreadLocal.withInitial(() -> new boolean[1]);

  /**
   * Runs {@code answering}, in which replies to this class's asks go on in this thread (their
   * callers' code runs before it returns) instead of on the executor. For an actor that is not the
   * ledger and whose handling of one message answers many callers, such as a cluster node's
   * batcher: its own next message waits for them, so they must stay cheap (the edge's are: map the
   * reply to a response).
   */
  public static void answeringInline(Runnable answering) {
    boolean[] inline = INLINE.get();
    boolean was = inline[0];
    inline[0] = true;
    try {
      answering.run();
    } finally {
      inline[0] = was;
    }
  }

  /** The executor, except inside {@link #answeringInline} for a client {@link #answeredInPlace}. */
  private void continueAnswer(Runnable continuation) {
    if (inPlace && INLINE.get()[0]) {
      continuation.run();
    } else {
      executor.execute(continuation);
    }
  }

  private <R> CompletionStage<R> ask(
      org.apache.pekko.japi.function.Function<ActorRef<R>, GlobalBudget.Command> message) {
    CompletableFuture<R> answer = new CompletableFuture<>();
    if (answerRefs != null) {
      askDirectly(message, answer);
      return answer;
    }
    AskPattern.ask(ledger, message, askTimeout, scheduler)
        .whenCompleteAsync(
            (reply, failure) -> {
              if (failure == null) {
                answer.complete(reply);
              } else {
                answer.completeExceptionally(failure);
              }
            },
            this::continueAnswer);
    return answer;
  }

  /**
   * The ask without a temporary actor: the reply goes to an {@link AnswerRef} that completes {@code
   * answer} on the executor (or in place, as above); a timer fails it after the ask timeout, as
   * Pekko's ask would.
   */
  @SuppressWarnings("unchecked")
  private <R> void askDirectly(
      org.apache.pekko.japi.function.Function<ActorRef<R>, GlobalBudget.Command> message,
      CompletableFuture<R> answer) {
    AnswerRef target =
        new AnswerRef(answerRefs, reply -> continueAnswer(() -> answer.complete((R) reply)));
    GlobalBudget.Command command;
    try {
      command = message.apply(Adapter.toTyped(target));
    } catch (Exception e) {
      answer.completeExceptionally(e);
      return;
    }
    Cancellable timeout =
        scheduler.scheduleOnce(
            askTimeout,
            () ->
                answer.completeExceptionally(
                    new TimeoutException(
                        "the ledger did not answer within " + askTimeout.toMillis() + " ms")),
            timeouts);
    answer.whenComplete((reply, failure) -> timeout.cancel());
    ledger.tell(command);
  }
}
