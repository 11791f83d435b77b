package dev.spendgateway.ledger.cluster;

import com.typesafe.config.Config;
import dev.spendgateway.ledger.ops.JournalInUseException;
import dev.spendgateway.ledger.ops.JournalLock;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The journal lock of a PostgreSQL journal: a PostgreSQL advisory lock in the journal's database,
 * held on a connection of its own for as long as the gateway runs. A single gateway (no cluster)
 * takes it exclusively; each cluster node takes it shared. So the nodes of one cluster share the
 * journal, while a second single gateway, a single gateway next to a running cluster, or a cluster
 * node next to a running single gateway is refused at start, naming who holds the journal: those
 * would be two ledgers, each admitting against its own books.
 *
 * <p>The lock ends with its connection: when the process exits or is killed, PostgreSQL drops the
 * session and the lock with it, so nothing stale is ever left to clean up. It is a guard at start;
 * while running, the journal's key on (persistence id, sequence number) fences any second writer at
 * its first write, whether or not the lock is still held (e.g. after the database restarted).
 */
public final class PostgresJournalLock implements JournalLock {
  /**
   * The advisory lock's key, the same for every gateway (advisory locks belong to one database, so
   * this names "the journal in this database"). The bytes spell "spendgw".
   */
  static final long KEY = 0x7370656e646777L;

  /** Prefix of the lock connection's application name, which is how the holders are described. */
  static final String APPLICATION = "spend-gateway";

  private static final int CONNECT_TRIES = 3;
  private static final long CONNECT_PAUSE_MS = 2000;

  /** How long a lease let go waits for the database to confirm the unlock before just closing. */
  private static final int UNLOCK_TIMEOUT_MS = 2000;

  private final String url;
  private final Properties login;
  private final boolean clusterNode;

  /**
   * @param url the journal's JDBC URL ({@code jdbc:postgresql://…})
   * @param user the database user; empty for the driver's default
   * @param password its password; empty for none
   * @param clusterNode whether this gateway is a cluster node (shared lock) or alone (exclusive)
   */
  public PostgresJournalLock(String url, String user, String password, boolean clusterNode) {
    this.url = url;
    this.clusterNode = clusterNode;
    this.login = new Properties();
    if (!user.isEmpty()) {
      login.setProperty("user", user);
    }
    if (!password.isEmpty()) {
      login.setProperty("password", password);
    }
    // What a refused gateway prints about this one (PostgreSQL keeps up to 63 bytes of it).
    login.setProperty(
        "ApplicationName",
        APPLICATION
            + (clusterNode ? " cluster node" : " single")
            + " pid "
            + ProcessHandle.current().pid()
            + " on "
            + localHost());
  }

  /** The lock for {@code config} (as {@link ClusterMode#configure} returned it). */
  public static PostgresJournalLock of(Config config) {
    String db = "pekko-persistence-jdbc.shared-databases.slick.db.";
    return new PostgresJournalLock(
        config.getString(db + "url"),
        config.hasPath(db + "user") ? config.getString(db + "user") : "",
        config.hasPath(db + "password") ? config.getString(db + "password") : "",
        ClusterMode.isClusterNode(config));
  }

  @Override
  public Lease acquire() throws JournalInUseException {
    Connection connection = connect();
    try {
      // PostgreSQL notices a vanished client (its host crashed, its network cut) by TCP keepalive,
      // by default only after about two hours; until then the session, and a single gateway's
      // exclusive lock with it, would stay. Probing after 30 s idle, every 10 s, 3 misses: the lock
      // of a gateway whose host is gone is released within about a minute.
      try (var s = connection.createStatement()) {
        s.execute("SET tcp_keepalives_idle = 30");
        s.execute("SET tcp_keepalives_interval = 10");
        s.execute("SET tcp_keepalives_count = 3");
      }
      if (!tryLock(connection)) {
        String holders = describeHolders(connection);
        connection.close();
        throw new JournalInUseException(refusal(holders));
      }
    } catch (SQLException e) {
      closeQuietly(connection);
      throw new IllegalStateException(
          "could not lock the journal in PostgreSQL: " + e.getMessage(), e);
    }
    AtomicBoolean released = new AtomicBoolean();
    return () -> {
      if (released.compareAndSet(false, true)) {
        unlockAndClose(connection);
      }
    };
  }

