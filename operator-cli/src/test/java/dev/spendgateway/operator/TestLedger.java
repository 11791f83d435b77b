package dev.spendgateway.operator;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.Ledger;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerSettings;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * A ledger on an H2 FILE journal in a data dir, as the gateway runs it: its own actor system,
 * ledger and client; the CLI reads the same journal with {@link #CONFIG} as its --config.
 */
final class TestLedger implements AutoCloseable {
  /** The configuration file of the tests' journal (operator-test.conf). */
  static final Path CONFIG = configFile();

  final ActorSystem<Void> system;
  final LedgerSettings settings;
  final LedgerClient client;

  private TestLedger(Config config) {
    this.system = ActorSystem.create(Behaviors.empty(), "test-ledger", config);
    this.settings = LedgerSettings.fromConfig(config);
    Clock clock = Clock.systemUTC();
    this.client = LedgerClient.of(system, Ledger.spawn(system, settings, clock), settings, clock);
  }

  /** Starts the ledger on {@code dataDir} and waits until it has recovered. */
  static TestLedger start(Path dataDir, Map<String, Object> overrides) throws Exception {
    TestLedger ledger = new TestLedger(config(dataDir, overrides));
    ledger.client.awaitReady().toCompletableFuture().get(30, TimeUnit.SECONDS);
    return ledger;
  }

  static Config config(Path dataDir, Map<String, Object> overrides) {
    Map<String, Object> values = new HashMap<>(overrides);
    values.put("gateway.data-dir", dataDir.toAbsolutePath().toString());
    return ConfigFactory.parseMap(values)
        .withFallback(ConfigFactory.parseResources("operator-test.conf"))
        .withFallback(ConfigFactory.defaultReference())
        .resolve();
  }

  private static Path configFile() {
    try {
      return Path.of(TestLedger.class.getResource("/operator-test.conf").toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() throws Exception {
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }
}
