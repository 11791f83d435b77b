package dev.spendgateway.ledger;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import dev.spendgateway.ledger.LedgerEvents.Compacted;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.GroupCommit;
import dev.spendgateway.ledger.LedgerEvents.ReservationExpired;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerEvents.ReservationRefused;
import dev.spendgateway.ledger.LedgerEvents.ReservationSettled;
import dev.spendgateway.ledger.LedgerEvents.ReservationVoided;
import dev.spendgateway.ledger.LedgerEvents.SpendAdjusted;
import dev.spendgateway.ledger.LedgerProtocol.GetUsage;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import dev.spendgateway.ledger.Reservation.Refusal;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapCheck;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapLimits;
import dev.spendgateway.policy.caps.CapWindows;
import dev.spendgateway.policy.caps.Spend;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Immutable ledger state: every known reservation id, spend per cap window, open reservations,
 * and every operator adjustment id (kept for good: compaction forgets closed reservations only).
 */
@JsonAutoDetect(fieldVisibility = JsonAutoDetect.Visibility.NONE)
public final class LedgerState implements LedgerSerializable {
  private final PersistentMap<String, Reservation> reservations;
  private final OpenReservations open;
  private final PersistentMap<CapKey, Spend> spend;
  private final PersistentMap<String, BrandCaps> brandCaps;
  private final PersistentMap<String, Adjustment> adjustments;

  LedgerState(
      PersistentMap<String, Reservation> reservations,
      OpenReservations open,
      PersistentMap<CapKey, Spend> spend,
      PersistentMap<String, BrandCaps> brandCaps,
      PersistentMap<String, Adjustment> adjustments) {
    this.reservations = reservations;
    this.open = open;
    this.spend = spend;
    this.brandCaps = brandCaps;
    this.adjustments = adjustments;
  }

  public static LedgerState empty() {
    return new LedgerState(PersistentMap.empty(), OpenReservations.empty(), PersistentMap.empty(), PersistentMap.empty(),
        PersistentMap.empty());
  }

  public Optional<Reservation> reservation(String id) {
    return Optional.ofNullable(reservations.get(id));
  }

  public Optional<Adjustment> adjustment(String id) {
    return Optional.ofNullable(adjustments.get(id));
  }

  public int knownAdjustments() {
    return adjustments.size();
  }

  public Spend spendOn(CapKey key) {
    return spend.getOrDefault(key, Spend.NONE);
  }

  public int openReservations() {
    return open.size();
  }

  public int knownReservations() {
    return reservations.size();
  }

  /** Open reservations whose timeout has passed at {@code now}, oldest first. */
  public List<Reservation> dueForExpiry(Instant now) {
    return open.dueBy(now);
  }

  /** Whether a compaction at {@code cutoff} would drop anything. */
  public boolean hasClosedBefore(Instant cutoff) {
    return reservations.values().stream().anyMatch(r -> !r.isOpen() && r.closedAt().isBefore(cutoff))
        || spend.asMap().keySet().stream().anyMatch(k -> windowEndedBefore(k, cutoff));
  }

  /**
   * The state after {@code event}: the one fold used by the actor, its recovery and the audit
   * tools ({@code dev.spendgateway.ledger.audit}). Throws {@link IllegalStateException} on an
   * event that cannot follow this state (closing a reservation that is not open).
   */
  public LedgerState applied(Event event) {
    if (event instanceof ReservationMade e) {
      return withReservation(e);
    } else if (event instanceof ReservationRefused e) {
      return withRefusal(e);
    } else if (event instanceof ReservationSettled e) {
      return withClosed(e.id(), Status.SETTLED, e.actualMicros(), e.at());
    } else if (event instanceof ReservationVoided e) {
      return withClosed(e.id(), Status.VOIDED, 0, e.at());
    } else if (event instanceof ReservationExpired e) {
      return withClosed(e.id(), Status.EXPIRED, e.reservedMicros(), e.at());
    } else if (event instanceof SpendAdjusted e) {
      return withAdjustment(e);
    } else if (event instanceof Compacted e) {
      return compactedBefore(e.cutoff());
    } else if (event instanceof GroupCommit g) {
      LedgerState state = this;
      for (Event fact : g.facts()) {
        state = state.applied(fact);
      }
      return state;
    }
    throw new IllegalArgumentException("unknown event " + event.getClass().getName());
  }