  /**
   * A connection of the lock's own, tried {@link #CONNECT_TRIES} times {@link #CONNECT_PAUSE_MS} ms
   * apart: a database that is restarting must not stop a gateway that would work a moment later.
   */
  private Connection connect() {
    SQLException last = null;
    for (int attempt = 1; attempt <= CONNECT_TRIES; attempt++) {
      try {
        return DriverManager.getConnection(url, login);
      } catch (SQLException e) {
        last = e;
        if (attempt < CONNECT_TRIES) {
          try {
            Thread.sleep(CONNECT_PAUSE_MS);
          } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            break;
          }
        }
      }
    }
    throw new IllegalStateException(
        "cannot reach the journal's PostgreSQL at "
            + url
            + " to lock it ("
            + (last == null ? "interrupted" : last.getMessage())
            + ", tried "
            + CONNECT_TRIES
            + " times)",
        last);
  }

  private boolean tryLock(Connection connection) throws SQLException {
    String sql =
        clusterNode ? "SELECT pg_try_advisory_lock_shared(?)" : "SELECT pg_try_advisory_lock(?)";
    try (PreparedStatement s = connection.prepareStatement(sql)) {
      s.setLong(1, KEY);
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return rs.getBoolean(1);
      }
    }
  }

  /** Who holds the lock now: each holder's application name and since when its session runs. */
  private static String describeHolders(Connection connection) throws SQLException {
    // A bigint advisory key shows in pg_locks as classid (high 32 bits) and objid (low 32 bits).
    String sql =
        "SELECT a.application_name, a.backend_start FROM pg_locks l "
            + "JOIN pg_stat_activity a ON a.pid = l.pid "
            + "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
            + "AND l.classid = ? AND l.objid = ? "
            + "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            + "ORDER BY a.backend_start";
    List<String> holders = new ArrayList<>();
    try (PreparedStatement s = connection.prepareStatement(sql)) {
      s.setLong(1, KEY >>> 32);
      s.setLong(2, KEY & 0xffffffffL);
      try (ResultSet rs = s.executeQuery()) {
        while (rs.next()) {
          // Another role's sessions show no details: then at least say that one exists.
          String name =
              rs.getString(1) == null || rs.getString(1).isEmpty() ? "a session" : rs.getString(1);
          holders.add(
              rs.getTimestamp(2) == null
                  ? name
                  : name + ", since " + rs.getTimestamp(2).toInstant());
        }
      }
    }
    return holders.isEmpty() ? "holder unknown" : String.join("; ", holders);
  }

  private String refusal(String holders) {
    String where = "the journal in " + url;
    if (clusterNode) {
      return where
          + " is in use by a single gateway ("
          + holders
          + "); stop it before starting "
          + "cluster nodes on this journal — a cluster's ledger next to it would be a second writer";
    }
    if (holders.contains(" cluster node ")) {
      return where
          + " is in use by a cluster ("
          + holders
          + "); start this gateway as one of its "
          + "nodes (GATEWAY_CLUSTER_PORT, GATEWAY_CLUSTER_SEEDS) or give it a database of its own";
    }
    return where
        + " is in use by another gateway ("
        + holders
        + "); stop that one first, or give "
        + "this one a database of its own — two writers on one journal would each spend the caps. "
        + "A holder whose host is gone lets go within about a minute";
  }

  /**
   * Lets go of the lock before closing its connection. Closing alone would release it too, but only
   * once PostgreSQL has ended the session's backend, a moment after the client hung up: a gateway
   * that takes the journal again at once (a restart in the same process, a test) could find its own
   * old lock still held and be refused. The unlock returns once the lock is free.
   */
  private static void unlockAndClose(Connection connection) {
    try {
      // Bounded: this runs in the gateway's shutdown, which must not hang on a database that
      // stopped answering (a cut network); the lock then goes with the session as before.
      connection.setNetworkTimeout(Runnable::run, UNLOCK_TIMEOUT_MS);
      try (var s = connection.createStatement()) {
        s.execute("SELECT pg_advisory_unlock_all()");
      }
    } catch (SQLException sessionGoneOrSilent) {
      // The session already ended (database restarted, backend terminated), or the database did
      // not answer in time: closing below ends the session from this side.
    }
    closeQuietly(connection);
  }

  private static void closeQuietly(Connection connection) {
    try {
      connection.close();
    } catch (SQLException ignored) {
      // The session is gone either way, and its locks with it.
    }
  }

  private static String localHost() {
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      return System.getenv().getOrDefault("HOSTNAME", "localhost");
    }
  }
}
