package dev.spendgateway.ledger.journal;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValueFactory;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import org.apache.pekko.Done;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.persistence.jdbc.db.SlickExtension;
import org.apache.pekko.persistence.jdbc.db.SlickExtensionImpl;
import scala.concurrent.Future;
import scala.jdk.javaapi.FutureConverters;
import slick.dbio.DBIOAction;
import slick.jdbc.JdbcBackend;
import slick.jdbc.PostgresProfile;
import slick.jdbc.SimpleJdbcAction;

/**
 * The ledger's journal in PostgreSQL instead of the embedded H2 file: chosen by {@code
 * gateway.journal.url} (env {@code GATEWAY_JOURNAL_URL}), with the database settings of the {@code
 * postgres-journal} block of conf/cluster.conf. Unset, the configuration is left exactly as it is.
 *
 * <p>Same plugin, same tables (the plugin's current PostgreSQL layout, created if missing), same
 * group commit (one row per batch). What differs is the flush: PostgreSQL's commit is itself
 * durable when {@code synchronous_commit} and {@code fsync} are on (the WAL is flushed before the
 * commit returns), so the H2 {@code CHECKPOINT SYNC} step ({@code ledger.journal.sync}) is turned
 * off here, and {@link #requireDurableCommit} refuses to start the ledger on a server where a
 * commit is not durable.
 */
public final class PostgresJournal {
  /**
   * Where the JDBC URL is read from (conf/cluster.conf fills it from {@code GATEWAY_JOURNAL_URL}).
   */
  public static final String URL_KEY = "gateway.journal.url";

  static final String SLICK_KEY = "pekko-persistence-jdbc.shared-databases.slick";

  private PostgresJournal() {}

  /** Whether {@code config} names a PostgreSQL journal (before or after {@link #select}). */
  public static boolean requested(Config config) {
    return config.hasPath(URL_KEY) && !config.getString(URL_KEY).isBlank();
  }

  /** {@link #select(Config, Optional)} with the URL from the configuration. */
  public static Config select(Config config) {
    return select(config, Optional.empty());
  }

  /**
   * The configuration with its journal in PostgreSQL when a URL is given ({@code url}, else {@code
   * gateway.journal.url}); unchanged otherwise.
   *
   * @throws IllegalArgumentException when the URL is not a PostgreSQL JDBC URL
   */
  public static Config select(Config config, Optional<String> url) {
    String chosen =
        url.filter(u -> !u.isBlank())
            .orElse(config.hasPath(URL_KEY) ? config.getString(URL_KEY) : "");
    if (chosen.isBlank()) {
      return config;
    }
    if (!chosen.startsWith("jdbc:postgresql:")) {
      throw new IllegalArgumentException(
          "GATEWAY_JOURNAL_URL must be a PostgreSQL JDBC URL "
              + "(jdbc:postgresql://host:port/database), not '"
              + chosen
              + "'");
    }
    Config slick =
        config
            .getConfig("postgres-journal.slick")
            .withValue("db.url", ConfigValueFactory.fromAnyRef(chosen));
    // An empty user or password means "the driver's default" (OS user, trust or .pgpass), not "".
    for (String key : new String[] {"db.user", "db.password"}) {
      if (slick.hasPath(key) && slick.getString(key).isEmpty()) {
        slick = slick.withoutPath(key);
      }
    }
    return config
        .withValue(URL_KEY, ConfigValueFactory.fromAnyRef(chosen))
        .withValue(SLICK_KEY, slick.root())
        .withValue(
            JournalDurability.SYNC_KEY,
            ConfigValueFactory.fromAnyRef(
                config.getBoolean("postgres-journal.flush-after-commit")));
  }

  /**
   * Completes when the journal's PostgreSQL server makes every commit durable before it returns
   * ({@code synchronous_commit} not {@code off}, {@code fsync} on); fails with a message naming the
   * setting otherwise. At once for any other database.
   */
  public static CompletionStage<Done> requireDurableCommit(ClassicActorSystemProvider system) {
    Config config = system.classicSystem().settings().config();
    SlickExtensionImpl slick = (SlickExtensionImpl) SlickExtension.get(system);
    var database = slick.database(config.getConfig("jdbc-journal"));
    if (!(database.profile() instanceof PostgresProfile)) {
      return CompletableFuture.completedFuture(Done.getInstance());
    }
    return run(
        database.database(),
        connection -> {
          // Any value but off waits for the local WAL flush (on, local, remote_write,
          // remote_apply).
          if (show(connection, "synchronous_commit").equals("off")) {
            throw new IllegalStateException(
                "the journal's PostgreSQL has synchronous_commit = off: a commit returns "
                    + "before it is on disk, so acknowledged reservations could be lost; turn it on for the journal's user "
                    + "or database (ALTER ROLE/ALTER DATABASE ... SET synchronous_commit = on)");
          }
          if (!show(connection, "fsync").equals("on")) {
            throw new IllegalStateException(
                "the journal's PostgreSQL runs with fsync = off: nothing it commits is "
                    + "durable; the ledger will not start on it");
          }
        });
  }

  private static String show(Connection connection, String setting) {
    try (Statement statement = connection.createStatement();
        ResultSet rs = statement.executeQuery("SHOW " + setting)) {
      rs.next();
      return rs.getString(1);
    } catch (SQLException e) {
      throw new IllegalStateException(
          "could not read " + setting + " from the journal's PostgreSQL", e);
    }
  }

  /** Runs {@code check} on one pooled connection of the journal's database, on Slick's threads. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private static CompletionStage<Done> run(
      JdbcBackend.JdbcDatabaseDef db, Consumer<Connection> check) {
    SimpleJdbcAction<Done> action =
        SimpleJdbcAction.apply(
            context -> {
              check.accept(context.connection());
              return Done.getInstance();
            });
    // Slick's Scala signature accepts any effect type; Java cannot express that bound, hence the
    // raw call.
    Future<Done> done = (Future<Done>) db.run((DBIOAction) action);
    return FutureConverters.asJava(done);
  }
}
