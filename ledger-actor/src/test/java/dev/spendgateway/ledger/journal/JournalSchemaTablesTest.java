package dev.spendgateway.ledger.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import dev.spendgateway.ledger.H2Ledger;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol;
import dev.spendgateway.ledger.PgLedger;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.access.Lane;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import slick.jdbc.H2Profile$;
import slick.jdbc.PostgresProfile$;

/**
 * The journal DDL the module ships, on real databases (an H2 file, a PostgreSQL database of the
 * test's own): the same tables, columns, keys and indexes as the plugin's own script for its
 * current layout; creating twice changes nothing; a ledger persists and recovers on the tables; a
 * journal whose tables exist already (made by the plugin's script, as older gateways did, or
 * provisioned for a role that may not create tables) is left alone, and one with a table missing is
 * completed.
 */
class JournalSchemaTablesTest {
  private static final long CENT = 10_000;
  @TempDir Path dir;

  // ---- H2 -----------------------------------------------------------------------------------

  @Test
  void h2TablesAreThePluginsCurrentLayout() throws Exception {
    try (Connection shipped = h2(dir.resolve("shipped"));
        Connection plugin = h2(dir.resolve("plugin"))) {
      JournalSchema.createIfMissing(shipped, JournalSchema.createScript(H2Profile$.MODULE$));
      applyLeniently(plugin, pluginScript("h2"));
      assertEquals(layout(plugin), layout(shipped));
      assertLayoutRead(layout(shipped));
    }
  }

  @Test
  void h2SchemaTwiceThenALedgerPersistsAndRecovers() throws Exception {
    Path data = dir.resolve("data");
    createTwice(H2Ledger.config(data, Map.of()));
    try (Connection c = h2(data)) {
      assertEquals(Set.of(), JournalSchema.missingTables(c));
    }
    try (H2Ledger ledger = H2Ledger.start(data, Map.of())) {
      reserve(ledger.client, "r-1");
    }
    try (H2Ledger again = H2Ledger.start(data, Map.of())) {
      assertRecovered(again.client, "r-1");
    }
  }

  @Test
  void anH2JournalMadeByThePluginsScriptIsLeftAloneAndAMissingTableIsAdded() throws Exception {
    Path data = dir.resolve("old");
    try (Connection c = h2(data)) {
      applyLeniently(c, pluginScript("h2"));
    }
    try (H2Ledger ledger = H2Ledger.start(data, Map.of())) {
      reserve(ledger.client, "r-old");
    }
    try (Connection c = h2(data);
        Statement s = c.createStatement()) {
      String before = layout(c);
      JournalSchema.createIfMissing(c, JournalSchema.createScript(H2Profile$.MODULE$));
      assertEquals(before, layout(c), "all tables there: nothing is run");
      s.execute("DROP TABLE PUBLIC.\"event_tag\"");
      assertEquals(Set.of("event_tag"), JournalSchema.missingTables(c));
      JournalSchema.createIfMissing(c, JournalSchema.createScript(H2Profile$.MODULE$));
      assertEquals(before, layout(c), "the missing table is back, the others untouched");
    }
    try (H2Ledger again = H2Ledger.start(data, Map.of())) {
      assertRecovered(again.client, "r-old");
    }
  }

  // ---- PostgreSQL ---------------------------------------------------------------------------

  @Test
  void postgresTablesAreThePluginsCurrentLayout() throws Exception {
    try (PgDatabase shippedDb = PgDatabase.create();
        PgDatabase pluginDb = PgDatabase.create();
        Connection shipped = shippedDb.connect();
        Connection plugin = pluginDb.connect()) {
      JournalSchema.createIfMissing(shipped, JournalSchema.createScript(PostgresProfile$.MODULE$));
      applyLeniently(plugin, pluginScript("postgres"));
      assertEquals(layout(plugin), layout(shipped));
      assertLayoutRead(layout(shipped));
    }
  }

