package dev.spendgateway.regionsim;

import dev.spendgateway.ledger.Decider;
import dev.spendgateway.ledger.Decider.Decision;
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
import java.util.List;
import java.util.Optional;

/**
 * One region's ledger: a journal, the real {@link LedgerState} folded from it, and the allowance
 * book folded from its transfer records. Every reserve, settle, void and expiry is decided by the
 * real {@link Decider}, given settings whose two global caps are this region's allowance at that
 * moment: the allowance is the cap its {@code CapCheck} sees, nothing else is re-implemented.
 *
 * <p>A write is journaled and applied in one step (the journal is the commit point, as in the
 * ledger: its answer goes out only once the row is durable). A crash throws away everything that is
 * not in the journal; {@link #recover} folds the journal again.
 */
final class RegionLedger {
  /** Lane and subject caps are set out of reach: the simulation is about the two global caps. */
  private static final long OUT_OF_REACH = 1_000_000_000_000L;

  final int index;
  private final Split split;
  private final LedgerSettings settings;
  private final List<Entry> journal = new ArrayList<>();
  private LedgerState state = LedgerState.empty();
  private AllowanceBook book = AllowanceBook.EMPTY;
  private boolean up = true;

  RegionLedger(int index, Split split, LedgerSettings settings) {
    this.index = index;
    this.split = split;
    this.settings = settings;
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
    return split.share(index, key) + book.netIn(key);
  }

  /** Settled + held in {@code key}'s window, as the ledger's books say. */
  long spend(CapKey key) {
    Spend s = state.spendOn(key);
    return s.settledMicros() + s.reservedMicros();
  }

  long headroom(CapKey key) {
    return allowance(key) - spend(key);
  }

  /** The real decider, with this region's allowances as its global caps at {@code now}. */
  private Decider deciderAt(Instant now) {
    // A negative allowance (only a broken transfer order makes one) refuses like 0 does.
    long daily = Math.max(0, allowance(dayKey(now)));
    long monthly = Math.max(0, allowance(monthKey(now)));
    return new Decider(
        settings.withCaps(new CapLimits(daily, monthly, OUT_OF_REACH, OUT_OF_REACH, OUT_OF_REACH)));
  }

  ReserveReply reserve(String id, long amountMicros, Instant now) {
    Reserve cmd = new Reserve(id, Lane.FREE, null, amountMicros, 0, 0, Owner.GATEWAY, null, null);
    Decision<ReserveReply> d = deciderAt(now).reserve(state, cmd, now);
    writeFacts(d.events());
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
    writeFacts(deciderAt(now).decide(state, cmd, now).events());
  }

  /** The ledger's expiry tick: reservations whose callers never closed them, at worst case. */
  int expireDue(Instant now) {
    if (state.dueForExpiry(now).isEmpty()) {
      return 0; // the usual tick: nothing due, no decider to build
    }
    List<Event> due = deciderAt(now).expireDue(state, now);
    writeFacts(due);
    return due.size();
  }

  /**
   * Decides a loan of {@code key}: at most {@code want}, never from below {@code floor} of
   * headroom, at most {@code rateLeft}; journals the out before anything is sent.
   */
  Optional<Entry.AllowanceOut> lend(
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
    Entry.AllowanceOut out =
        new Entry.AllowanceOut(transferId, index, to, key, amount, reason, now);
    write(out);
    return Optional.of(out);
  }

  /**
   * The broken order's source half: takes out what the borrower already added, whatever its
   * headroom (it cannot refuse a loan that is already being spent). Only {@link Policy#ADD_FIRST}.
   */
  boolean takeOutUnchecked(Entry.AllowanceOut out) {
    if (book.tookOut(out.transferId())) {
      return false;
    }
    write(out);
    return true;
  }

  /**
   * Applies a transfer in once per id; false for a repeat (acknowledged again, nothing written).
   */
  boolean applyIn(Entry.AllowanceIn in) {
    if (book.appliedIn(in.transferId())) {
      return false;
    }
    write(in);
    return true;
  }

  /** Every out this region journaled, in journal order (what a recovered region re-sends). */
  List<Entry.AllowanceOut> outs() {
    return List.copyOf(book.outs().values());
  }

  boolean appliedIn(String transferId) {
    return book.appliedIn(transferId);
  }

  int journalSize() {
    return journal.size();
  }

  List<Entry> journal() {
    return List.copyOf(journal);
  }

  private void writeFacts(List<Event> events) {
    for (Event e : events) {
      write(new Entry.LedgerFact(e));
    }
  }

  private void write(Entry e) {
    if (!up) {
      throw new IllegalStateException("region " + index + " is down");
    }
    journal.add(e);
    apply(e);
  }

  private void apply(Entry e) {
    if (e instanceof Entry.LedgerFact f) {
      state = state.applied(f.event());
    } else {
      book = book.applied((Entry.TransferHalf) e);
    }
  }

  /** The process dies: only the journal is left. */
  void crash() {
    up = false;
  }

  /**
   * The process restarts: the state and the book are folded from the journal again (the ledger's
   * own recovery, {@code LedgerState.applied} from empty). Returns whether the recovered books
   * equal the ones the crash threw away, which they must: the journal is the commit point.
   */
  boolean recover() {
    LedgerState lost = state;
    AllowanceBook lostBook = book;
    state = LedgerState.empty();
    book = AllowanceBook.EMPTY;
    for (Entry e : journal) {
      apply(e);
    }
    up = true;
    return state.equals(lost) && book.equals(lostBook);
  }
}
