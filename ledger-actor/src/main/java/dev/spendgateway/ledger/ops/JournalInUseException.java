package dev.spendgateway.ledger.ops;

import java.nio.file.Path;
import java.util.Optional;

/** Another process holds the journal's lock; the message names it and what to do. */
public final class JournalInUseException extends Exception {
  private final transient Optional<LockHolder> holder;

  public JournalInUseException(Path where, Optional<LockHolder> holder) {
    super(
        "the journal in "
            + where
            + " is in use by another gateway ("
            + holder.map(LockHolder::describe).orElse("holder unknown")
            + "); stop that one first, or give this one "
            + "its own GATEWAY_DATA_DIR — two writers on one journal would each spend the caps");
    this.holder = holder;
  }

  /** A journal in a shared database, its holders described by {@code message} (no lock file). */
  public JournalInUseException(String message) {
    super(message);
    this.holder = Optional.empty();
  }

  public Optional<LockHolder> holder() {
    return holder;
  }
}
