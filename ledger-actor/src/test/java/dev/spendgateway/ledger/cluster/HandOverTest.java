package dev.spendgateway.ledger.cluster;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.H2Ledger;
import dev.spendgateway.ledger.Ledger;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.access.Lane;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stop message a cluster singleton gets when it moves: the ledger's front takes it itself (it
 * is a command, but not GlobalBudget's), answers it by stopping, and never hands it on.
 */
class HandOverTest {
  @TempDir Path dataDir;

  @Test
  void theLedgerStopsOnHandOver() throws Exception {
    var config = H2Ledger.config(dataDir, Map.of());
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "hand-over", config);
    try {
      LedgerSettings settings = LedgerSettings.fromConfig(config);
      ActorRef<GlobalBudget.Command> ledger = Ledger.spawn(system, settings, Clock.systemUTC());
      LedgerClient client = LedgerClient.of(system, ledger, settings);
      client.awaitReady().toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertInstanceOf(
          LedgerProtocol.Reserved.class,
          client
              .reserve(new ReserveRequest("r-1", Lane.FREE, null, 10_000, 0, 0))
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS));

      TestProbe<Object> watcher = TestProbe.create(system);
      ledger.tell(new LedgerProtocol.HandOver());
      watcher.expectTerminated(ledger, Duration.ofSeconds(20));
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
