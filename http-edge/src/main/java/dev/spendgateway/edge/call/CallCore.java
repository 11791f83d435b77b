package dev.spendgateway.edge.call;

import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.log.AccessLine;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.ReserveRequest;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;

/**
 * The call lifecycle every provider attempt shares — the pass-through routes' one attempt and each
 * of the failover router's: reserve the worst case, then hand back a {@link CallAttempt} that
 * closes the reservation once and writes the attempt's line; or the refusal, in one wording.
 */
public final class CallCore {
  private final CallServices services;
  private final LongSupplier nanoTime;

  /**
   * @param nanoTime monotonic time for the lines' durations ({@code System::nanoTime})
   */
  public CallCore(CallServices services, LongSupplier nanoTime) {
    this.services = services;
    this.nanoTime = nanoTime;
  }

  /** What a reserve gave: a held attempt, or the refusal to answer the caller with. */
  public sealed interface Reserving {
    record Held(CallAttempt attempt) implements Reserving {}

    record NotHeld(BudgetRefusal refusal) implements Reserving {}

    /**
     * The ledger held the worst case, but the caller had hung up by then: the attempt has ended
     * without being sent (its reservation voided, its line written with 499 {@code caller_gone}).
     */
    record CallerGone(CallAttempt attempt) implements Reserving {}
  }

  /**
   * Asks the ledger to hold {@code request}'s worst case. The answer comes only once the ledger's
   * event is durable. When the ask itself fails (timeout, ledger unavailable), the reserve may
   * still be booked late: the gateway voids the id it sent, so a late booking does not hold the
   * worst case for the reservation's whole lifetime.
   *
   * @param shape the caller's error dialect, for a refusal
   * @param line the attempt's line so far; the reserved amount is added here
   */
  public CompletionStage<Reserving> reserve(
      ReserveRequest request, Shape shape, Settlement.Pricing pricing, AccessLine line) {
    return reserve(request, shape, pricing, line, Optional.empty());
  }

  /**
   * As above, for a caller whose connection may end while the ledger decides ({@code callerGone}
   * completes then): a reservation granted to a caller already gone is released at once and the
   * provider never called, since nobody would read the answer it bills.
   */
  public CompletionStage<Reserving> reserve(
      ReserveRequest request,
      Shape shape,
      Settlement.Pricing pricing,
      AccessLine line,
      Optional<? extends CompletionStage<?>> callerGone) {
    return services
        .ledger()
        .reserve(request)
        .handle(
            (reply, failure) -> {
              if (failure != null) {
                voidOwn(request, line.requestId());
                return new Reserving.NotHeld(BudgetRefusal.of(shape, null, request.amountMicros()));
              }
              if (reply instanceof GlobalBudget.Reserved reserved) {
                CallAttempt attempt = attempt(request.id(), reserved.amountMicros(), pricing, line);
                if (callerGone.map(gone -> gone.toCompletableFuture().isDone()).orElse(false)) {
                  attempt.end(
                      new UpstreamOutcome.NeverSent("caller_gone"), GatewayErrors.CALLER_GONE);
                  return (Reserving) new Reserving.CallerGone(attempt);
                }
                return (Reserving) new Reserving.Held(attempt);
              }
              return new Reserving.NotHeld(BudgetRefusal.of(shape, reply, request.amountMicros()));
            });
  }

  private CallAttempt attempt(
      String id, long heldMicros, Settlement.Pricing pricing, AccessLine line) {
    HeldReservation held =
        new HeldReservation(
            id, heldMicros, line.requestId(), services.ledger(), services.inFlight());
    return new CallAttempt(
        held,
        pricing,
        line.withReserved(heldMicros),
        services.metrics(),
        nanoTime,
        services.inFlight().settlementExpected());
  }

  private void voidOwn(ReserveRequest request, String requestId) {
    new HeldReservation(
            request.id(), request.amountMicros(), requestId, services.ledger(), services.inFlight())
        .close(new Settlement.Closing.Void());
  }
}
