package dev.spendgateway.ledger.audit;

/**
 * The first event at which a ledger invariant did not hold.
 *
 * @param sequenceNr the sequence number of the journal row holding the violating event (a row may
 *     hold several events: a group commit)
 * @param type the violating event's type
 * @param message what broke, naming the reservation or cap
 */
public record Violation(long sequenceNr, String type, String message) {
  @Override
  public String toString() {
    // A sequence number is a journal row, and one row holds a group commit of several events.
    return "journal row " + sequenceNr + " (" + type + "): " + message;
  }
}
