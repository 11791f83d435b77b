package dev.spendgateway.ledger.ops;

/**
 * The journal database cannot be opened (or backed up, restored) now; the message says why in one
 * line.
 */
public class JournalUnavailableException extends Exception {
  public JournalUnavailableException(String message) {
    super(message);
  }
}
