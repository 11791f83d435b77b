package dev.spendgateway.edge.alerts;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.SerializationTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * In a cluster every node's alarms travel to the one alert outbox (a singleton on another node):
 * its commands cross the network, so each must round-trip through the configured serializer (not
 * Java serialization, which the gateway's config forbids).
 */
class AlertCommandsRemoteTest {
  private static final ActorTestKit KIT = ActorTestKit.create();

  @AfterAll
  static void stop() {
    KIT.shutdownTestKit();
  }

  @Test
  void theOutboxsCommandsCrossNodes() {
    SerializationTestKit serialization = new SerializationTestKit(KIT.system());
    AlertOutbox.Command raise =
        new AlertOutbox.Raise(
            List.of(
                new Alert(
                    "model_retired|gpt-x|/v1/chat/completions|2026-12-06",
                    "model_retired",
                    "{\"type\":\"model_retired\",\"model\":\"gpt-x\"}")));
    assertEquals(
        "JacksonCborSerializer",
        org.apache.pekko.serialization.SerializationExtension.get(
                org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(KIT.system()))
            .findSerializerFor(raise)
            .getClass()
            .getSimpleName());
    assertEquals(raise, serialization.verifySerialization(raise, true));
    AlertOutbox.Command delivered = new AlertOutbox.Delivered("k");
    assertEquals(delivered, serialization.verifySerialization(delivered, true));
  }
}
