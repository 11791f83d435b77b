package dev.spendgateway.ledger.audit;

import dev.spendgateway.ledger.AllowanceTransfers;
import dev.spendgateway.ledger.LedgerEvents.AllowanceIn;
import dev.spendgateway.ledger.LedgerEvents.AllowanceOut;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.ReservationExpired;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerEvents.ReservationSettled;
import dev.spendgateway.ledger.LedgerEvents.ReservationVoided;
import dev.spendgateway.ledger.LedgerEvents.SpendAdjusted;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import dev.spendgateway.ledger.LedgerState;
import dev.spendgateway.policy.caps.CapCheck;
import dev.spendgateway.policy.caps.CapLimits;
import dev.spendgateway.policy.money.Micros;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Replays the journal with the ledger's own fold ({@link State#applied}) and checks, before each
 * event is applied, that it could have been written by a correct ledger:
 *
 * <ul>
 *   <li>a {@code ReservationMade} fits under every cap it is held against (the same {@link
 *       CapCheck} rules the actor decides with, against the state before it);
 *   <li>a reservation id is reserved at most once in the whole journal (while open or long after it
 *       closed: the ledger answers a repeat with the first answer, or 409 {@code id_reused} once it
 *       is past the idempotency window, never with a second reservation);
 *   <li>a settle, void or expiry closes a reservation that is open: each reservation is closed at
 *       most once;
 *   <li>each operator adjustment id is applied at most once;
 *   <li>each regional allowance transfer is taken out at most once and never above the headroom its
 *       window had then, and taken in at most once (across regions, {@link AllowanceAudit} checks
 *       that no transfer is taken in above what was taken out);
 *   <li>at the latest snapshot's sequence number, the replayed state equals the snapshot (which may
 *       remember fewer adjustment ids, see {@link State#sameBooksAs}).
 * </ul>
 *
 * Cap limits come from the configuration given (the running gateway's, normally): the journal does
 * not record global and pool limits on accepted reservations, so verify a journal with the caps it
 * was written under (see docs/OPERATIONS.md after a cap change). Brand caps travel with each
 * reservation and are always checked as sent.
 */
public final class LedgerAudit {
  private final CapLimits limits;
  private LedgerState state = LedgerState.empty();
  private long events;
  private long lastSequenceNr;
  private Instant lastAt;

  /** id → sequence number of the event that closed it (until a later reservation reuses the id). */
  private final Map<String, Long> closedAt = new HashMap<>();

  /**
   * reservation id → sequence number of the event that reserved it (every id, for the whole
   * journal).
   */
  private final Map<String, Long> reservedAt = new HashMap<>();

  /** adjustment id → sequence number of the event that applied it. */
  private final Map<String, Long> adjustedAt = new HashMap<>();

  public LedgerAudit(CapLimits limits) {
    this.limits = limits;
  }

  /**
   * Applies {@code j}; checks the invariants first. The state is left unchanged by a violating
   * event.
   */
  public Optional<Violation> accept(Journaled j) {
    Event event = j.event();
    Optional<String> broken = check(event);
    if (broken.isPresent()) {
      return Optional.of(new Violation(j.sequenceNr(), j.type(), broken.get()));
    }
    try {
      state = state.applied(event);
    } catch (RuntimeException e) {
      return Optional.of(
          new Violation(j.sequenceNr(), j.type(), "cannot be applied: " + e.getMessage()));
    }
    if (event instanceof ReservationMade m) {
      reservedAt.put(m.id(), j.sequenceNr());
      closedAt.remove(m.id());
    } else if (isClose(event)) {
      closedAt.put(closedId(event), j.sequenceNr());
    } else if (event instanceof SpendAdjusted a) {
      adjustedAt.put(a.adjustmentId(), j.sequenceNr());
    }
    events++;
    lastSequenceNr = j.sequenceNr();
    lastAt = event.at();
    return Optional.empty();
  }

  /**
   * Only replays: no invariant checks (the {@code replay} verb). A broken journal still fails on
   * apply.
   */
  public void apply(Journaled j) {
    state = state.applied(j.event());
    events++;
    lastSequenceNr = j.sequenceNr();
    lastAt = j.event().at();
  }

  /** Compares the replayed state with a snapshot taken at the current sequence number. */
  public Optional<Violation> checkSnapshot(
      long snapshotSequenceNr, LedgerState snapshot, String lastType) {
    if (snapshotSequenceNr != lastSequenceNr) {
      throw new IllegalStateException(
          "snapshot at " + snapshotSequenceNr + " checked at " + lastSequenceNr);
    }
    return state.sameBooksAs(snapshot)
        ? Optional.empty()
        : Optional.of(
            new Violation(
                snapshotSequenceNr,
                lastType,
                "replayed totals differ from the snapshot taken at this sequence number: replayed "
                    + state
                    + ", snapshot "
                    + snapshot));
  }

  private Optional<String> check(Event event) {
    if (event instanceof ReservationMade m) {
      if (state.isOpen(m.id())) {
        return Optional.of("reservation " + m.id() + " reserved again while still open");
      }
      Long first = reservedAt.get(m.id());
      if (first != null) {
        return Optional.of(
            "reservation "
                + m.id()
                + " reserved a second time (first reserved in journal row "
                + first
                + ")");
      }
      // The limits the decider used: the configured caps moved by allowance transfers, if any.
      var caps =
          state.withAllowances(
              CapCheck.capsFor(
                  m.lane(),
                  m.subject(),
                  m.brandDailyMicros(),
                  m.brandMonthlyMicros(),
                  m.at(),
                  state.calendar(),
                  limits));
      return CapCheck.firstFailing(caps, m.amountMicros(), state::spendOn)
          .map(
              f ->
                  String.format(
                      "reservation %s of $%s accepted past cap %s%s (window %s): limit $%s, headroom $%s",
                      m.id(),
                      usd(m.amountMicros()),
                      f.key().cap().wireName(),
                      f.key().subject() == null ? "" : " for " + f.key().subject(),
                      f.key().window(),
                      usd(f.limitMicros()),
                      usd(f.headroomMicros())));
    }
    if (isClose(event)) {
      String id = closedId(event);
      if (!state.isOpen(id)) {
        Long first = closedAt.get(id);
        return Optional.of(
            first != null
                ? "reservation " + id + " closed twice (first closed in journal row " + first + ")"
                : "reservation "
                    + id
                    + " closed but it is not open (never reserved, refused, or forgotten)");
      }
    }
    if (event instanceof AllowanceOut o) {
      return checkOut(o);
    }
    if (event instanceof AllowanceIn i) {
      if (state.allowanceIn(i.transferId()).isPresent()) {
        return Optional.of("allowance transfer " + i.transferId() + " taken in twice");
      }
      if (state.allowanceOut(i.transferId()).isPresent()) {
        return Optional.of(
            "allowance transfer " + i.transferId() + " taken in where it was taken out");
      }
      if (i.micros() <= 0) {
        return Optional.of("allowance transfer " + i.transferId() + " of a non-positive amount");
      }
    }
    if (event instanceof SpendAdjusted a && adjustedAt.containsKey(a.adjustmentId())) {
      return Optional.of(
          "adjustment "
              + a.adjustmentId()
              + " applied twice (first applied in journal row "
              + adjustedAt.get(a.adjustmentId())
              + ")");
    }
    return Optional.empty();
  }

  /**
   * An out is taken once per id, never of a window this region had not got: at most the headroom
   * (allowance − settled − held) at that point, or the regions' spend could pass the cap together.
   */
  private Optional<String> checkOut(AllowanceOut o) {
    if (state.allowanceOut(o.transferId()).isPresent()) {
      return Optional.of("allowance transfer " + o.transferId() + " taken out twice");
    }
    if (state.allowanceIn(o.transferId()).isPresent()) {
      return Optional.of(
          "allowance transfer " + o.transferId() + " taken out where it was taken in");
    }
    if (o.micros() <= 0 || o.cap().perSubject()) {
      return Optional.of(
          "allowance transfer "
              + o.transferId()
              + " of a non-positive amount or of a cap not split between regions");
    }
    long headroom = AllowanceTransfers.headroom(state, limits, o.key());
    if (o.micros() > headroom) {
      return Optional.of(
          String.format(
              "allowance transfer %s took out $%s of %s (window %s) with only $%s of headroom",
              o.transferId(),
              usd(o.micros()),
              o.cap().wireName(),
              o.window(),
              usd(Math.max(0, headroom))));
    }
    return Optional.empty();
  }

  private static boolean isClose(Event e) {
    return e instanceof ReservationSettled
        || e instanceof ReservationVoided
        || e instanceof ReservationExpired;
  }

  private static String closedId(Event e) {
    if (e instanceof ReservationSettled s) {
      return s.id();
    } else if (e instanceof ReservationVoided v) {
      return v.id();
    }
    return ((ReservationExpired) e).id();
  }

  private static String usd(long micros) {
    return Micros.toUsd(micros).toPlainString();
  }

  public LedgerState state() {
    return state;
  }

  /** {@code /usage} of the replayed state as of {@code at}. */
  public Usage usage(Instant at) {
    // Offline, for an operator's audit: every active subject, not only the top spenders /usage
    // lists.
    return state.usage(Optional.empty(), Integer.MAX_VALUE, at, limits);
  }

  public long events() {
    return events;
  }

  public long lastSequenceNr() {
    return lastSequenceNr;
  }

  /** Instant of the last applied event; empty before the first. */
  public Optional<Instant> lastAt() {
    return Optional.ofNullable(lastAt);
  }
}
