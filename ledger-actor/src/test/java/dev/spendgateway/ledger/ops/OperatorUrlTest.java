package dev.spendgateway.ledger.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An operator tool reading a running gateway's journal is that gateway's client and nothing more.
 * Through H2's AUTO_SERVER URL it was more: when the gateway died (kill -9, a crash) the tool's
 * connection re-opened the journal file itself, read-write, and served it — the restarted gateway
 * then became a client of the operator's {@code tail}, every journal write going through the
 * operator's process until it ended.
 */
class OperatorUrlTest {
  @TempDir Path dir;

  @Test
  void aToolReadingThroughADeadGatewayFailsInsteadOfTakingTheJournalOver() throws Exception {
    Process gateway = startServer();
    try {
      JournalDatabase db = gatewaysJournal();
      String url = db.operatorUrl();
      assertFalse(url.toUpperCase().contains("AUTO_SERVER=TRUE"), url);
      String lockFile = Files.readString(dir.resolve("ledger.lock.db"));
      try (Connection tool = DriverManager.getConnection(url, "sa", "")) {
        assertEquals(1, count(tool), "the tool reads the gateway's journal");
        gateway.toHandle().destroyForcibly();
        gateway.waitFor(30, TimeUnit.SECONDS);
        assertThrows(SQLException.class, () -> count(tool), "the gateway serving it is gone");
      }
      Path lockAfter = dir.resolve("ledger.lock.db");
      assertEquals(
          lockFile,
          Files.exists(lockAfter) ? Files.readString(lockAfter) : "(removed by the tool)",
          "the tool never opened (and served) the journal file itself");
      assertTrue(FileJournalLock.liveHolder(dir).isEmpty());
    } finally {
      gateway.destroyForcibly();
    }
  }

  /**
   * After a crash (kill -9, a power cut) H2's lock file stays beside the journal, naming a server
   * that is gone. A read-only open refuses any lock file ("Database may be already in use"), so
   * verify, replay, export and backup of a crashed gateway's data dir all failed until a gateway
   * had been started on it again — the moment an operator most wants to check and copy it first.
   */
  @Test
  void aCrashedGatewaysDataDirCanBeReadBeforeItRestarts() throws Exception {
    Process gateway = startServer();
    try {
      gateway.toHandle().destroyForcibly();
      gateway.waitFor(30, TimeUnit.SECONDS);
      assertTrue(Files.exists(dir.resolve("ledger.lock.db")), "the crash left H2's lock file");
      JournalDatabase db = gatewaysJournal();
      try (Connection tool = DriverManager.getConnection(db.operatorUrl(), "sa", "")) {
        assertEquals(1, count(tool));
      }
      Path zip = dir.resolve("after-crash.zip");
      db.backup(zip, java.time.Duration.ofSeconds(30));
      assertTrue(Files.size(zip) > 0);
    } finally {
      gateway.destroyForcibly();
    }
  }

  /** The journal as the gateway configures it (AUTO_SERVER on), seen from an operator tool. */
  private JournalDatabase gatewaysJournal() {
    return new JournalDatabase(
        "jdbc:h2:file:" + dir + "/ledger;DATABASE_TO_UPPER=false;AUTO_SERVER=TRUE", "sa", "", dir);
  }

  /** A process serving the journal in {@link #dir}, as a gateway does, once it says READY. */
  private Process startServer() throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    Process gateway =
        new ProcessBuilder(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                JournalServer.class.getName(),
                dir.toString())
            .redirectError(ProcessBuilder.Redirect.DISCARD)
            .start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(gateway.getInputStream(), StandardCharsets.UTF_8));
    assertEquals("READY", out.readLine());
    return gateway;
  }

  private static long count(Connection c) throws SQLException {
    try (Statement s = c.createStatement();
        ResultSet r = s.executeQuery("SELECT COUNT(*) FROM facts")) {
      r.next();
      return r.getLong(1);
    }
  }
}
