package dev.spendgateway.ledger;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.journal.PostgresJournal;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/** A ledger on a PostgreSQL journal at {@code url}: its own actor system, ledger and client. */
public final class PgLedger implements AutoCloseable {
  public final ActorSystem<Void> system;
  public final LedgerSettings settings;
  public final LedgerClient client;

  private PgLedger(Config config, Clock clock, String name) {
    this.system = ActorSystem.create(Behaviors.empty(), name, config);
    this.settings = LedgerSettings.fromConfig(config);
    this.client = LedgerClient.of(system, Ledger.spawn(system, settings, clock), settings, clock);
  }

  /** Starts the ledger and waits until it has recovered. */
  public static PgLedger start(String url, Map<String, Object> overrides) throws Exception {
    return start(url, overrides, "ledger-pg");
  }

  public static PgLedger start(String url, Map<String, Object> overrides, String name)
      throws Exception {
    PgLedger ledger = new PgLedger(config(url, overrides), Clock.systemUTC(), name);
    ledger.client.awaitReady().toCompletableFuture().get(30, TimeUnit.SECONDS);
    return ledger;
  }

  public static Config config(String url, Map<String, Object> overrides) {
    Config loaded =
        ConfigFactory.parseMap(overrides)
            .withFallback(ConfigFactory.parseResources("ledger-postgres-test.conf"))
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    return PostgresJournal.select(loaded, Optional.of(url));
  }

  @Override
  public void close() throws Exception {
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }
}