  @Test
  void postgresSchemaTwiceThenALedgerPersistsAndRecovers() throws Exception {
    try (PgDatabase db = PgDatabase.create()) {
      createTwice(PgLedger.config(db.url, Map.of()));
      try (Connection c = db.connect()) {
        assertEquals(Set.of(), JournalSchema.missingTables(c));
      }
      try (PgLedger ledger = PgLedger.start(db.url, Map.of(), "schema-pg")) {
        reserve(ledger.client, "r-1");
      }
      try (PgLedger again = PgLedger.start(db.url, Map.of(), "schema-pg-again")) {
        assertRecovered(again.client, "r-1");
      }
    }
  }

  @Test
  void aPostgresJournalMadeByThePluginsScriptIsLeftAlone() throws Exception {
    try (PgDatabase db = PgDatabase.create()) {
      try (Connection c = db.connect()) {
        applyLeniently(c, pluginScript("postgres"));
      }
      try (PgLedger ledger = PgLedger.start(db.url, Map.of(), "old-pg")) {
        reserve(ledger.client, "r-old");
      }
      try (PgLedger again = PgLedger.start(db.url, Map.of(), "old-pg-again")) {
        assertRecovered(again.client, "r-old");
      }
      assertEquals(1, db.number("SELECT count(*) FROM event_journal"));
    }
  }

