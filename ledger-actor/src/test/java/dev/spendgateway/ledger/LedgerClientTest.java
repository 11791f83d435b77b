package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.LedgerProtocol.Reserve;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.policy.access.Lane;
import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Where a caller's code after a ledger answer runs: on the client's executor, so it never runs on
 * the ledger's own thread, except for answers handed out inside {@link
 * LedgerClient#answeringInline} (a cluster node's batcher) to a client {@link
 * LedgerClient#answeredInPlace} (the ledger API's), which go on in the answering thread.
 */
class LedgerClientTest {
  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final ExecutorService executor =
      Executors.newSingleThreadExecutor(r -> new Thread(r, "ledger-client-test-executor"));

  @AfterAll
  static void stop() {
    executor.shutdownNow();
    testKit.shutdownTestKit();
  }

  @ParameterizedTest(
      name = "answered inline: {0}, client answered in place: {1}, without a temporary actor: {2}")
  @CsvSource({
    "false, false, false",
    "false, true, false",
    "true, false, false",
    "true, true, false",
    "false, false, true",
    "false, true, true",
    "true, false, true",
    "true, true, true"
  })
  void theCallersCodeRunsOnTheExecutorUnlessTheAnswerIsGivenInlineToAClientThatTakesIt(
      boolean inline, boolean inPlace, boolean direct) throws Exception {
    AtomicReference<Thread> answering = new AtomicReference<>();
    AtomicReference<Reserve> held = new AtomicReference<>();
    // Holds the reserve until told to answer: the caller's stage is attached by then, as it is
    // when a real answer takes a group commit or a round trip.
    ActorRef<Object> ledger =
        testKit.spawn(
            Behaviors.receiveMessage(
                message -> {
                  if (message instanceof Reserve r) {
                    held.set(r);
                  } else {
                    Reserve r = held.get();
                    Runnable answer =
                        () -> r.replyTo().tell(new Reserved(r.id(), r.amountMicros()));
                    answering.set(Thread.currentThread());
                    if (inline) {
                      LedgerClient.answeringInline(answer);
                    } else {
                      answer.run();
                    }
                  }
                  return Behaviors.same();
                }));
    LedgerClient gateways =
        new LedgerClient(
            ledger.narrow(), testKit.system().scheduler(), executor, Duration.ofSeconds(5));
    LedgerClient chosen = direct ? gateways.answeredDirectly(testKit.system()) : gateways;
    LedgerClient client = inPlace ? chosen.answeredInPlace() : chosen;

    AtomicReference<Thread> continued = new AtomicReference<>();
    var reserved =
        client
            .reserve(new ReserveRequest("r-1", Lane.FREE, null, 1_000, 0, 0))
            .thenApply(
                r -> {
                  continued.set(Thread.currentThread());
                  return r;
                })
            .toCompletableFuture();
    while (held.get() == null) {
      Thread.onSpinWait();
    }
    ledger.tell("answer");
    ReserveReply reply = reserved.get(10, TimeUnit.SECONDS);

    assertEquals(new Reserved("r-1", 1_000), reply);
    if (inline && inPlace) {
      assertEquals(answering.get(), continued.get(), "went on in the answering thread");
    } else {
      assertEquals("ledger-client-test-executor", continued.get().getName());
      assertNotEquals(answering.get(), continued.get());
    }
  }

  /**
   * A client answered directly, of a ledger that hands each reserve to {@code onReserve} and
   * answers nothing itself.
   */
  private static LedgerClient directClient(Duration timeout, Consumer<Reserve> onReserve) {
    ActorRef<Object> ledger =
        testKit.spawn(
            Behaviors.receiveMessage(
                message -> {
                  if (message instanceof Reserve r) {
                    onReserve.accept(r);
                  }
                  return Behaviors.same();
                }));
    return new LedgerClient(ledger.narrow(), testKit.system().scheduler(), executor, timeout)
        .answeredDirectly(testKit.system());
  }

  @Test
  void aDirectAskFailsAfterItsTimeoutAndALateReplyChangesNothing() throws Exception {
    AtomicReference<Reserve> held = new AtomicReference<>();
    LedgerClient client = directClient(Duration.ofMillis(100), held::set);

    var reserved =
        client
            .reserve(new ReserveRequest("r-2", Lane.FREE, null, 1_000, 0, 0))
            .toCompletableFuture();
    ExecutionException failed =
        assertThrows(ExecutionException.class, () -> reserved.get(10, TimeUnit.SECONDS));
    assertInstanceOf(TimeoutException.class, failed.getCause());

    held.get().replyTo().tell(new Reserved("r-2", 1_000));
    assertTrue(reserved.isCompletedExceptionally(), "a reply after the timeout is dropped");
  }

  @Test
  void aDirectReplyTargetTakesOnlyTheFirstAnswer() throws Exception {
    LedgerClient client =
        directClient(
            Duration.ofSeconds(5),
            r -> {
              r.replyTo().tell(new Reserved(r.id(), 1));
              r.replyTo().tell(new Reserved(r.id(), 2));
            });

    ReserveReply reply =
        client
            .reserve(new ReserveRequest("r-3", Lane.FREE, null, 1, 0, 0))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    assertEquals(new Reserved("r-3", 1), reply);
  }
}
