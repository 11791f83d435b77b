package dev.spendgateway.edge.call;

import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.log.AccessLine;
import dev.spendgateway.edge.provider.CallServices;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.ReserveRequest;
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
                return (Reserving)
                    new Reserving.Held(
                        attempt(request.id(), reserved.amountMicros(), pricing, line));
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
