package dev.spendgateway.ledger.audit;

import dev.spendgateway.ledger.LedgerEvents.Event;

/**
 * One event of the ledger's journal with its position.
 *
 * @param sequenceNr the event's sequence number under persistence id {@code global} (from 1)
 */
public record Journaled(long sequenceNr, Event event) {
  /** The event's simple type name, as exports and messages show it ({@code ReservationMade}). */
  public String type() {
    return event.getClass().getSimpleName();
  }
}
