package dev.spendgateway.ledger.journal;

import com.typesafe.config.Config;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.persistence.jdbc.db.SlickExtension;
import org.apache.pekko.persistence.jdbc.db.SlickExtensionImpl;
import org.apache.pekko.persistence.jdbc.testkit.javadsl.SchemaUtils;
import slick.jdbc.H2Profile;
import slick.jdbc.JdbcProfile;
import slick.jdbc.PostgresProfile;

/**
 * Creates the journal's tables if they are missing (idempotent: each statement is tried, existing
 * objects are left alone), for the DAO the ledger is configured with.
 *
 * <p>Why not just {@link SchemaUtils#createIfNotExists}: the plugin picks its DDL by the name of
 * {@code jdbc-journal.dao} and takes any DAO other than its own default for the pre-5.0 ("legacy")
 * table layout. {@link DurableJournalDao} writes through the default DAO, so it needs the current
 * layout: the same script the plugin would run for its default DAO.
 */
public final class JournalSchema {
  private JournalSchema() {}

  /** Runs the plugin's current DDL for the journal's database; completes when it has run. */
  public static CompletionStage<Done> createIfNotExists(ClassicActorSystemProvider system) {
    Config config = system.classicSystem().settings().config();
    if (!config.getString("jdbc-journal.dao").equals(JournalDurability.DAO)) {
      return SchemaUtils.createIfNotExists(system); // the plugin's own choice is right for its own DAOs
    }
    SlickExtensionImpl slick = (SlickExtensionImpl) SlickExtension.get(system);
    JdbcProfile profile = slick.database(config.getConfig("jdbc-journal")).profile();
    return SchemaUtils.applyScript(createScript(profile), system);
  }

  /** The plugin's (non-legacy) create script for the databases the ledger can run on. */
  static String createScript(JdbcProfile profile) {
    String database;
    if (profile instanceof H2Profile) {
      database = "h2";
    } else if (profile instanceof PostgresProfile) {
      database = "postgres";
    } else {
      throw new IllegalArgumentException("the ledger's journal runs on H2 or PostgreSQL, not " + profile);
    }
    String resource = "schema/" + database + "/" + database + "-create-schema.sql";
    try (InputStream in = JournalSchema.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException(resource + " is missing from pekko-persistence-jdbc");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
