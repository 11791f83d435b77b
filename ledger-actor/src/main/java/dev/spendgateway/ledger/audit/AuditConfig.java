package dev.spendgateway.ledger.audit;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.journal.PostgresJournal;
import dev.spendgateway.ledger.ops.DataDirs;
import dev.spendgateway.ledger.ops.JournalDatabase;
import dev.spendgateway.ledger.ops.JournalLock;
import dev.spendgateway.ledger.ops.JournalUnavailableException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The configuration the journal is read with outside the gateway (the operator's tools, the replay
 * benchmark): the gateway's own configuration, so the same database and caps, with quiet logging,
 * no JVM exit on shutdown, large read pages, and an H2 journal opened the operator's way.
 */
public final class AuditConfig {
  /** How long a tool waits for the journal database to open before it gives up with a message. */
  public static final Duration OPEN_TIMEOUT = Duration.ofSeconds(60);

  private static final String URL_KEY = "pekko-persistence-jdbc.shared-databases.slick.db.url";

  private AuditConfig() {}

  /**
   * The configuration to read the journal with: {@code configFile} (the gateway's
   * conf/application.conf), system properties over it, {@code dataDir} over both (may be null).
   */
  public static Config forReading(Path configFile, Path dataDir) {
    return load(Optional.of(configFile), Optional.ofNullable(dataDir), Optional.empty(), true);
  }

  /**
   * The configuration from {@code configFile} (else {@code application.conf} on the class path),
   * system properties over it, {@code dataDir} over both; in PostgreSQL when {@code journalUrl}
   * (else {@code gateway.journal.url}) names one.
   *
   * @param requireJournal whether the H2 journal must exist already, and is then opened the
   *     operator's way ({@link JournalDatabase#operatorUrl}: through the running gateway, else
   *     read-only, never creating a database); false for a tool that writes a journal (import,
   *     restore) or reads none (verify of an export)
   * @throws IllegalStateException naming what is missing: the ledger's configuration, the journal
   *     file, or a database that does not open within {@link #OPEN_TIMEOUT}
   */
  public static Config load(
      Optional<Path> configFile,
      Optional<Path> dataDir,
      Optional<String> journalUrl,
      boolean requireJournal) {
    Map<String, Object> flags = new HashMap<>();
    flags.put("pekko.loglevel", "WARNING");
    flags.put("pekko.stdout-loglevel", "WARNING");
    flags.put("pekko.coordinated-shutdown.exit-jvm", "off");
    flags.put("pekko.coordinated-shutdown.run-by-jvm-shutdown-hook", "off");
    dataDir.ifPresent(dir -> flags.put("gateway.data-dir", dir.toAbsolutePath().toString()));
    ConfigFactory.invalidateCaches();
    Config app =
        configFile
            .map(file -> ConfigFactory.parseFile(file.toFile()))
            .orElseGet(ConfigFactory::defaultApplication);
    // The same data dir as the gateway's, absolute: H2 refuses an implicitly relative path.
    Config resolved =
        DataDirs.resolveAbsolute(
            ConfigFactory.parseMap(flags)
                .withFallback(ConfigFactory.defaultOverrides())
                .withFallback(app)
                // Replay reads pages of this many events per query (plugin default 500): fewer
                // round trips.
                .withFallback(
                    ConfigFactory.parseMap(Map.of("jdbc-read-journal.max-buffer-size", "10000")))
                .withFallback(ConfigFactory.defaultReference()));
    resolved = PostgresJournal.select(resolved, journalUrl);
    if (!resolved.hasPath("ledger.caps")) {
      throw new IllegalStateException(
          "no ledger configuration found; pass --config "
              + "conf/application.conf (bin/gateway-admin puts conf/ on the class path)");
    }
    if (requireJournal) {
      requireJournalFile(resolved);
      return readOnly(resolved);
    }
    return resolved;
  }

  /**
   * The H2 journal opened the operator's way ({@link JournalDatabase#operatorUrl}), after opening
   * it once within {@link #OPEN_TIMEOUT} so a database that does not answer is one line, not a
   * silent wait.
   */
  private static Config readOnly(Config config) {
    Optional<JournalDatabase> db = JournalDatabase.of(config);
    if (db.isEmpty()) {
      return config;
    }
    String url = db.get().operatorUrl();
    try {
      db.get().probe(url, OPEN_TIMEOUT);
    } catch (JournalUnavailableException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
    return ConfigFactory.parseMap(Map.of(JournalLock.URL_KEY, url)).withFallback(config);
  }

  /** An H2 file URL for a missing file would create an empty database: refuse instead. */
  private static void requireJournalFile(Config config) {
    if (!config.hasPath(URL_KEY) || !config.hasPath("gateway.data-dir")) {
      return;
    }
    String url = config.getString(URL_KEY);
    if (url.startsWith("jdbc:h2:file:")) {
      Path file = Path.of(config.getString("gateway.data-dir"), "ledger.mv.db");
      if (!Files.exists(file)) {
        throw new IllegalStateException(JournalDatabase.noJournalAt(file));
      }
    }
  }
}
