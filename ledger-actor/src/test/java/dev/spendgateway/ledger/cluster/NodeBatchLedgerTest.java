package dev.spendgateway.ledger.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.H2Ledger;
import dev.spendgateway.ledger.Ledger;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol;
import dev.spendgateway.ledger.LedgerProtocol.Batchable;
import dev.spendgateway.ledger.LedgerProtocol.NodeAnswers;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.policy.access.Lane;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ledger's side of another node's batch: every command is decided as if it had come alone, in
 * the batch's order, and the answers come back as one message, each at its command's index.
 */
class NodeBatchLedgerTest {
  @TempDir Path dataDir;

  private static LedgerProtocol.Reserve reserve(String id, long micros) {
    return new LedgerProtocol.Reserve(id, Lane.FREE, null, micros, 0, 0, Owner.GATEWAY, null, null);
  }

  @Test
  void eachCommandIsDecidedInOrderAndAnsweredAtItsIndex() throws Exception {
    var config = H2Ledger.config(dataDir, Map.of());
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "node-batch", config);
    try {
      LedgerSettings settings = LedgerSettings.fromConfig(config);
      ActorRef<GlobalBudget.Command> ledger = Ledger.spawn(system, settings, Clock.systemUTC());
      LedgerClient.of(system, ledger, settings)
          .awaitReady()
          .toCompletableFuture()
          .get(30, TimeUnit.SECONDS);
      TestProbe<NodeAnswers> node = TestProbe.create(system);

      List<Batchable> commands =
          List.of(
              reserve("r-1", 10_000),
              new LedgerProtocol.Settle("r-1", 4_000, Owner.GATEWAY, null, null),
              reserve("r-2", 1_000_000_000_000L), // far past every cap
              new LedgerProtocol.VoidReservation("r-9", Owner.GATEWAY, null, null),
              reserve("r-3", 20_000),
              new LedgerProtocol.VoidReservation("r-3", Owner.GATEWAY, null, null));
      ledger.tell(new LedgerProtocol.NodeBatch(41, commands, node.ref()));

      NodeAnswers answers = node.expectMessageClass(NodeAnswers.class, Duration.ofSeconds(20));
      assertEquals(41, answers.batch());
      assertEquals(
          List.of(0, 1, 2, 3, 4, 5), answers.answers().stream().map(a -> a.index()).toList());
      assertEquals(new LedgerProtocol.Reserved("r-1", 10_000), answers.answers().get(0).reply());
      assertEquals(
          new LedgerProtocol.Closed(
              "r-1", dev.spendgateway.ledger.Reservation.Status.SETTLED, 4_000),
          answers.answers().get(1).reply());
      assertInstanceOf(LedgerProtocol.Refused.class, answers.answers().get(2).reply());
      assertEquals(new LedgerProtocol.NotFound("r-9"), answers.answers().get(3).reply());
      assertEquals(new LedgerProtocol.Reserved("r-3", 20_000), answers.answers().get(4).reply());
      assertInstanceOf(LedgerProtocol.Closed.class, answers.answers().get(5).reply());

    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
