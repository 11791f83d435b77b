package dev.spendgateway.ledger;

import dev.spendgateway.ledger.LedgerProtocol.CloseReply;
import dev.spendgateway.ledger.LedgerProtocol.ReservationReply;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import dev.spendgateway.ledger.Reservation.Owner;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Scheduler;
import org.apache.pekko.actor.typed.javadsl.AskPattern;

/**
 * Ask-based Java facade over the ledger ref, for the edge and the gateway. Every call completes
 * with the ledger's answer (given only after the event is durable) or fails with a
 * {@code TimeoutException} after the ask timeout ({@code ledger.ask-timeout}).
 *
 * <p>The returned stages are plain {@link CompletableFuture}s completed on {@code executor} (the
 * actor system's dispatcher). Pekko's own ask stage runs every dependent stage asynchronously on
 * {@code ForkJoinPool.commonPool()}, which on a 2-core machine has parallelism 1 and so makes the
 * JDK start a new thread per callback; completing on the dispatcher avoids that and keeps caller
 * code off the ledger's thread.
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

  /** The gateway's client: it reserves, settles and voids as {@link Owner#GATEWAY}. */
  public LedgerClient(ActorRef<GlobalBudget.Command> ledger, Scheduler scheduler, Executor executor, Duration askTimeout) {
    this(ledger, scheduler, executor, askTimeout, Owner.GATEWAY);
  }

  /** @param executor where answers complete, normally {@code system.executionContext()} */
  private LedgerClient(
      ActorRef<GlobalBudget.Command> ledger, Scheduler scheduler, Executor executor, Duration askTimeout, Owner owner) {
    this.ledger = ledger;
    this.scheduler = scheduler;
    this.executor = executor;
    this.askTimeout = askTimeout;
    this.owner = owner;
  }

  /** The same ledger, reserving, settling and voiding as {@code owner}. */
  public LedgerClient actingAs(Owner owner) {
    return new LedgerClient(ledger, scheduler, executor, askTimeout, owner);
  }

  /** Whose reservations this client makes and may close. */
  public Owner owner() {
    return owner;
  }

  public static LedgerClient of(ActorSystem<?> system, ActorRef<GlobalBudget.Command> ledger, LedgerSettings settings) {
    return new LedgerClient(ledger, system.scheduler(), system.executionContext(), settings.askTimeout());
  }

  public CompletionStage<ReserveReply> reserve(ReserveRequest r) {
    return ask(replyTo -> new GlobalBudget.Reserve(r.id(), r.lane(), r.subject(), r.amountMicros(),
        r.brandDailyMicros(), r.brandMonthlyMicros(), owner, replyTo));
  }

  public CompletionStage<CloseReply> settle(String id, long actualMicros) {
    return ask(replyTo -> new GlobalBudget.Settle(id, actualMicros, owner, replyTo));
  }

  /** The provider did not bill: close at zero. */
  public CompletionStage<CloseReply> voidReservation(String id) {
    return ask(replyTo -> new GlobalBudget.VoidReservation(id, owner, replyTo));
  }

  /** Operator's settle: journaled with {@code operator} and {@code reason}. */
  public CompletionStage<CloseReply> operatorSettle(String id, long actualMicros, String operator, String reason) {
    return ask(replyTo -> new GlobalBudget.OperatorSettle(id, actualMicros, operator, reason, replyTo));
  }

  /** Operator's void: journaled with {@code operator} and {@code reason}. */
  public CompletionStage<CloseReply> operatorVoid(String id, String operator, String reason) {
    return ask(replyTo -> new GlobalBudget.OperatorVoid(id, operator, reason, replyTo));
  }

  /**
   * Operator's correction of settled spend ({@code deltaMicros} negative = credit) on the caps of
   * the lane that {@code scope} names, in the windows containing {@code window} (a UTC day or
   * month), journaled as {@code SpendAdjusted} with who and why. Idempotent by {@code
   * adjustmentId}: a repeat answers the first {@code Adjusted}; the id reused for a different
   * adjustment answers {@code Conflict}.
   */
  public CompletionStage<LedgerProtocol.AdjustReply> adjust(
      String adjustmentId, String operator, String reason, dev.spendgateway.policy.access.Lane lane, String subject,
      long deltaMicros, String window, AdjustmentScope scope) {
    return ask(replyTo -> new GlobalBudget.Adjust(adjustmentId, operator, reason, lane, subject, deltaMicros, window,
        scope, replyTo));
  }

  public CompletionStage<ReservationReply> get(String id) {
    return ask(replyTo -> new GlobalBudget.GetReservation(id, replyTo));
  }

  /** @param subject a brand or preview id to narrow the per-subject caps to */
  public CompletionStage<Usage> usage(Optional<String> subject) {
    return ask(replyTo -> new GlobalBudget.GetUsage(subject, replyTo));
  }

  /**
   * Completes once the ledger has created its schema and recovered from the journal (asks again
   * after each ask timeout, so a long recovery is waited out). {@code /readyz} depends on it.
   */
  public CompletionStage<Done> awaitReady() {
    CompletionStage<GlobalBudget.Ready> ready = ask(GlobalBudget.AwaitReady::new);
    return ready.handle((r, failure) -> failure == null)
        .thenCompose(ok -> ok ? CompletableFuture.completedFuture(Done.getInstance()) : awaitReady());
  }

  private <R> CompletionStage<R> ask(org.apache.pekko.japi.function.Function<ActorRef<R>, GlobalBudget.Command> message) {
    CompletableFuture<R> answer = new CompletableFuture<>();
    AskPattern.ask(ledger, message, askTimeout, scheduler).whenCompleteAsync((reply, failure) -> {
      if (failure == null) {
        answer.complete(reply);
      } else {
        answer.completeExceptionally(failure);
      }
    }, executor);
    return answer;
  }
}
