package dev.spendgateway.ledger.journal;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.UUID;

/**
 * A PostgreSQL database of its own for one test, dropped on close, on the server the tests use
 * ({@code -Dtest.postgres.url}, default the local one on 127.0.0.1:5432, user postgres; bin/test
 * starts it). Random names keep runs, and tests in one run, from ever seeing each other's journal.
 */
public final class PgDatabase implements AutoCloseable {
  /** The server's maintenance database, where test databases are created and dropped. */
  static final String SERVER =
      System.getProperty("test.postgres.url", "jdbc:postgresql://127.0.0.1:5432/postgres");

  static final String USER = System.getProperty("test.postgres.user", "postgres");

  public final String name;
  public final String url;

  private PgDatabase(String name) {
    this.name = name;
    this.url = SERVER.substring(0, SERVER.lastIndexOf('/') + 1) + name;
  }

  public static PgDatabase create() throws SQLException {
    PgDatabase db =
        new PgDatabase(
            "ledger_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16));
    try (Connection c = DriverManager.getConnection(SERVER, USER, "");
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + db.name);
    }
    return db;
  }

  public String user() {
    return USER;
  }

  public Connection connect() throws SQLException {
    return DriverManager.getConnection(url, USER, "");
  }

  /** A single number from {@code sql} (e.g. a count). */
  public long number(String sql) throws SQLException {
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  @Override
  public void close() throws SQLException {
    try (Connection c = DriverManager.getConnection(SERVER, USER, "");
        Statement s = c.createStatement()) {
      s.execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }
  }
}
