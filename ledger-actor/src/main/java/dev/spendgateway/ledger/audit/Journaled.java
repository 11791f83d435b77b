package dev.spendgateway.ledger.audit;

import dev.spendgateway.ledger.LedgerEvents.Event;

/**
 * One fact of the ledger's journal with its position.
 *
 * <p>A journal row holds one fact or, written by a group commit, several ({@link
 * dev.spendgateway.ledger.LedgerEvents.GroupCommit}); the facts of one row share its sequence
 * number, and only the last of them ends the row. A snapshot taken at a sequence number includes
 * the whole row, so the books equal it only after that row's last fact.
 *
 * @param sequenceNr the sequence number, under persistence id {@code global} (from 1), of the
 *     journal row holding the fact
 * @param endsRow whether this is the last fact of its row
 */
public record Journaled(long sequenceNr, Event event, boolean endsRow) {
  /** A fact alone in its row (as every fact was before group commits were one row). */
  public Journaled(long sequenceNr, Event event) {
    this(sequenceNr, event, true);
  }

  /** The event's simple type name, as exports and messages show it ({@code ReservationMade}). */
  public String type() {
    return event.getClass().getSimpleName();
  }
}
