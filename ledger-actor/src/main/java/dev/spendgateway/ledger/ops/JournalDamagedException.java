package dev.spendgateway.ledger.ops;

/**
 * The journal file is there but cannot be read as a database (cut short, overwritten): trying again
 * does not help, and opening it for writing would put a new, empty database in its place.
 */
public final class JournalDamagedException extends JournalUnavailableException {
  public JournalDamagedException(String message) {
    super(message);
  }
}
