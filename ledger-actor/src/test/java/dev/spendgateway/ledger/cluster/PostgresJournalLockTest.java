package dev.spendgateway.ledger.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.Eventually;
import dev.spendgateway.ledger.journal.PgDatabase;
import dev.spendgateway.ledger.ops.JournalInUseException;
import dev.spendgateway.ledger.ops.JournalLock;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * One ledger per PostgreSQL journal, checked at start: a single gateway holds the journal alone,
 * the nodes of a cluster share it, and any mix of the two is refused with a message naming the
 * holder. A holder's lock ends with its session, also when the process dies without letting go.
 */
class PostgresJournalLockTest {
  private PgDatabase db;

  @BeforeEach
  void createDatabase() throws Exception {
    db = PgDatabase.create();
  }

  @AfterEach
  void dropDatabase() throws Exception {
    db.close();
  }

  private JournalLock single() {
    return new PostgresJournalLock(db.url, db.user(), "", false);
  }

  private JournalLock clusterNode() {
    return new PostgresJournalLock(db.url, db.user(), "", true);
  }

  @Test
  void aSecondSingleGatewayIsRefusedNamingTheFirstUntilItLetsGo() throws Exception {
    try (JournalLock.Lease first = single().acquire()) {
      JournalInUseException refused =
          assertThrows(JournalInUseException.class, () -> single().acquire());
      String pid = Long.toString(ProcessHandle.current().pid());
      assertTrue(
          refused
              .getMessage()
              .contains("in use by another gateway (spend-gateway single pid " + pid),
          refused.getMessage());
      first.close();
      single().acquire().close();
    }
  }

  @Test
  void theNodesOfAClusterShareTheJournalAndASingleGatewayCannotJoinThem() throws Exception {
    try (JournalLock.Lease one = clusterNode().acquire();
        JournalLock.Lease two = clusterNode().acquire()) {
      JournalInUseException refused =
          assertThrows(JournalInUseException.class, () -> single().acquire());
      assertTrue(
          refused.getMessage().contains("in use by a cluster (spend-gateway cluster node pid"),
          refused.getMessage());
      assertTrue(refused.getMessage().contains("GATEWAY_CLUSTER_PORT"), refused.getMessage());
    }
    single().acquire().close();
  }

  @Test
  void aClusterNodeIsRefusedWhileASingleGatewayHoldsTheJournal() throws Exception {
    try (JournalLock.Lease alone = single().acquire()) {
      JournalInUseException refused =
          assertThrows(JournalInUseException.class, () -> clusterNode().acquire());
      assertTrue(
          refused.getMessage().contains("in use by a single gateway (spend-gateway single pid"),
          refused.getMessage());
    }
    clusterNode().acquire().close();
  }

  @Test
  void aHolderWhoseSessionEndsReleasesTheJournalThoughItNeverLetGo() throws Exception {
    JournalLock.Lease killed = single().acquire();
    // What PostgreSQL does when the holding process is killed: the session ends, its locks with it.
    try (Connection c = db.connect();
        Statement s = c.createStatement()) {
      s.execute(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
              + "WHERE datname = current_database() AND application_name LIKE 'spend-gateway single%'");
    }
    Eventually.until(
        "the ended session's lock is released",
        Duration.ofSeconds(10),
        () -> {
          try {
            single().acquire().close();
            return true;
          } catch (JournalInUseException stillEnding) {
            return false;
          }
        });
    killed.close(); // closing a lease whose session is gone is harmless
  }

  /**
   * A lease let go must free the journal before close returns: PostgreSQL ends a closed session's
   * backend, and its locks, a moment after the client has hung up, so a gateway restarted in
   * process (or a take-over on the same machine) that tries at once could find its own old lock
   * still held. Looked at from a session opened beforehand, so no connect time hides that moment.
   */
  @Test
  void aLeaseLetGoFreesTheJournalBeforeCloseReturns() throws Exception {
    try (Connection observer = db.connect();
        var held =
            observer.prepareStatement(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
                    + " AND objsubid = 1 AND database = (SELECT oid FROM pg_database"
                    + " WHERE datname = current_database())")) {
      for (int round = 0; round < 40; round++) {
        JournalLock lock = round % 2 == 0 ? single() : clusterNode();
        lock.acquire().close();
        try (var rows = held.executeQuery()) {
          rows.next();
          assertEquals(0, rows.getLong(1), "advisory lock still held after close, round " + round);
        }
      }
    }
  }

  /**
   * Letting go runs in the gateway's shutdown: a database that stopped answering (a cut network)
   * must not hold the stop up. The lock's connection goes through a relay that then stops
   * forwarding anything, in either direction.
   */
  @Test
  void aLeaseLetGoWhileTheDatabaseIsSilentStillReturns() throws Exception {
    try (SilentableRelay relay = new SilentableRelay(db.url)) {
      JournalLock.Lease lease =
          new PostgresJournalLock(relay.url(), db.user(), "", false).acquire();
      relay.goSilent();
      long started = System.nanoTime();
      CompletableFuture.runAsync(lease::close).get(15, TimeUnit.SECONDS);
      long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
      assertTrue(tookMs < 10_000, "letting go took " + tookMs + " ms");
    }
  }

  /** A TCP relay to the database's server that can stop forwarding, as a cut network does. */
  private static final class SilentableRelay implements AutoCloseable {
    private final ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    private final String target;
    private final URI upstream;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile boolean silent;

    SilentableRelay(String jdbcUrl) throws IOException {
      target = jdbcUrl.substring(jdbcUrl.lastIndexOf('/') + 1);
      upstream = URI.create(jdbcUrl.substring("jdbc:".length()));
      Thread accepting = new Thread(this::accept, "relay-accept");
      accepting.setDaemon(true);
      accepting.start();
    }

    String url() {
      return "jdbc:postgresql://127.0.0.1:" + server.getLocalPort() + "/" + target;
    }

    void goSilent() {
      silent = true;
    }

    private void accept() {
      try {
        while (true) {
          Socket caller = server.accept();
          Socket database = new Socket(upstream.getHost(), upstream.getPort());
          sockets.add(caller);
          sockets.add(database);
          pump(caller, database);
          pump(database, caller);
        }
      } catch (IOException closed) {
        // The relay was closed.
      }
    }

    private void pump(Socket from, Socket to) {
      Thread pumping =
          new Thread(
              () -> {
                byte[] buffer = new byte[8192];
                try (var in = from.getInputStream();
                    var out = to.getOutputStream()) {
                  for (int n; (n = in.read(buffer)) >= 0; ) {
                    if (!silent) {
                      out.write(buffer, 0, n);
                    }
                  }
                } catch (IOException closed) {
                  // Either side hung up.
                }
              },
              "relay-pump");
      pumping.setDaemon(true);
      pumping.start();
    }

    @Override
    public void close() throws IOException {
      server.close();
      for (Socket socket : sockets) {
        socket.close();
      }
    }
  }
}
