package dev.spendgateway.ledger;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/** A ledger on an H2 FILE journal in {@code dataDir}: its own actor system, ledger and client. */
public final class H2Ledger implements AutoCloseable {
  public final ActorSystem<Void> system;
  public final LedgerSettings settings;
  public final LedgerClient client;

  private H2Ledger(Config config, Clock clock) {
    this.system = ActorSystem.create(Behaviors.empty(), "ledger-h2", config);
    this.settings = LedgerSettings.fromConfig(config);
    this.client = LedgerClient.of(system, Ledger.spawn(system, settings, clock), settings, clock);
  }

  /** Starts the ledger and waits until it has recovered. */
  public static H2Ledger start(Path dataDir, Map<String, Object> overrides) throws Exception {
    return start(dataDir, overrides, Clock.systemUTC());
  }

  /** As above, deciding with {@code clock}. */
  public static H2Ledger start(Path dataDir, Map<String, Object> overrides, Clock clock)
      throws Exception {
    H2Ledger ledger = new H2Ledger(config(dataDir, overrides), clock);
    ledger.client.awaitReady().toCompletableFuture().get(30, TimeUnit.SECONDS);
    return ledger;
  }

  public static Config config(Path dataDir, Map<String, Object> overrides) {
    Map<String, Object> values = new HashMap<>(overrides);
    values.put("gateway.data-dir", dataDir.toAbsolutePath().toString());
    return ConfigFactory.parseMap(values)
        .withFallback(ConfigFactory.parseResources("ledger-h2-file-test.conf"))
        .withFallback(ConfigFactory.defaultReference())
        .resolve();
  }

  @Override
  public void close() throws Exception {
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }
}
