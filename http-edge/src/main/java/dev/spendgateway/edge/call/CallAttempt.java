package dev.spendgateway.edge.call;

import dev.spendgateway.edge.log.AccessLine;
import dev.spendgateway.edge.log.AccessLog;
import dev.spendgateway.edge.log.AccessRecord;
import dev.spendgateway.policy.money.Micros;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One provider attempt holding a reservation, from the ledger's yes to its access line. It ends
 * once ({@link #end}): the settlement rule decides, the reservation closes, and the attempt's
 * access line is written when the ledger has answered, saying what the ledger did. Every path —
 * answer, error status, cut, hang-up, breaker, timeout — ends the attempt through the same method;
 * a second end is ignored, so a late path cannot close twice or log twice.
 */
public final class CallAttempt {
  private static final Logger log = LoggerFactory.getLogger(CallAttempt.class);

  private final HeldReservation reservation;
  private final Settlement.Pricing pricing;
  private final AccessLine line;
  private final CallMetrics metrics;
  private final LongSupplier nanoTime;
  private final Runnable closeStarted;
  private final AtomicReference<Settlement.Decision> ended = new AtomicReference<>();
  private final CompletableFuture<AccessRecord> written = new CompletableFuture<>();
  private final CompletableFuture<Settlement.Decision> decided = new CompletableFuture<>();

  /**
   * @param line the attempt's line so far (route, request id, spend, provider, model, reserved)
   * @param closeStarted run once the close has started (the shutdown's "settle expected" ticket)
   */
  CallAttempt(
      HeldReservation reservation,
      Settlement.Pricing pricing,
      AccessLine line,
      CallMetrics metrics,
      LongSupplier nanoTime,
      Runnable closeStarted) {
    this.reservation = reservation;
    this.pricing = pricing;
    this.line = line;
    this.metrics = metrics;
    this.nanoTime = nanoTime;
    this.closeStarted = closeStarted;
  }

  /** The amount held: what keeping the worst case settles at. */
  public long heldMicros() {
    return reservation.heldMicros();
  }

  /** Whether the attempt has ended (by any path). */
  public boolean hasEnded() {
    return ended.get() != null;
  }

  /**
   * Ends the attempt: decides how the reservation closes, closes it, and writes the line once the
   * ledger has answered. A repeat changes nothing and returns the first decision.
   *
   * @param status the HTTP status the line records (what the caller got; 0 when this attempt's
   *     answer did not reach the caller)
   */
  public Settlement.Decision end(UpstreamOutcome outcome, int status) {
    Settlement.Decision decision = Settlement.decide(outcome, pricing);
    if (!ended.compareAndSet(null, decision)) {
      return ended.get();
    }
    decided.complete(decision);
    warnIfAboveReserve(decision);
    AccessLine endedLine = line.withStatus(status).withError(decision.outcomeWord());
    try {
      reservation
          .close(decision.closing())
          .whenComplete(
              (closed, failure) -> {
                AccessLine truthful =
                    failure != null
                        ? endedLine.withError(joined(decision.outcomeWord(), "settle_failed"))
                        : endedLine
                            .withSettled(closed.settledMicros())
                            .withError(joined(decision.outcomeWord(), closed.problem()));
                AccessRecord record = truthful.record(nanoTime.getAsLong());
                AccessLog.write(record);
                written.complete(record);
              });
    } finally {
      closeStarted.run();
    }
    return decision;
  }

  /**
   * Completes, on the ending thread and before the reservation is closed, with how the attempt
   * ended (e.g. for the router's per-attempt counters).
   */
  public CompletionStage<Settlement.Decision> decided() {
    return decided;
  }

  /** Completes with the attempt's access record once written. */
  public CompletionStage<AccessRecord> written() {
    return written;
  }

  private void warnIfAboveReserve(Settlement.Decision decision) {
    if (decision.closing() instanceof Settlement.Closing.AtCost cost
        && cost.micros() > reservation.heldMicros()) {
      long over = cost.micros() - reservation.heldMicros();
      metrics.settledAboveReserve(line.provider(), line.model(), over);
      // The request id, not the reservation's: it is what an operator searches the access log by,
      // and a provider call's reservation id appears in no caller-visible answer or other log line.
      log.warn(
          "settled above reserve: request {} reserved {} actual {} (model {})",
          line.requestId(),
          Micros.toUsd(reservation.heldMicros()),
          Micros.toUsd(cost.micros()),
          line.model());
    }
  }

  /** The outcome word, then what went wrong closing it, if anything. */
  static String joined(String outcomeWord, String closeProblem) {
    if (closeProblem == null) {
      return outcomeWord;
    }
    return outcomeWord == null ? closeProblem : outcomeWord + ":" + closeProblem;
  }
}