  /**
   * A journal whose tables someone else provisioned, used by a role that may not create tables
   * (PostgreSQL 15's default for the public schema): the schema step sees the tables and runs no
   * DDL, so the ledger starts, writes and recovers.
   */
  @Test
  void aRoleThatMayNotCreateTablesStartsOnProvisionedTables() throws Exception {
    String role = "ledger_writer_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    try (PgDatabase db = PgDatabase.create()) {
      try (Connection c = db.connect();
          Statement s = c.createStatement()) {
        JournalSchema.createIfMissing(c, JournalSchema.createScript(PostgresProfile$.MODULE$));
        s.execute("CREATE ROLE " + role + " LOGIN");
        s.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
        s.execute("GRANT USAGE ON SCHEMA public TO " + role);
        s.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO " + role);
        s.execute("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO " + role);
      }
      try {
        try (Connection c = DriverManager.getConnection(db.url, role, "");
            Statement s = c.createStatement()) {
          assertThrows(
              SQLException.class,
              () -> s.execute("CREATE TABLE probe (i INT)"),
              "the role may not create tables");
        }
        Map<String, Object> asRole = Map.of("gateway.journal.user", role);
        try (PgLedger ledger = PgLedger.start(db.url, asRole, "provisioned-pg")) {
          reserve(ledger.client, "r-1");
        }
        try (PgLedger again = PgLedger.start(db.url, asRole, "provisioned-pg-again")) {
          assertRecovered(again.client, "r-1");
        }
      } finally {
        db.close();
        try (Connection c = DriverManager.getConnection(PgDatabase.SERVER, PgDatabase.USER, "");
            Statement s = c.createStatement()) {
          s.execute("DROP ROLE IF EXISTS " + role);
        }
      }
    }
  }

  // ---- helpers ------------------------------------------------------------------------------

  /** The comparison means something: columns, keys and the ordering index were all read. */
  private static void assertLayoutRead(String layout) {
    for (String part :
        new String[] {
          "column event_journal.ordering ",
          "pk snapshot 2 sequence_number",
          "fk fk_event_journal event_tag.event_id -> event_journal.ordering",
          "unique event_journal.ordering #1 event_journal_ordering_idx"
        }) {
      assertTrue(layout.contains(part), part + " in " + layout);
    }
  }

  /** Runs the schema step twice in an actor system on {@code config}, as two starts would. */
  private static void createTwice(Config config) throws Exception {
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "schema", config);
    try {
      JournalSchema.createIfNotExists(system).toCompletableFuture().get(30, TimeUnit.SECONDS);
      JournalSchema.createIfNotExists(system).toCompletableFuture().get(30, TimeUnit.SECONDS);
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private static void reserve(LedgerClient client, String id) throws Exception {
    assertInstanceOf(
        LedgerProtocol.Reserved.class,
        client
            .reserve(new ReserveRequest(id, Lane.FREE, null, CENT, 0, 0))
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS));
  }

  private static void assertRecovered(LedgerClient client, String id) throws Exception {
    assertInstanceOf(
        LedgerProtocol.ReservationView.class,
        client.get(id).toCompletableFuture().get(30, TimeUnit.SECONDS));
    assertEquals(
        1,
        client
            .usage(Optional.empty())
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS)
            .openReservations());
  }

  /** The ledger's H2 file database in {@code dataDir}, opened the way the ledger's URL does. */
  private static Connection h2(Path dataDir) throws SQLException {
    return DriverManager.getConnection(
        "jdbc:h2:file:"
            + dataDir.toAbsolutePath()
            + "/ledger;DATABASE_TO_UPPER=false;AUTO_SERVER=TRUE",
        "sa",
        "");
  }

  /** The plugin's own create script for its current layout (in its jar). */
  private static String pluginScript(String database) throws IOException {
    String resource = "schema/" + database + "/" + database + "-create-schema.sql";
    ClassLoader loader = JournalSchemaTablesTest.class.getClassLoader();
    try (InputStream in = loader.getResourceAsStream(resource)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** Each statement tried, failures ignored: how the plugin's own tool applies its scripts. */
  private static void applyLeniently(Connection c, String script) throws SQLException {
    try (Statement s = c.createStatement()) {
      for (String sql : JournalSchema.statements(script)) {
        try {
          s.execute(sql);
        } catch (SQLException ignored) {
          // e.g. an index created CONCURRENTLY, or one that exists already
        }
      }
    }
  }

  /**
   * The journal tables' columns (type, size, nullability, default), primary keys, foreign keys and
   * unique indexes, one sorted line each, for comparing two databases of the same kind.
   */
  private static String layout(Connection c) throws SQLException {
    DatabaseMetaData meta = c.getMetaData();
    Set<String> lines = new TreeSet<>();
    for (String table : JournalSchema.TABLES) {
      String schema = null;
      try (ResultSet rs = meta.getTables(null, null, table, new String[] {"TABLE"})) {
        while (rs.next()) {
          if (table.equals(rs.getString("TABLE_NAME"))) {
            schema = rs.getString("TABLE_SCHEM");
          }
        }
      }
      if (schema == null) {
        lines.add("missing " + table);
        continue;
      }
      try (ResultSet rs = meta.getColumns(null, schema, table, null)) {
        while (rs.next()) {
          if (table.equals(rs.getString("TABLE_NAME"))) {
            lines.add(
                "column "
                    + table
                    + "."
                    + rs.getString("COLUMN_NAME")
                    + " "
                    + rs.getString("TYPE_NAME")
                    + "("
                    + rs.getInt("COLUMN_SIZE")
                    + ") "
                    + rs.getString("IS_NULLABLE")
                    + " default="
                    + rs.getString("COLUMN_DEF")
                    + " auto="
                    + rs.getString("IS_AUTOINCREMENT"));
          }
        }
      }
      try (ResultSet rs = meta.getPrimaryKeys(null, schema, table)) {
        while (rs.next()) {
          lines.add(
              "pk " + table + " " + rs.getShort("KEY_SEQ") + " " + rs.getString("COLUMN_NAME"));
        }
      }
      try (ResultSet rs = meta.getImportedKeys(null, schema, table)) {
        while (rs.next()) {
          lines.add(
              "fk "
                  + rs.getString("FK_NAME")
                  + " "
                  + table
                  + "."
                  + rs.getString("FKCOLUMN_NAME")
                  + " -> "
                  + rs.getString("PKTABLE_NAME")
                  + "."
                  + rs.getString("PKCOLUMN_NAME")
                  + " delete="
                  + rs.getShort("DELETE_RULE"));
        }
      }
      try (ResultSet rs = meta.getIndexInfo(null, schema, table, true, false)) {
        while (rs.next()) {
          if (rs.getString("COLUMN_NAME") != null) {
            lines.add(
                "unique "
                    + table
                    + "."
                    + rs.getString("COLUMN_NAME")
                    + " #"
                    + rs.getShort("ORDINAL_POSITION")
                    + (rs.getString("INDEX_NAME").endsWith("_idx")
                        ? " " + rs.getString("INDEX_NAME")
                        : ""));
          }
        }
      }
    }
    return String.join("\n", lines);
  }
}
