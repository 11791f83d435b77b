package dev.spendgateway.ledger.ops;

import com.typesafe.config.Config;
import java.nio.file.Path;

/**
 * One writer per journal: the gateway holds this for as long as it runs, and a second gateway on
 * the same journal refuses to start, naming the holder. Two ledger writers on one journal would
 * each admit against its own books, so a cap could be spent twice.
 *
 * <p>Only the gateway takes it; operator tools ({@code gateway-admin}) read the journal and never
 * do (they may look at who holds it, see {@link FileJournalLock#liveHolder}).
 *
 * <p>The H2 file journal is locked with a file next to it ({@link FileJournalLock}); a PostgreSQL
 * journal with an advisory lock in its database, which the nodes of one cluster share ({@code
 * PostgresJournalLock}).
 */
public interface JournalLock {
  /** The configuration key of the journal's JDBC URL. */
  String URL_KEY = "pekko-persistence-jdbc.shared-databases.slick.db.url";

  /**
   * Takes the lock, or throws naming who holds it. The lease ends with the process at the latest.
   */
  Lease acquire() throws JournalInUseException;

  /** A held lock. */
  interface Lease extends AutoCloseable {
    /** Gives the lock up (a later gateway may take it). Idempotent. */
    @Override
    void close();
  }

  /** The lock for the journal {@code config} names. */
  static JournalLock forJournal(Config config) {
    String url = config.hasPath(URL_KEY) ? config.getString(URL_KEY) : "";
    if (url.startsWith("jdbc:h2:file:") && config.hasPath("gateway.data-dir")) {
      return new FileJournalLock(Path.of(config.getString("gateway.data-dir")));
    }
    if (url.startsWith("jdbc:postgresql:")) {
      // An advisory lock in the journal's database: exclusive for a single gateway, shared by the
      // nodes of a cluster (their one ledger is the cluster singleton).
      return dev.spendgateway.ledger.cluster.PostgresJournalLock.of(config);
    }
    // Another database (the in-memory H2 of tests): one process only, nothing to share.
    return () -> () -> {};
  }
}
