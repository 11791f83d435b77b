package dev.spendgateway.edge.call;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.Reservation;
import dev.spendgateway.ledger.Reservation.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Stream;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A held reservation closes once, asks again when the ledger does not answer, and reports what the
 * ledger actually did. The ledger is a scripted actor: it ignores the first {@code silent} closes
 * (as a ledger that is restarting would), then answers.
 */
@ExtendWith(TestKitJUnit5Extension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HeldReservationTest {
  private static final long HELD = 300_000;

  /** One actor system for the class: Pekko's JUnit 5 extension stops it after the last test. */
  @JUnit5TestKit final ActorTestKit testKit = new JUnit5TestKitBuilder().build();

  /**
   * A ledger that stays silent for the first {@code silent} closes, then answers with {@code
   * answer}.
   */
  private record ScriptedLedger(
      LedgerClient client, AtomicInteger closes, ActorRef<GlobalBudget.Command> ref) {
    static ScriptedLedger of(
        ActorTestKit testKit,
        int silent,
        Function<GlobalBudget.Command, GlobalBudget.CloseReply> answer) {
      AtomicInteger closes = new AtomicInteger();
      Behavior<GlobalBudget.Command> behavior =
          Behaviors.receiveMessage(
              command -> {
                ActorRef<GlobalBudget.CloseReply> replyTo = replyTo(command);
                if (replyTo != null && closes.incrementAndGet() > silent) {
                  replyTo.tell(answer.apply(command));
                }
                return Behaviors.same();
              });
      ActorRef<GlobalBudget.Command> ref = testKit.spawn(behavior);
      LedgerClient client =
          new LedgerClient(
              ref,
              testKit.system().scheduler(),
              testKit.system().executionContext(),
              Duration.ofMillis(100));
      return new ScriptedLedger(client, closes, ref);
    }

    private static ActorRef<GlobalBudget.CloseReply> replyTo(GlobalBudget.Command command) {
      if (command instanceof GlobalBudget.Settle s) {
        return s.replyTo();
      }
      if (command instanceof GlobalBudget.VoidReservation v) {
        return v.replyTo();
      }
      return null;
    }
  }

  /** The ledger's own answer to a first close: closed as asked. */
  private static GlobalBudget.CloseReply asAsked(GlobalBudget.Command command) {
    if (command instanceof GlobalBudget.Settle s) {
      return new GlobalBudget.Closed(s.id(), Status.SETTLED, s.actualMicros());
    }
    return new GlobalBudget.Closed(((GlobalBudget.VoidReservation) command).id(), Status.VOIDED, 0);
  }

  /** Busy for the first {@code times} closes, then closed as asked. */
  private static Function<GlobalBudget.Command, GlobalBudget.CloseReply> busyThenAsAsked(
      int times) {
    AtomicInteger seen = new AtomicInteger();
    return c -> seen.incrementAndGet() <= times ? new GlobalBudget.Busy("r", 1) : asAsked(c);
  }

  private static LedgerClose await(CompletionStage<LedgerClose> close) throws Exception {
    return close.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  static Stream<Arguments> answers() {
    Function<GlobalBudget.Command, GlobalBudget.CloseReply> expired =
        c -> new GlobalBudget.Closed("r", Status.EXPIRED, HELD);
    Function<GlobalBudget.Command, GlobalBudget.CloseReply> refused =
        c -> new GlobalBudget.NotOpen("r", Status.REFUSED);
    Function<GlobalBudget.Command, GlobalBudget.CloseReply> notOpenExpired =
        c -> new GlobalBudget.NotOpen("r", Status.EXPIRED);
    Function<GlobalBudget.Command, GlobalBudget.CloseReply> unknown =
        c -> new GlobalBudget.NotFound("r");
    return Stream.of(
        Arguments.of(
            "a settle the ledger answers is closed as asked, at the cost",
            0,
            (Function<GlobalBudget.Command, GlobalBudget.CloseReply>) HeldReservationTest::asAsked,
            new Settlement.Closing.AtCost(1234),
            1,
            1234L,
            null),
        Arguments.of(
            "a void the ledger answers is closed as asked, at 0",
            0,
            (Function<GlobalBudget.Command, GlobalBudget.CloseReply>) HeldReservationTest::asAsked,
            new Settlement.Closing.Void(),
            1,
            0L,
            null),
        Arguments.of(
            "keeping the worst case settles at the amount held",
            0,
            (Function<GlobalBudget.Command, GlobalBudget.CloseReply>) HeldReservationTest::asAsked,
            new Settlement.Closing.KeepWorstCase(),
            1,
            HELD,
            null),
        Arguments.of(
            "two unanswered asks are asked again; the third answer counts",
            2,
            (Function<GlobalBudget.Command, GlobalBudget.CloseReply>) HeldReservationTest::asAsked,
            new Settlement.Closing.AtCost(1234),
            3,
            1234L,
            null),
        Arguments.of(
            "a reservation found expired says so, at the worst case the expiry charged",
            0,
            expired,
            new Settlement.Closing.AtCost(1234),
            1,
            HELD,
            "reservation_expired"),
        Arguments.of(
            "a reservation the ledger says is not open (refused) is not called settled",
            0,
            refused,
            new Settlement.Closing.AtCost(1234),
            1,
            null,
            "reservation_not_open:refused"),
        Arguments.of(
            "a reservation the ledger says is not open (expired) was held at its worst case",
            0,
            notOpenExpired,
            new Settlement.Closing.Void(),
            1,
            HELD,
            "reservation_not_open:expired"),
        Arguments.of(
            "an id the ledger does not know is not called settled",
            0,
            unknown,
            new Settlement.Closing.Void(),
            1,
            null,
            "reservation_not_found"),
        Arguments.of(
            "a ledger busy at first (queue full, nothing decided) is asked again; its later answer counts",
            0,
            busyThenAsAsked(2),
            new Settlement.Closing.AtCost(1234),
            3,
            1234L,
            null),
        Arguments.of(
            "a ledger that stays busy is given up on after the bounded asks, not called settled",
            0,
            (Function<GlobalBudget.Command, GlobalBudget.CloseReply>)
                c -> new GlobalBudget.Busy("r", 1),
            new Settlement.Closing.AtCost(1234),
            HeldReservation.MAX_ASKS,
            null,
            "settle_failed"),
        Arguments.of(
            "a ledger that never answers is given up on after the bounded asks",
            Integer.MAX_VALUE,
            (Function<GlobalBudget.Command, GlobalBudget.CloseReply>) HeldReservationTest::asAsked,
            new Settlement.Closing.AtCost(1234),
            HeldReservation.MAX_ASKS,
            null,
            "settle_failed"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("answers")
  void closesAndSaysWhatTheLedgerDid(
      String sentence,
      int silent,
      Function<GlobalBudget.Command, GlobalBudget.CloseReply> answer,
      Settlement.Closing how,
      int asks,
      Long settled,
      String problem)
      throws Exception {
    ScriptedLedger ledger = ScriptedLedger.of(testKit, silent, answer);
    InFlightCalls inFlight = new InFlightCalls();
    HeldReservation held = new HeldReservation("gw-r", HELD, "req-1", ledger.client(), inFlight);

    LedgerClose closed = await(held.close(how));

    assertEquals(settled, closed.settledMicros(), sentence);
    assertEquals(problem, closed.problem(), sentence);
    assertEquals(asks, ledger.closes().get(), sentence + ": asks made");
    assertEquals(
        0,
        inFlight.awaitSettlements(Duration.ofSeconds(2)).toCompletableFuture().get(),
        sentence + ": none left in flight");
  }

  @Test
  void aSecondCloseChangesNothingAndGetsTheFirstResult() throws Exception {
    ScriptedLedger ledger = ScriptedLedger.of(testKit, 0, HeldReservationTest::asAsked);
    HeldReservation held =
        new HeldReservation("gw-r", HELD, "req-2", ledger.client(), new InFlightCalls());

    CompletionStage<LedgerClose> first = held.close(new Settlement.Closing.AtCost(1234));
    CompletionStage<LedgerClose> second = held.close(new Settlement.Closing.Void());

    assertSame(first, second);
    assertInstanceOf(LedgerClose.AsAsked.class, await(first));
    assertEquals(1234L, await(second).settledMicros());
    assertEquals(1, ledger.closes().get());
  }

  @Test
  void closesRacingFromManyThreadsAskTheLedgerOnce() throws Exception {
    ScriptedLedger ledger = ScriptedLedger.of(testKit, 0, HeldReservationTest::asAsked);
    HeldReservation held =
        new HeldReservation("gw-r", HELD, "req-3", ledger.client(), new InFlightCalls());
    CountDownLatch go = new CountDownLatch(1);
    List<Thread> threads = new ArrayList<>();
    List<CompletionStage<LedgerClose>> results =
        java.util.Collections.synchronizedList(new ArrayList<>());
    for (int i = 0; i < 8; i++) {
      boolean settle = i % 2 == 0;
      Thread t =
          new Thread(
              () -> {
                try {
                  go.await();
                } catch (InterruptedException e) {
                  return;
                }
                results.add(
                    held.close(
                        settle
                            ? new Settlement.Closing.AtCost(1234)
                            : new Settlement.Closing.Void()));
              });
      t.start();
      threads.add(t);
    }
    go.countDown();
    for (Thread t : threads) {
      t.join(5_000);
    }

    assertEquals(8, results.size());
    for (CompletionStage<LedgerClose> r : results) {
      assertSame(results.get(0), r);
    }
    assertNull(await(results.get(0)).problem());
    // Every close() has returned, so any ask it made is in the ledger's mailbox. The ledger takes
    // one message at a time, in order: once a marker close sent now is answered, a second ask for
    // the reservation (a bug) has been counted too.
    TestProbe<GlobalBudget.CloseReply> marker = testKit.createTestProbe();
    ledger
        .ref()
        .tell(new GlobalBudget.Settle("marker", 0, Reservation.Owner.LEDGER_API, marker.getRef()));
    marker.expectMessageClass(GlobalBudget.Closed.class);
    assertEquals(1 + 1, ledger.closes().get(), "one ask for the reservation, then the marker's");
  }
}
