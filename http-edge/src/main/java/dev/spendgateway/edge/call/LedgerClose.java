package dev.spendgateway.edge.call;

import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.Reservation.Status;

/**
 * What the ledger did with a close the gateway asked for, as the access line must tell it: closed
 * as asked, found already closed another way (expired at its worst case), not open, refused, or
 * never answered. Only the first is "settled" as the gateway meant it.
 */
public sealed interface LedgerClose {

  /** The amount the reservation is now closed at, when known; null otherwise. */
  Long settledMicros();

  /** A safe word for the access line when the close did not go as asked; null when it did. */
  String problem();

  /** Settled or voided as asked (a repeat of an answered close gets the same answer). */
  record AsAsked(long micros) implements LedgerClose {
    @Override
    public Long settledMicros() {
      return micros;
    }

    @Override
    public String problem() {
      return null;
    }
  }

  /**
   * It was already closed, not as asked now: most often expired at its worst case because the
   * gateway's close came after the reservation's lifetime.
   */
  record FoundClosed(Status status, long actualMicros) implements LedgerClose {
    @Override
    public Long settledMicros() {
      return actualMicros;
    }

    @Override
    public String problem() {
      return "reservation_" + status.wireName();
    }
  }

  /**
   * The ledger says the reservation is not open (refused, or expired/closed when the ledger says so
   * this way). An expired reservation is held at its worst case, so that is what it is closed at.
   */
  record NotOpen(Status status, long heldMicros) implements LedgerClose {
    @Override
    public Long settledMicros() {
      return status == Status.EXPIRED ? heldMicros : null;
    }

    @Override
    public String problem() {
      return "reservation_not_open:" + status.wireName();
    }
  }

  /**
   * The ledger refused the close itself (unknown id, not the owner, a bad amount): nothing changed.
   */
  record Refused(String word) implements LedgerClose {
    @Override
    public Long settledMicros() {
      return null;
    }

    @Override
    public String problem() {
      return word;
    }
  }

  /** No answer after every attempt: the ledger will expire it at its worst case. */
  record GaveUp(String failureClass) implements LedgerClose {
    @Override
    public Long settledMicros() {
      return null;
    }

    @Override
    public String problem() {
      return "settle_failed";
    }
  }

  /**
   * Reads the ledger's answer to a close that asked for {@code askedStatus} at {@code askedMicros}.
   *
   * @param heldMicros what the reservation holds (what an expiry charges)
   */
  static LedgerClose of(
      GlobalBudget.CloseReply reply, Status askedStatus, long askedMicros, long heldMicros) {
    if (reply instanceof GlobalBudget.Closed closed) {
      return closed.status() == askedStatus && closed.actualMicros() == askedMicros
          ? new AsAsked(askedMicros)
          : new FoundClosed(closed.status(), closed.actualMicros());
    }
    if (reply instanceof GlobalBudget.NotOpen notOpen) {
      return new NotOpen(notOpen.status(), heldMicros);
    }
    if (reply instanceof GlobalBudget.NotFound) {
      return new Refused("reservation_not_found");
    }
    if (reply instanceof GlobalBudget.Forbidden) {
      return new Refused("close_forbidden");
    }
    if (reply instanceof GlobalBudget.Invalid) {
      return new Refused("close_invalid");
    }
    return new Refused("close_conflict");
  }
}
