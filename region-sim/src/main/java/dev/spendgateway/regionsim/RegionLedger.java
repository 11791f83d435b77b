package dev.spendgateway.regionsim;

import dev.spendgateway.ledger.AllowanceTransfers;
import dev.spendgateway.ledger.Decider;
import dev.spendgateway.ledger.Decider.Decision;
import dev.spendgateway.ledger.LedgerEvents.AllowanceOut;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerProtocol.Batchable;
import dev.spendgateway.ledger.LedgerProtocol.Reserve;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.Settle;
import dev.spendgateway.ledger.LedgerProtocol.VoidReservation;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.ledger.LedgerState;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapLimits;
import dev.spendgateway.policy.caps.CapName;
import dev.spendgateway.policy.caps.CapWindows;
import dev.spendgateway.policy.caps.Spend;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * One region's ledger: a journal of ledger events and the real {@link LedgerState} folded from it.
 * Every reserve, settle, void and expiry is decided by the real {@link Decider}, and every
 * allowance transfer by the real {@link AllowanceTransfers}; the journal holds the ledger's own
 * {@code AllowanceOut} / {@code AllowanceIn} events, and the state's caps are this region's share
 * moved by them — exactly what a regional ledger would run. Nothing of the ledger's rules is
 * re-implemented here.
 *
 * <p>A write is journaled and applied in one step (the journal is the commit point, as in the
 * ledger: its answer goes out only once the row is durable). A crash throws away everything that is
 * not in the journal; {@link #recover} folds the journal again.
 */
final class RegionLedger {
  /** Lane caps are set out of reach: the simulation is about the two global caps. */
  private static final long OUT_OF_REACH = 1_000_000_000_000L;

  final int index;
  private final String name;
  private final Split split;
  private final CapLimits share;
  private final Decider decider;
  private final List<Event> journal = new ArrayList<>();
  private LedgerState state = LedgerState.empty();
  private boolean up = true;

  RegionLedger(int index, Split split, LedgerSettings settings) {
    this.index = index;
    this.name = nameOf(index);
    this.split = split;
    Instant any = Instant.EPOCH; // a share depends on the cap, not on the window
    this.share =
        new CapLimits(
            split.share(index, dayKey(any)),
            split.share(index, monthKey(any)),
            OUT_OF_REACH,
            OUT_OF_REACH,
            OUT_OF_REACH);
    this.decider = new Decider(settings.withCaps(share));
  }

  static String nameOf(int region) {
    return "r" + region;
  }

  static int indexOf(String region) {
    return Integer.parseInt(region.substring(1));
  }

  boolean isUp() {
    return up;
  }

  static CapKey dayKey(Instant at) {
    return new CapKey(CapName.GLOBAL_DAILY, null, CapWindows.dayKey(at));
  }

  static CapKey monthKey(Instant at) {
    return new CapKey(CapName.GLOBAL_MONTHLY, null, CapWindows.monthKey(at));
  }

  /** Share + transfers in − transfers out: this region's cap for {@code key}'s window. */
  long allowance(CapKey key) {
    return split.share(index, key) + state.allowanceMovedIn(key);
  }

  /** Settled + held in {@code key}'s window, as the ledger's books say. */
  long spend(CapKey key) {
    Spend s = state.spendOn(key);
    return s.settledMicros() + s.reservedMicros();
  }

  long headroom(CapKey key) {
    return AllowanceTransfers.headroom(state, share, key);
  }

  ReserveReply reserve(String id, long amountMicros, Instant now) {
    Reserve cmd = new Reserve(id, Lane.FREE, null, amountMicros, 0, 0, Owner.GATEWAY, null, null);
    Decision<ReserveReply> d = decider.reserve(state, cmd, now);
    write(d.events());
    return d.reply();
  }

  /**
   * A settle at {@code actualMicros}, or a void; a close of an id no longer open writes nothing.
   */
  void close(String id, long actualMicros, boolean voided, Instant now) {
    Batchable cmd =
        voided
            ? new VoidReservation(id, Owner.GATEWAY, null, null)
            : new Settle(id, actualMicros, Owner.GATEWAY, null, null);
    write(decider.decide(state, cmd, now).events());
  }

  /** The ledger's expiry tick: reservations whose callers never closed them, at worst case. */
  int expireDue(Instant now) {
    if (state.dueForExpiry(now).isEmpty()) {
      return 0; // the usual tick: nothing due
    }
    List<Event> due = decider.expireDue(state, now);
    write(due);
    return due.size();
  }

  /**
   * The rebalancer's loan of {@code key}: at most {@code want}, never from below {@code floor} of
   * headroom, at most {@code rateLeft} (its policy); the ledger then decides the out itself and
   * journals it before anything is sent.
   */
  Optional<AllowanceOut> lend(
      String transferId,
      int to,
      CapKey key,
      long want,
      long floor,
      long rateLeft,
      String reason,
      Instant now) {
    long amount = AllowanceRules.lendable(headroom(key), floor, want, rateLeft);
    if (amount <= 0) {
      return Optional.empty();
    }
    Decision<AllowanceTransfers.Reply> d =
        AllowanceTransfers.takeOut(
            state,
            share,
            name,
            new AllowanceTransfers.Lend(transferId, name, nameOf(to), key, amount, reason, null),
            now);
    if (!(d.reply() instanceof AllowanceTransfers.TakenOut taken)) {
      throw new IllegalStateException("the ledger refused a loan within headroom: " + d.reply());
    }
    write(d.events());
    return Optional.of(taken.out());
  }

  /**
   * The broken order's source half: takes out what the borrower already added, whatever its
   * headroom (it cannot refuse a loan that is already being spent), so it bypasses the decider.
   * Only {@link Policy#ADD_FIRST}.
   */
  boolean takeOutUnchecked(AllowanceOut out) {
    if (state.allowanceOut(out.transferId()).isPresent()) {
      return false;
    }
    write(List.of(out));
    return true;
  }

  /** Takes a delivered transfer in, once per id; false for a repeat (acknowledged again). */
  boolean applyIn(AllowanceOut delivered, Instant now) {
    Decision<AllowanceTransfers.Reply> d = AllowanceTransfers.takeIn(state, name, delivered, now);
    if (d.reply() instanceof AllowanceTransfers.NotTaken refused) {
      throw new IllegalStateException("the ledger refused a delivered transfer: " + refused);
    }
    write(d.events());
    return !d.events().isEmpty();
  }

  /** Every out this region journaled, by transfer id (what a recovered region re-sends). */
  List<AllowanceOut> outs() {
    return state.allowanceOuts().stream()
        .sorted(Comparator.comparing(AllowanceOut::transferId))
        .toList();
  }

  boolean appliedIn(String transferId) {
    return state.allowanceIn(transferId).isPresent();
  }

  int journalSize() {
    return journal.size();
  }

  private void write(List<Event> events) {
    if (events.isEmpty()) {
      return;
    }
    if (!up) {
      throw new IllegalStateException("region " + index + " is down");
    }
    for (Event e : events) {
      journal.add(e);
      state = state.applied(e);
    }
  }

  /** The process dies: only the journal is left. */
  void crash() {
    up = false;
  }

  /**
   * The process restarts: the state is folded from the journal again (the ledger's own recovery,
   * {@code LedgerState.applied} from empty). Returns whether the recovered books equal the ones the
   * crash threw away, which they must: the journal is the commit point.
   */
  boolean recover() {
    LedgerState lost = state;
    state = LedgerState.empty();
    for (Event e : journal) {
      state = state.applied(e);
    }
    up = true;
    return state.equals(lost);
  }
}
