package dev.spendgateway.ledger.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.AdjustmentScope;
import dev.spendgateway.ledger.LedgerProtocol;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapName;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every command a node sends to the cluster's ledger and every reply it gets back crosses the
 * network: each must be serialized by Jackson (CBOR), never Java serialization (which stays off),
 * and read back equal, its reply-to ref included.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RemoteMessagesTest {
  private static final Instant AT = Instant.parse("2026-12-01T10:00:00Z");
  private ActorTestKit testKit;
  private Serialization serialization;

  @BeforeAll
  void start() {
    testKit = ActorTestKit.create();
    serialization = SerializationExtension.get(Adapter.toClassic(testKit.system()));
  }

  @AfterAll
  void stop() {
    testKit.shutdownTestKit();
  }

  Stream<Object> messages() {
    TestProbe<Object> probe = testKit.createTestProbe();
    var ref = probe.ref().<Object>unsafeUpcast();
    return Stream.of(
        new LedgerProtocol.Reserve(
            "r-1",
            Lane.APP,
            "b1",
            300_000,
            5_000_000,
            50_000_000,
            Owner.LEDGER_API,
            AT,
            ref.narrow()),
        new LedgerProtocol.Settle("r-1", 120_000, Owner.GATEWAY, AT, ref.narrow()),
        new LedgerProtocol.VoidReservation("r-1", Owner.GATEWAY, AT, ref.narrow()),
        new LedgerProtocol.OperatorSettle("r-1", 1, "alice", "refund", AT, ref.narrow()),
        new LedgerProtocol.OperatorVoid("r-1", "alice", "refund", AT, ref.narrow()),
        new LedgerProtocol.Adjust(
            "adj-1",
            "alice",
            "missed",
            Lane.APP,
            "b1",
            -1_000,
            "2026-12",
            AdjustmentScope.GRANT,
            AT,
            ref.narrow()),
        new LedgerProtocol.GetUsage(Optional.of("b1"), 5, ref.narrow()),
        new LedgerProtocol.GetReservation("r-1", ref.narrow()),
        new LedgerProtocol.AwaitReady(ref.narrow()),
        new LedgerProtocol.HandOver(),
        new LedgerProtocol.NodeBatch(
            7,
            List.of(
                new LedgerProtocol.Reserve(
                    "r-1", Lane.APP, "b1", 300_000, 5_000_000, 50_000_000, Owner.GATEWAY, AT, null),
                // A reserve from another node keeps its workflow tag, model and provider.
                new LedgerProtocol.Reserve(
                    "r-5",
                    Lane.FREE,
                    null,
                    300_000,
                    0,
                    0,
                    Owner.GATEWAY,
                    AT,
                    "onboarding",
                    "gpt-6.1-sol",
                    "openai",
                    null),
                new LedgerProtocol.Settle("r-1", 120_000, Owner.GATEWAY, AT, null),
                new LedgerProtocol.VoidReservation("r-2", Owner.LEDGER_API, null, null)),
            ref.narrow()),
        new LedgerProtocol.NodeAnswers(
            7,
            List.of(
                new LedgerProtocol.NodeAnswer(0, new LedgerProtocol.Reserved("r-1", 300_000)),
                new LedgerProtocol.NodeAnswer(
                    1, new LedgerProtocol.Refused("r-2", CapName.BRAND_DAILY, "b1", 10_000)),
                new LedgerProtocol.NodeAnswer(2, new LedgerProtocol.Busy("r-3", 2)),
                new LedgerProtocol.NodeAnswer(3, new LedgerProtocol.Conflict("r-4", "why")),
                new LedgerProtocol.NodeAnswer(4, new LedgerProtocol.IdReused("r-5")),
                new LedgerProtocol.NodeAnswer(5, new LedgerProtocol.Invalid("r-6", "f", "m")),
                new LedgerProtocol.NodeAnswer(
                    6, new LedgerProtocol.Closed("r-1", Status.SETTLED, 120_000)),
                new LedgerProtocol.NodeAnswer(7, new LedgerProtocol.Forbidden("r-7", "not yours")),
                new LedgerProtocol.NodeAnswer(8, new LedgerProtocol.NotOpen("r-8", Status.VOIDED)),
                new LedgerProtocol.NodeAnswer(9, new LedgerProtocol.NotFound("r-9")))),
        new LedgerProtocol.Reserved("r-1", 300_000),
        new LedgerProtocol.Refused("r-2", CapName.BRAND_DAILY, "b1", 10_000),
        new LedgerProtocol.Busy("r-3", 2),
        new LedgerProtocol.Closed("r-1", Status.SETTLED, 120_000),
        new LedgerProtocol.NotFound("r-9"),
        new LedgerProtocol.ReservationView(
            "r-1", Status.RESERVED, Lane.APP, "b1", 300_000, Optional.empty(), Owner.LEDGER_API),
        new LedgerProtocol.Usage(
            List.of(
                new LedgerProtocol.CapUsage(
                    CapName.GLOBAL_DAILY, null, "2026-12-01", 40_000_000, 1_000, 2_000)),
            3,
            1),
        new LedgerProtocol.Ready());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("messages")
  void crossesNodesAsJacksonCbor(Object message) {
    var serializer = serialization.findSerializerFor(message);
    assertEquals(
        "JacksonCborSerializer",
        serializer.getClass().getSimpleName(),
        message.getClass().getName());
    byte[] bytes = serialization.serialize(message).get();
    Object back =
        serialization
            .deserialize(
                bytes, serializer.identifier(), Serializers.manifestFor(serializer, message))
            .get();
    assertEquals(message, back);
  }

  /**
   * The largest batch a node sends (conf/cluster.conf's {@code node-batch.max-commands}, every id
   * and brand at the longest the edge accepts) and its answers must each fit one Artery frame: a
   * larger message is dropped by remoting, and its callers would wait out their asks.
   */
  @Test
  void theLargestBatchAndItsAnswersFitOneRemotingFrame() {
    int maxCommands =
        com.typesafe.config.ConfigFactory.parseFile(new java.io.File("../conf/cluster.conf"))
            .getInt("gateway.cluster.node-batch.max-commands");
    long frame =
        testKit
            .system()
            .settings()
            .config()
            .getBytes("pekko.remote.artery.advanced.maximum-frame-size");
    String longest = "i".repeat(dev.spendgateway.policy.access.LedgerId.MAX_LENGTH);
    var commands = new java.util.ArrayList<LedgerProtocol.Batchable>();
    var answers = new java.util.ArrayList<LedgerProtocol.NodeAnswer>();
    for (int i = 0; i < maxCommands; i++) {
      commands.add(
          new LedgerProtocol.Reserve(
              longest,
              Lane.APP,
              longest,
              Long.MAX_VALUE,
              Long.MAX_VALUE,
              Long.MAX_VALUE,
              Owner.LEDGER_API,
              AT,
              null));
      answers.add(
          new LedgerProtocol.NodeAnswer(
              i,
              new LedgerProtocol.Refused(longest, CapName.BRAND_MONTHLY, longest, Long.MIN_VALUE)));
    }
    TestProbe<Object> probe = testKit.createTestProbe();
    int batch =
        serialization
            .serialize(new LedgerProtocol.NodeBatch(Long.MAX_VALUE, commands, probe.ref().narrow()))
            .get()
            .length;
    int reply =
        serialization
            .serialize(new LedgerProtocol.NodeAnswers(Long.MAX_VALUE, answers))
            .get()
            .length;
    assertTrue(
        batch < frame, "a batch of " + maxCommands + " is " + batch + " bytes, frame " + frame);
    assertTrue(reply < frame, "its answers are " + reply + " bytes, frame " + frame);
  }
}