  /** Whether {@code id} is an open reservation. */
  public boolean isOpen(String id) {
    return open.get(id) != null;
  }

  LedgerState withReservation(ReservationMade e) {
    Reservation r = new Reservation(e.id(), e.lane(), e.subject(), e.amountMicros(), e.brandDailyMicros(),
        e.brandMonthlyMicros(), e.at(), e.expiresAt(), Status.RESERVED, 0, null, null, e.owner());
    PersistentMap<CapKey, Spend> newSpend = spend;
    for (CapKey key : CapCheck.keysFor(e.lane(), e.subject(), e.at())) {
      newSpend = newSpend.with(key, newSpend.getOrDefault(key, Spend.NONE).withReserved(e.amountMicros()));
    }
    PersistentMap<String, BrandCaps> newBrandCaps = e.lane() == Lane.APP
        ? brandCaps.with(e.subject(), new BrandCaps(e.brandDailyMicros(), e.brandMonthlyMicros()))
        : brandCaps;
    return new LedgerState(reservations.with(e.id(), r), open.with(e.id(), r), newSpend, newBrandCaps, adjustments);
  }

  LedgerState withRefusal(ReservationRefused e) {
    Reservation r = new Reservation(e.id(), e.lane(), e.subject(), e.amountMicros(), e.brandDailyMicros(),
        e.brandMonthlyMicros(), e.at(), e.at(), Status.REFUSED, 0, e.at(),
        new Refusal(e.cap(), e.capSubject(), e.window(), e.limitMicros(), e.headroomMicros()), e.owner());
    return new LedgerState(reservations.with(e.id(), r), open, spend, brandCaps, adjustments);
  }

  /** An open reservation closes at {@code actualMicros}: its hold is released, the cost counted. */
  LedgerState withClosed(String id, Status status, long actualMicros, Instant at) {
    Reservation r = open.get(id);
    if (r == null) {
      throw new IllegalStateException("closing a reservation that is not open: " + id);
    }
    PersistentMap<CapKey, Spend> newSpend = spend;
    for (CapKey key : CapCheck.keysFor(r.lane(), r.subject(), r.reservedAt())) {
      newSpend = newSpend.with(key, newSpend.getOrDefault(key, Spend.NONE).withClosed(r.amountMicros(), actualMicros));
    }
    return new LedgerState(reservations.with(id, r.closed(status, actualMicros, at)), open.without(id), newSpend, brandCaps,
        adjustments);
  }

  /** The delta counts as settled spend in the windows of {@code at}; its id is remembered. */
  /**
   * The cap windows an adjustment on {@code window} moves when applied at {@code at}: those its
   * scope names (see {@link AdjustmentWindow#keys}), except a window that has ended and is no longer
   * in the books (compacted, or never spent in). No reserve is decided against such a window again,
   * so there is no headroom left in it to correct; recreating it would only hold a lone delta.
   */
  public List<CapKey> keysMovedBy(Lane lane, String subject, String window, AdjustmentScope scope, Instant at) {
    return AdjustmentWindow.keys(lane, subject, window, scope).stream()
        .filter(k -> spend.containsKey(k) || !AdjustmentWindow.hasEnded(k, at))
        .toList();
  }

  LedgerState withAdjustment(SpendAdjusted e) {
    PersistentMap<CapKey, Spend> newSpend = spend;
    for (CapKey key : keysMovedBy(e.lane(), e.subject(), e.window(), e.scope(), e.at())) {
      newSpend = newSpend.with(key, newSpend.getOrDefault(key, Spend.NONE).withAdjustment(e.deltaMicros()));
    }
    Adjustment a = Adjustment.of(e);
    return new LedgerState(reservations, open, newSpend, brandCaps, adjustments.with(a.id(), a));
  }

