package dev.spendgateway.ledger.audit;

/**
 * The first event at which a ledger invariant did not hold.
 *
 * @param sequenceNr the violating event's sequence number
 * @param type the violating event's type
 * @param message what broke, naming the reservation or cap
 */
public record Violation(long sequenceNr, String type, String message) {
  @Override
  public String toString() {
    return "event " + sequenceNr + " (" + type + "): " + message;
  }
}
