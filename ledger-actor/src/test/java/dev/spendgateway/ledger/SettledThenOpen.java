package dev.spendgateway.ledger;

import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerEvents.ReservationSettled;
import dev.spendgateway.policy.access.Lane;
import java.time.Instant;
import java.util.function.IntFunction;

/**
 * A ledger state of a given size for snapshot and heap measurements: {@code settled} reservations
 * made and settled (their ids held by the idempotency window), then {@code open} left open, one per
 * millisecond from {@code start}. Public for the benchmarks in {@code bench}.
 */
public final class SettledThenOpen {
  private SettledThenOpen() {}

  /**
   * @param idOf the reservation id of the i-th reservation
   * @param brandOf its brand (null: none)
   */
  public static LedgerState ledger(
      Instant start, int settled, int open, IntFunction<String> idOf, IntFunction<String> brandOf) {
    LedgerState state = LedgerState.empty();
    Instant at = start;
    for (int i = 0; i < settled + open; i++) {
      String id = idOf.apply(i);
      String brand = brandOf.apply(i);
      state =
          state.applied(
              new ReservationMade(id, Lane.FREE, brand, 1_000, 0, 0, at, at.plusSeconds(900)));
      if (i < settled) {
        state = state.applied(new ReservationSettled(id, Lane.FREE, brand, at, 1_000, 500, at));
      }
      at = at.plusMillis(1);
    }
    return state;
  }
}
