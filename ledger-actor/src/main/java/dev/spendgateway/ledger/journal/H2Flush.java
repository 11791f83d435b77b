package dev.spendgateway.ledger.journal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.h2.engine.Session;
import org.h2.engine.SessionLocal;
import org.h2.jdbc.JdbcConnection;
import org.h2.mvstore.FileStore;
import org.h2.mvstore.MVStore;
import org.h2.mvstore.db.Store;

/**
 * Makes everything committed so far in an embedded H2 (MVStore) database durable: the committed
 * changes are stored as one chunk in the file, and the file is forced once.
 *
 * <p>Why not {@code CHECKPOINT SYNC}: it does the same store and force, but it runs them inside
 * {@code Database.sync()} (synchronized on the database, through the SQL layer), and it does not
 * wait for a chunk that H2's background writer ({@code WRITE_DELAY}) has taken but not yet written:
 * when the background writer has just collected the batch's pages, the checkpoint finds nothing
 * unsaved and forces the file while that chunk is still queued in H2's serialization or save
 * executor — the force then does not cover the batch. Here the store goes straight to the MVStore
 * (the commit writes synchronously), then waits for those executors to drain, then forces.
 *
 * <p>The force is H2's own ({@code FileStore.sync()}, {@code FileChannel.force(true)}) on H2's own
 * channel. A separately opened channel forced with {@code force(false)} (fdatasync) measured no
 * cheaper on this project's disk (docs/BENCHMARKS.md), and closing a second channel on the file
 * would release H2's file lock (POSIX locks belong to the process and go with any close).
 *
 * <p>A session that is not local (a client of another process's {@code AUTO_SERVER}) or a database
 * without a file store falls back to {@code CHECKPOINT SYNC}.
 */
final class H2Flush {
  /** H2's statement for "store what is committed and force the file to disk". */
  static final String CHECKPOINT_SYNC = "CHECKPOINT SYNC";

  private H2Flush() {}

  /**
   * Stores and forces everything committed before this call, on {@code connection}'s database.
   *
   * @throws SQLException when the store or the force failed (nothing then counts as durable)
   */
  static void storeAndForce(Connection connection) throws SQLException {
    MVStore store = fileBackedStoreOf(connection);
    if (store == null) {
      try (Statement statement = connection.createStatement()) {
        statement.execute(CHECKPOINT_SYNC);
      }
      return;
    }
    try {
      FileStore<?> file = store.getFileStore();
      store.commit(); // writes the unsaved chunk on this thread (synchronous write)
      file.executeFileStoreOperation(() -> {}); // waits for chunks the background writer queued
      file.sync();
    } catch (RuntimeException e) {
      throw new SQLException("H2 journal flush failed: " + e.getMessage(), e);
    }
  }

  /** The writable file-backed store behind an embedded connection, or null (remote, in-memory). */
  private static MVStore fileBackedStoreOf(Connection connection) throws SQLException {
    if (!connection.isWrapperFor(JdbcConnection.class)) {
      return null;
    }
    Session session = connection.unwrap(JdbcConnection.class).getSession();
    if (!(session instanceof SessionLocal local)) {
      return null;
    }
    Store store = local.getDatabase().getStore();
    if (store == null || !store.getMvStore().isPersistent()) {
      return null;
    }
    FileStore<?> file = store.getMvStore().getFileStore();
    return file == null || file.isReadOnly() ? null : store.getMvStore();
  }
}
