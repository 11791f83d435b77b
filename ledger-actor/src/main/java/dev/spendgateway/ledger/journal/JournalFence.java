package dev.spendgateway.ledger.journal;

import java.sql.SQLException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The journal's fence against a second writer. Two ledgers can run at once for a moment (a
 * singleton on the losing side of a partition, or paused by a long GC, while its successor has
 * started): both recovered to the same sequence number, both would write the next one. The
 * journal's primary key on (persistence id, sequence number) lets only the first insert through;
 * the second fails with a unique violation. That failure means "this ledger's view of the journal
 * is stale": nothing it decides from now on may be written or answered. The DAO closes the fence
 * ({@link #close}) and refuses every further write at once; the ledger's front ({@code
 * ReservationBatcher}) hears of it ({@link #onClosed}), stops its {@code GlobalBudget}, answers its
 * waiting callers "busy, retry" (the edge's 503 with {@code retry-after}) and only later recovers a
 * new one from the journal, which then includes the other writer's events, and reopens.
 *
 * <p>Part of the ledger's {@link JournalWriter}, which closes it on such a write.
 */
public final class JournalFence {
  /** SQLSTATE of a unique violation, the same on PostgreSQL and H2. */
  static final String UNIQUE_VIOLATION = "23505";

  private final CopyOnWriteArrayList<Consumer<String>> listeners = new CopyOnWriteArrayList<>();
  private volatile String closedBecause; // null while writes may go through

  /** Whether a write found another writer ahead and no recovery has reopened the fence since. */
  public boolean isClosed() {
    return closedBecause != null;
  }

  /** Called with the reason whenever the fence closes. */
  public void onClosed(Consumer<String> listener) {
    listeners.add(listener);
  }

  public void removeListener(Consumer<String> listener) {
    listeners.remove(listener);
  }

  /** A recovered ledger, whose state includes everything in the journal, may write again. */
  public void reopen() {
    closedBecause = null;
  }

  void close(String why) {
    closedBecause = why;
    listeners.forEach(listener -> listener.accept(why));
  }

  /**
   * Whether {@code failure} is the journal's key refusing a sequence number another writer took.
   */
  static boolean isOtherWriter(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof SQLException sql) {
        for (SQLException e = sql; e != null; e = e.getNextException()) {
          if (UNIQUE_VIOLATION.equals(e.getSQLState())) {
            return true;
          }
        }
      }
    }
    return false;
  }
}
