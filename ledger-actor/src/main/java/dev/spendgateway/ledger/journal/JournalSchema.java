package dev.spendgateway.ledger.journal;

import com.typesafe.config.Config;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.stream.Collectors;
import org.apache.pekko.Done;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.persistence.jdbc.db.SlickExtension;
import org.apache.pekko.persistence.jdbc.db.SlickExtensionImpl;
import scala.concurrent.Future;
import scala.jdk.javaapi.FutureConverters;
import slick.dbio.DBIOAction;
import slick.jdbc.H2Profile;
import slick.jdbc.JdbcBackend;
import slick.jdbc.JdbcProfile;
import slick.jdbc.PostgresProfile;
import slick.jdbc.SimpleJdbcAction;

/**
 * Creates the journal's tables when they are missing, from the DDL this module ships ({@code
 * schema-h2.sql}, {@code schema-postgres.sql} next to this class): the layout the plugin's default
 * journal DAO, its read journal and its snapshot store use, which is also what {@link
 * DurableJournalDao} writes through.
 *
 * <p>A journal that already has its tables is left alone: they are looked up first and nothing is
 * run when all are there, so a database user without the right to create tables keeps working on a
 * journal someone else provisioned. Otherwise the script runs statement by statement; each one is
 * idempotent ({@code IF NOT EXISTS}), so a half-created schema is completed, and a statement that
 * fails fails the start with the database's own message.
 */
public final class JournalSchema {
  /** The tables the journal, the read journal and the snapshot store need. */
  static final List<String> TABLES = List.of("event_journal", "event_tag", "snapshot");

  private JournalSchema() {}

  /**
   * Creates the missing tables of the journal's database (the {@code jdbc-journal} plugin's);
   * completes once done, on the plugin's database threads (JDBC blocks).
   *
   * @throws IllegalArgumentException for a database other than H2 or PostgreSQL
   */
  public static CompletionStage<Done> createIfNotExists(ClassicActorSystemProvider system) {
    Config config = system.classicSystem().settings().config();
    SlickExtensionImpl slick = (SlickExtensionImpl) SlickExtension.get(system);
    var database = slick.database(config.getConfig("jdbc-journal"));
    String script = createScript(database.profile());
    return run(database.database(), connection -> createIfMissing(connection, script));
  }

  /** The shipped create script for the databases the ledger can run on. */
  static String createScript(JdbcProfile profile) {
    String resource;
    if (profile instanceof H2Profile) {
      resource = "schema-h2.sql";
    } else if (profile instanceof PostgresProfile) {
      resource = "schema-postgres.sql";
    } else {
      throw new IllegalArgumentException(
          "the ledger's journal runs on H2 or PostgreSQL, not " + profile);
    }
    try (InputStream in = JournalSchema.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException(resource + " is missing from ledger-actor");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Runs {@code script} on {@code connection} unless every journal table is already there. */
  static void createIfMissing(Connection connection, String script) {
    try {
      if (missingTables(connection).isEmpty()) {
        return;
      }
      try (Statement statement = connection.createStatement()) {
        for (String sql : statements(script)) {
          statement.execute(sql);
        }
      }
      if (!connection.getAutoCommit()) {
        connection.commit();
      }
    } catch (SQLException e) {
      throw new IllegalStateException(
          "could not create the journal's tables: " + e.getMessage(), e);
    }
  }

  /**
   * The journal tables not in the {@code public} schema (where the scripts create them; H2 names it
   * {@code PUBLIC}, PostgreSQL {@code public}).
   */
  static Set<String> missingTables(Connection connection) throws SQLException {
    Set<String> missing = new HashSet<>(TABLES);
    DatabaseMetaData meta = connection.getMetaData();
    for (String table : TABLES) {
      try (ResultSet rs = meta.getTables(null, null, table, new String[] {"TABLE"})) {
        while (rs.next()) {
          // The name is a pattern ('_' matches any character): compare the exact names.
          if (table.equals(rs.getString("TABLE_NAME"))
              && "public".equalsIgnoreCase(rs.getString("TABLE_SCHEM"))) {
            missing.remove(table);
          }
        }
      }
    }
    return missing;
  }

  /** The script's statements: comment lines dropped, split at semicolons, blanks skipped. */
  static List<String> statements(String script) {
    String code =
        script
            .lines()
            .filter(line -> !line.stripLeading().startsWith("--"))
            .collect(Collectors.joining("\n"));
    return Arrays.stream(code.split(";")).map(String::strip).filter(s -> !s.isEmpty()).toList();
  }

  /** Runs {@code work} on one pooled connection of the journal's database, on Slick's threads. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static CompletionStage<Done> run(
      JdbcBackend.JdbcDatabaseDef db, java.util.function.Consumer<Connection> work) {
    SimpleJdbcAction<Done> action =
        SimpleJdbcAction.apply(
            context -> {
              work.accept(context.connection());
              return Done.getInstance();
            });
    // Slick's Scala signature accepts any effect type; Java cannot express that bound: a raw call.
    Future<Done> done = (Future<Done>) db.run((DBIOAction) action);
    return FutureConverters.asJava(done);
  }
}