  LedgerState compactedBefore(Instant cutoff) {
    PersistentMap<String, Reservation> kept = reservations;
    for (Reservation r : reservations.values()) {
      if (!r.isOpen() && r.closedAt().isBefore(cutoff)) {
        kept = kept.without(r.id());
      }
    }
    PersistentMap<CapKey, Spend> keptSpend = spend;
    for (CapKey k : spend.asMap().keySet()) {
      if (windowEndedBefore(k, cutoff)) {
        keptSpend = keptSpend.without(k);
      }
    }
    return new LedgerState(kept, open, keptSpend, brandCaps, adjustments);
  }

  /** Day and month windows that ended before {@code cutoff}; lifetime windows never end. */
  private static boolean windowEndedBefore(CapKey key, Instant cutoff) {
    String window = key.window();
    if (window.equals(CapWindows.LIFETIME)) {
      return false;
    }
    String cutoffWindow = window.length() == 10 ? CapWindows.dayKey(cutoff) : CapWindows.monthKey(cutoff);
    return window.compareTo(cutoffWindow) < 0;
  }

  /** Same books and same remembered ids: used by recovery tests (snapshot + journal vs journal only). */
  @Override
  public boolean equals(Object o) {
    return o instanceof LedgerState other
        && sameBooksIgnoringAdjustmentIds(other)
        && adjustments.asMap().equals(other.adjustments.asMap());
  }

  /**
   * Whether {@code snapshot}, a snapshot taken at the sequence number this state was replayed to,
   * holds the same books: equal in everything, except that it may remember fewer adjustment ids
   * (each one it remembers the same as here). A snapshot written before adjustment ids were kept
   * remembers none, and a ledger that recovered from such a snapshot only the later ones; the
   * spend they moved is in the books either way.
   */
  public boolean sameBooksAs(LedgerState snapshot) {
    return sameBooksIgnoringAdjustmentIds(snapshot)
        && snapshot.adjustments.asMap().entrySet().stream()
            .allMatch(e -> e.getValue().equals(adjustments.get(e.getKey())));
  }

  private boolean sameBooksIgnoringAdjustmentIds(LedgerState other) {
    return reservations.asMap().equals(other.reservations.asMap())
        && open.asMap().equals(other.open.asMap())
        && spend.asMap().entrySet().stream().filter(e -> !e.getValue().isEmpty()).collect(
            java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)).equals(
            other.spend.asMap().entrySet().stream().filter(e -> !e.getValue().isEmpty()).collect(
                java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)))
        && brandCaps.asMap().equals(other.brandCaps.asMap());
  }

  @Override
  public int hashCode() {
    return reservations.size() * 31 + open.size();
  }

  @Override
  public String toString() {
    return "State(reservations=" + reservations.size() + ", open=" + open.size() + ", capWindows=" + spend.size()
        + ", adjustments=" + adjustments.size() + ")";
  }

  /** The caps a brand sent with its latest reservation (shown by {@code /usage}). */
  public record BrandCaps(long dailyMicros, long monthlyMicros) {}

  /**
   * Every cap window that {@code now} falls in, with limit, settled and held spend (see {@link
   * UsageView}).
   */
  public Usage usage(Optional<String> subject, Instant now, CapLimits limits) {
    return UsageView.of(this, subject, GetUsage.DEFAULT_TOP_SUBJECTS, now, limits);
  }

  /** As above, listing at most {@code topSubjects} subjects' caps when no subject is given. */
  public Usage usage(Optional<String> subject, int topSubjects, Instant now, CapLimits limits) {
    return UsageView.of(this, subject, topSubjects, now, limits);
  }

  // Read access for the usage view and the snapshot codec (same package, no copies).

  PersistentMap<String, Reservation> reservationsById() {
    return reservations;
  }

  OpenReservations openById() {
    return open;
  }

  PersistentMap<CapKey, Spend> spendByKey() {
    return spend;
  }

  PersistentMap<String, BrandCaps> brandCapsBySubject() {
    return brandCaps;
  }

  PersistentMap<String, Adjustment> adjustmentsById() {
    return adjustments;
  }

  /** The snapshot form (see {@link LedgerSnapshot}): what Jackson writes for this state. */
  @JsonValue
  LedgerSnapshot toSnapshot() {
    return LedgerSnapshot.of(this);
  }

  @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
  static LedgerState fromSnapshot(LedgerSnapshot snapshot) {
    return snapshot.toState();
  }
}
