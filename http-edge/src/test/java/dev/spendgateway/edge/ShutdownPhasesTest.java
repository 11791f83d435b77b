package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.Map;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;

/**
 * The drain phase of CoordinatedShutdown follows {@code gateway.shutdown-drain}, the one setting:
 * the configuration a start runs with gives the phase the drain plus its margin, whatever the
 * drain.
 */
class ShutdownPhasesTest {

  @Test
  void theShippedDrainGetsAPhaseThatOutlastsIt() {
    Config config = GatewayMain.load(Map.of(), Map.of());
    Duration drain = config.getDuration("gateway.shutdown-drain");
    assertEquals(
        drain.plus(GatewayServer.DRAIN_PHASE_MARGIN),
        config.getDuration(GatewayServer.DRAIN_PHASE_TIMEOUT));
  }

  @Test
  void aLongerDrainLengthensThePhaseWithIt() {
    Config config = GatewayMain.load(Map.of("gateway.shutdown-drain", "90s"), Map.of());
    assertEquals(
        Duration.ofSeconds(90).plus(GatewayServer.DRAIN_PHASE_MARGIN),
        config.getDuration(GatewayServer.DRAIN_PHASE_TIMEOUT));
  }

  @Test
  void aPhaseSetLongerByTheOperatorIsKept() {
    Config config =
        GatewayServer.withDrainPhase(
            ConfigFactory.parseMap(
                Map.of("gateway.shutdown-drain", "20s", GatewayServer.DRAIN_PHASE_TIMEOUT, "2m")));
    assertEquals(Duration.ofMinutes(2), config.getDuration(GatewayServer.DRAIN_PHASE_TIMEOUT));
  }

  @Test
  void pekkoRunsTheDrainPhaseWithTheDerivedTimeout() {
    Config config =
        GatewayServer.withDrainPhase(
            ConfigFactory.parseMap(
                    Map.<String, Object>of(
                        "gateway.shutdown-drain",
                        "40s",
                        "pekko.coordinated-shutdown.exit-jvm",
                        "off"))
                .withFallback(ConfigFactory.defaultReference()));
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "shutdown-phases", config);
    try {
      long phaseNanos =
          CoordinatedShutdown.get(system)
              .timeout(CoordinatedShutdown.PhaseServiceRequestsDone())
              .toNanos();
      assertEquals(
          Duration.ofSeconds(40).plus(GatewayServer.DRAIN_PHASE_MARGIN),
          Duration.ofNanos(phaseNanos));
    } finally {
      system.terminate();
    }
  }
}
