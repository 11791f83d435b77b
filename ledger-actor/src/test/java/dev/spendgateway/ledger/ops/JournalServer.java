package dev.spendgateway.ledger.ops;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;

/**
 * Run in a child JVM by {@link OperatorUrlTest}: opens the H2 journal in {@code args[0]} as the
 * gateway does (AUTO_SERVER: it serves the file to other processes), writes the gateway's lock file
 * with its own pid, says READY and holds the database until it is killed.
 */
public final class JournalServer {
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    JournalLock.Lease lease = new FileJournalLock(dir).acquire();
    Connection c =
        DriverManager.getConnection(
            "jdbc:h2:file:" + dir + "/ledger;DATABASE_TO_UPPER=false;AUTO_SERVER=TRUE", "sa", "");
    try (Statement s = c.createStatement()) {
      s.execute("CREATE TABLE IF NOT EXISTS facts (n INT)");
      s.execute("INSERT INTO facts VALUES (1)");
      s.execute("CHECKPOINT SYNC"); // on disk, as the gateway flushes each write
    }
    System.out.println("READY");
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE); // time is the point: hold the lock until the test kills us
    lease.close();
  }
}
