package dev.spendgateway.edge.call;

import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.Reservation.Status;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A reservation the gateway holds and must close exactly once: settled at the real cost, voided, or
 * kept at its worst case. The first {@link #close} wins (a compare-and-set); any later one gets the
 * first one's result and changes nothing, so no path closes twice and every path can call it.
 *
 * <p>A close the ledger does not answer (ask timeout, ledger restarting) is asked again with
 * backoff: settle and void are idempotent by reservation id, so a repeat of a close that did get
 * through answers the same. After {@link #MAX_ASKS} unanswered asks it gives up with one warning
 * (metadata only); the ledger then expires the reservation at its worst case — never under-counted.
 */
public final class HeldReservation {
  private static final Logger log = LoggerFactory.getLogger(HeldReservation.class);

  /**
   * Asks per close, the first included. Each waits up to {@code ledger.ask-timeout}; four asks with
   * the backoff below ride out a ledger restart of a few seconds without holding a shutdown long.
   */
  static final int MAX_ASKS = 4;

  /** Wait before the second ask; doubled before each further one (200 ms, 400 ms, 800 ms). */
  static final Duration FIRST_BACKOFF = Duration.ofMillis(200);

  private final String id;
  private final long heldMicros;
  private final String requestId;
  private final LedgerClient ledger;
  private final InFlightCalls inFlight;
  private final AtomicReference<CompletableFuture<LedgerClose>> closing = new AtomicReference<>();

  /**
   * @param id the reservation id (never logged: the request id names the call in every log line)
   * @param heldMicros what the ledger holds for it (the worst case)
   * @param requestId the call's request id, for the give-up warning
   * @param inFlight counts the close until answered, so a shutdown waits for it
   */
  public HeldReservation(
      String id, long heldMicros, String requestId, LedgerClient ledger, InFlightCalls inFlight) {
    this.id = id;
    this.heldMicros = heldMicros;
    this.requestId = requestId;
    this.ledger = ledger;
    this.inFlight = inFlight;
  }

  public long heldMicros() {
    return heldMicros;
  }

  /** Closes as {@code how} says, once; a later call returns the first close's result. */
  public CompletionStage<LedgerClose> close(Settlement.Closing how) {
    CompletableFuture<LedgerClose> mine = new CompletableFuture<>();
    if (!closing.compareAndSet(null, mine)) {
      return closing.get();
    }
    inFlight.track(mine);
    if (how instanceof Settlement.Closing.Void) {
      ask(() -> ledger.voidReservation(id), Status.VOIDED, 0, 1, mine);
    } else {
      long amount = how instanceof Settlement.Closing.AtCost cost ? cost.micros() : heldMicros;
      ask(() -> ledger.settle(id, amount), Status.SETTLED, amount, 1, mine);
    }
    return mine;
  }

  private void ask(
      Supplier<CompletionStage<GlobalBudget.CloseReply>> close,
      Status asked,
      long micros,
      int attempt,
      CompletableFuture<LedgerClose> result) {
    CompletionStage<GlobalBudget.CloseReply> answer;
    try {
      answer = close.get();
    } catch (RuntimeException e) {
      answer = CompletableFuture.failedFuture(e);
    }
    answer.whenComplete(
        (reply, failure) -> {
          // A full ledger queue decided nothing: like an unanswered ask, worth asking again after a
          // wait.
          if (failure == null && reply instanceof GlobalBudget.Busy) {
            failure = new LedgerBusyException();
          }
          if (failure == null) {
            result.complete(LedgerClose.of(reply, asked, micros, heldMicros));
          } else if (attempt < MAX_ASKS) {
            // Only on an unanswered ask (rare): the JDK's delayed executor needs no scheduler
            // handed in.
            Executor later =
                CompletableFuture.delayedExecutor(
                    backoff(attempt).toMillis(), TimeUnit.MILLISECONDS);
            later.execute(() -> ask(close, asked, micros, attempt + 1, result));
          } else {
            String why = causeOf(failure).getClass().getSimpleName();
            log.warn(
                "could not close the reservation of request {} after {} asks ({}); if the ledger holds it, it expires at its worst case",
                requestId,
                MAX_ASKS,
                why);
            result.complete(new LedgerClose.GaveUp(why));
          }
        });
  }

  /** The ledger's queue was full when the close was asked (it decided nothing). */
  static final class LedgerBusyException extends RuntimeException {
    LedgerBusyException() {
      super("ledger_busy", null, false, false);
    }
  }

  /** The wait after the {@code attempt}-th unanswered ask. */
  static Duration backoff(int attempt) {
    return FIRST_BACKOFF.multipliedBy(1L << (attempt - 1));
  }

  private static Throwable causeOf(Throwable failure) {
    return failure instanceof CompletionException && failure.getCause() != null
        ? failure.getCause()
        : failure;
  }
}
