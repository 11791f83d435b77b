package dev.spendgateway.ledger;

import dev.spendgateway.ledger.LedgerState.BrandCaps;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.Spend;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The snapshot form of {@link LedgerState}: plain lists, so a snapshot is readable and independent
 * of the in-memory map types. Its JSON shape is the snapshot store's format.
 *
 * <p>{@code adjustments} was added after the first format: a snapshot without it reads as
 * remembering no adjustment ids.
 */
public record LedgerSnapshot(
    List<Reservation> reservations, List<SpendEntry> spend, Map<String, BrandCaps> brandCaps,
    List<Adjustment> adjustments) {

  public LedgerSnapshot {
    adjustments = adjustments == null ? List.of() : adjustments;
  }

  /** One cap window's totals. */
  public record SpendEntry(CapKey key, Spend spend) {}

  static LedgerSnapshot of(LedgerState state) {
    List<SpendEntry> entries = state.spendByKey().asMap().entrySet().stream()
        .map(e -> new SpendEntry(e.getKey(), e.getValue())).toList();
    return new LedgerSnapshot(List.copyOf(state.reservationsById().values()), entries,
        new HashMap<>(state.brandCapsBySubject().asMap()), List.copyOf(state.adjustmentsById().values()));
  }

  /** The state this snapshot holds; open reservations are re-indexed by expiry. */
  LedgerState toState() {
    PersistentMap<String, Reservation> all = PersistentMap.empty();
    OpenReservations open = OpenReservations.empty();
    for (Reservation r : reservations) {
      all = all.with(r.id(), r);
      if (r.isOpen()) {
        open = open.with(r.id(), r);
      }
    }
    PersistentMap<CapKey, Spend> totals = PersistentMap.empty();
    for (SpendEntry e : spend) {
      totals = totals.with(e.key(), e.spend());
    }
    PersistentMap<String, Adjustment> byId = PersistentMap.empty();
    for (Adjustment a : adjustments) {
      byId = byId.with(a.id(), a);
    }
    return new LedgerState(all, open, totals, PersistentMap.of(brandCaps), byId);
  }
}
