package dev.spendgateway.ledger.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.LedgerProtocol;
import dev.spendgateway.ledger.LedgerProtocol.NodeAnswer;
import dev.spendgateway.ledger.LedgerProtocol.NodeAnswers;
import dev.spendgateway.ledger.LedgerProtocol.NodeBatch;
import dev.spendgateway.ledger.LedgerProtocol.Reserve;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.policy.access.Lane;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A node's door to the ledger, against a stand-in for the singleton proxy: what leaves when, in
 * which batch, and which caller gets which answer — also when answers are missing, late, or the
 * ledger goes out of reach — and what passes unbatched (the ledger on this node, queries) or is
 * answered busy at once (the gate closed).
 */
class NodeBatcherTest {
  private static final Duration QUIET = Duration.ofMillis(200);
  private static final Duration ANSWER_TIMEOUT = Duration.ofMillis(500);

  private ActorTestKit testKit;
  private TestProbe<GlobalBudget.Command> ledger;
  private ActorRef<Object> batcher;
  private final AtomicBoolean reachable = new AtomicBoolean(true);
  private final AtomicBoolean here = new AtomicBoolean(false);
  private final List<TestProbe<ReserveReply>> callers = new ArrayList<>();

  @BeforeEach
  void start() {
    testKit = ActorTestKit.create();
    ledger = testKit.createTestProbe();
    // At most 3 commands per batch and 1 batch unanswered, so the tests can fill both.
    batcher =
        testKit.spawn(
            NodeBatcher.create(
                ledger.ref(),
                new NodeBatcher.Settings(3, 1, ANSWER_TIMEOUT, 2),
                new NodeBatcher.Whereabouts(reachable::get, here::get)));
  }

  @AfterEach
  void stop() {
    testKit.shutdownTestKit();
  }

  /** Sends reserve number {@code n} from its own caller. */
  private void send(int n) {
    while (callers.size() <= n) {
      callers.add(testKit.createTestProbe());
    }
    batcher.tell(
        new Reserve(
            "r-" + n, Lane.FREE, null, 1_000, 0, 0, Owner.GATEWAY, null, callers.get(n).ref()));
  }

  private NodeBatch nextBatch() {
    return ledger.expectMessageClass(NodeBatch.class);
  }

  private static List<String> ids(NodeBatch batch) {
    return batch.commands().stream().map(c -> ((Reserve) c).id()).toList();
  }

  private static NodeAnswers reservedAll(NodeBatch batch) {
    List<NodeAnswer> answers = new ArrayList<>();
    for (int i = 0; i < batch.commands().size(); i++) {
      Reserve r = (Reserve) batch.commands().get(i);
      answers.add(new NodeAnswer(i, new LedgerProtocol.Reserved(r.id(), r.amountMicros())));
    }
    return new NodeAnswers(batch.batch(), answers);
  }

  @Test
  void aLoneCommandLeavesAtOnceWithoutItsCallersRef() {
    send(0);
    NodeBatch batch = nextBatch();
    assertEquals(List.of("r-0"), ids(batch));
    assertNull(((Reserve) batch.commands().get(0)).replyTo(), "the caller's ref stays here");
    batch.replyTo().tell(reservedAll(batch));
    callers.get(0).expectMessage(new LedgerProtocol.Reserved("r-0", 1_000));
  }

  @Test
  void commandsArrivingWhileABatchIsUnansweredGoTogetherAndEachCallerGetsItsOwnAnswer() {
    send(0);
    NodeBatch first = nextBatch();
    for (int n = 1; n <= 4; n++) {
      send(n);
    }
    ledger.expectNoMessage(QUIET);
    first.replyTo().tell(reservedAll(first));
    NodeBatch second = nextBatch();
    assertEquals(List.of("r-1", "r-2", "r-3"), ids(second), "at most max-commands");
    ledger.expectNoMessage(QUIET);
    // The ledger left index 1 unanswered (its ask timed out there): that caller hears nothing.
    second
        .replyTo()
        .tell(
            new NodeAnswers(
                second.batch(),
                List.of(
                    new NodeAnswer(0, new LedgerProtocol.Reserved("r-1", 1_000)),
                    new NodeAnswer(2, new LedgerProtocol.Busy("r-3", 1)))));
    callers.get(1).expectMessage(new LedgerProtocol.Reserved("r-1", 1_000));
    callers.get(3).expectMessage(new LedgerProtocol.Busy("r-3", 1));
    callers.get(2).expectNoMessage(QUIET);
    assertEquals(List.of("r-4"), ids(nextBatch()));
  }

  @Test
  void outOfReachAnswersWhatWasNotSentBusyAndFreesTheSlot() {
    send(0);
    NodeBatch first = nextBatch();
    send(1);
    reachable.set(false);
    batcher.tell(new NodeBatcher.LedgerOutOfReach());
    callers.get(1).expectMessage(new LedgerProtocol.Busy("r-1", 2));
    reachable.set(true);
    send(2);
    NodeBatch afterMove = nextBatch();
    assertEquals(List.of("r-2"), ids(afterMove), "the first batch no longer holds the slot");
    // The first batch's answer still reaches its caller if it comes.
    first.replyTo().tell(reservedAll(first));
    callers.get(0).expectMessage(new LedgerProtocol.Reserved("r-0", 1_000));
  }

  @Test
  void aBatchNotAnsweredInTimeIsGivenUpAndItsLateAnswerDropped() {
    send(0);
    NodeBatch lost = nextBatch();
    send(1);
    NodeBatch next = ledger.expectMessageClass(NodeBatch.class, ANSWER_TIMEOUT.multipliedBy(10));
    assertEquals(List.of("r-1"), ids(next));
    lost.replyTo().tell(reservedAll(lost));
    callers.get(0).expectNoMessage(QUIET);
    next.replyTo().tell(reservedAll(next));
    callers.get(1).expectMessage(new LedgerProtocol.Reserved("r-1", 1_000));
  }

  @Test
  void whileTheGateIsClosedAWriteIsAnsweredBusyAtOnceAndNothingLeaves() {
    reachable.set(false);
    send(0);
    callers.get(0).expectMessage(new LedgerProtocol.Busy("r-0", 2));
    ledger.expectNoMessage(QUIET);
  }

  @Test
  void whileTheLedgerRunsOnThisNodeAWriteGoesOnAloneWithItsCallersRef() {
    here.set(true);
    send(0);
    send(1);
    Reserve first = ledger.expectMessageClass(Reserve.class);
    assertEquals("r-0", first.id());
    assertEquals(callers.get(0).ref(), first.replyTo());
    assertEquals("r-1", ledger.expectMessageClass(Reserve.class).id());
  }

  @Test
  void aQueryGoesOnAsItIsWhateverTheGateSays() {
    reachable.set(false);
    TestProbe<LedgerProtocol.Usage> asker = testKit.createTestProbe();
    GlobalBudget.GetUsage query = new GlobalBudget.GetUsage(Optional.empty(), asker.ref());
    batcher.tell(query);
    assertEquals(query, ledger.expectMessageClass(GlobalBudget.GetUsage.class));
  }
}
