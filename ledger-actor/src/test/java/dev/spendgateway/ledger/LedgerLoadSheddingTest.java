package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerProtocol.Busy;
import dev.spendgateway.ledger.LedgerProtocol.NotFound;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapLimits;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.LogCapturingExtension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.persistence.testkit.JournalOperation;
import org.apache.pekko.persistence.testkit.ProcessingPolicy;
import org.apache.pekko.persistence.testkit.ProcessingResult;
import org.apache.pekko.persistence.testkit.ProcessingSuccess;
import org.apache.pekko.persistence.testkit.WriteEvents;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.PersistenceTestKit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A stalled journal, then a burst: the queue takes what it is sized for and answers the rest busy
 * at once; the callers that waited gave up after their ask timeout, and when the journal comes back
 * nothing they gave up on is booked.
 */
@ExtendWith(TestKitJUnit5Extension.class)
@ExtendWith(LogCapturingExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LedgerLoadSheddingTest {

  @JUnit5TestKit
  final ActorTestKit testKit =
      new JUnit5TestKitBuilder()
          .withCustomConfig(EventSourcedBehaviorTestKit.config().withFallback(ConfigFactory.load()))
          .build();

  /** Holds every journal write while armed, until released: a journal that stopped answering. */
  static final class StallingJournal implements ProcessingPolicy<JournalOperation> {
    final CountDownLatch writeHeld = new CountDownLatch(1);
    final CountDownLatch released = new CountDownLatch(1);
    volatile boolean armed;

    @Override
    public ProcessingResult tryProcess(String persistenceId, JournalOperation operation) {
      if (armed && operation instanceof WriteEvents) {
        writeHeld.countDown();
        try {
          released.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return ProcessingSuccess.getInstance();
    }
  }

  static final class Counts implements LedgerObserver {
    final AtomicInteger dropped = new AtomicInteger();
    final AtomicInteger shed = new AtomicInteger();

    @Override
    public void droppedPastDeadline(int commands) {
      dropped.addAndGet(commands);
    }

    @Override
    public void shed(int commands) {
      shed.addAndGet(commands);
    }
  }

  private static final Duration ASK_TIMEOUT = Duration.ofSeconds(1);
  private static final int QUEUE = 4;

  private final StallingJournal journal = new StallingJournal();

  @AfterEach
  void release() {
    journal.released.countDown();
  }

  private static LedgerSettings settings() {
    CapLimits caps = GlobalBudgetTest.CAPS;
    return new LedgerSettings(
        caps,
        Duration.ofMinutes(15),
        Duration.ofHours(1),
        1000,
        Duration.ofDays(35),
        Duration.ofHours(1),
        ASK_TIMEOUT,
        QUEUE,
        false,
        GlobalBudgetTest.usd("1000"),
        10,
        QUEUE);
  }

  private static ReserveRequest free(String id) {
    return new ReserveRequest(id, Lane.FREE, null, 10_000, 0, 0);
  }

  @Test
  void aStalledWriterShedsTheOverflowAtOnceAndBooksNothingItsCallersGaveUpOn() throws Exception {
    PersistenceTestKit persistence = PersistenceTestKit.create(testKit.system());
    persistence.clearAll();
    persistence.withPolicy(journal);
    Counts counts = new Counts();
    Clock clock = Clock.systemUTC();
    ActorRef<GlobalBudget.Command> ref =
        testKit.spawn(ReservationBatcher.create(settings(), clock, null, counts), "ledger");
    LedgerClient client = LedgerClient.of(testKit.system(), ref, settings(), clock);
    client.awaitReady().toCompletableFuture().get(10, TimeUnit.SECONDS);

    // The journal stops answering while the first reservation is being written.
    journal.armed = true;
    CompletableFuture<ReserveReply> held = client.reserve(free("held")).toCompletableFuture();
    assertTrue(
        journal.writeHeld.await(5, TimeUnit.SECONDS), "the first write never reached the journal");

    // A burst: the queue takes QUEUE commands, the rest are answered busy at once.
    List<CompletableFuture<ReserveReply>> queued = new ArrayList<>();
    for (int i = 0; i < QUEUE; i++) {
      queued.add(client.reserve(free("queued-" + i)).toCompletableFuture());
    }
    List<CompletableFuture<ReserveReply>> overflow = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      overflow.add(client.reserve(free("overflow-" + i)).toCompletableFuture());
    }
    long started = System.nanoTime();
    for (int i = 0; i < overflow.size(); i++) {
      ReserveReply reply = overflow.get(i).get(ASK_TIMEOUT.toMillis() / 2, TimeUnit.MILLISECONDS);
      assertEquals(new Busy("overflow-" + i, 1), reply);
    }
    assertTrue(Duration.ofNanos(System.nanoTime() - started).compareTo(ASK_TIMEOUT) < 0);

    // The queued callers give up after their ask timeout (the edge answers them 503) ...
    for (CompletableFuture<ReserveReply> q : queued) {
      ExecutionException gaveUp =
          org.junit.jupiter.api.Assertions.assertThrows(
              ExecutionException.class,
              () -> q.get(ASK_TIMEOUT.toMillis() * 3, TimeUnit.MILLISECONDS));
      assertInstanceOf(TimeoutException.class, gaveUp.getCause());
    }

    // ... and when the journal answers again, none of them is booked.
    journal.armed = false;
    journal.released.countDown();
    Eventually.until(
        "all " + QUEUE + " queued reservations past their deadline are dropped",
        Duration.ofSeconds(10),
        () -> counts.dropped.get() >= QUEUE);
    assertEquals(QUEUE, counts.dropped.get());
    assertEquals(3, counts.shed.get());
    List<String> booked =
        persistence.persistedInStorage(GlobalBudget.PERSISTENCE_ID.id()).stream()
            .filter(ReservationMade.class::isInstance)
            .map(e -> ((ReservationMade) e).id())
            .toList();
    // The first one was decided before its deadline, only its write was slow: it is booked.
    assertEquals(List.of("held"), booked);
    for (int i = 0; i < QUEUE; i++) {
      assertEquals(
          new NotFound("queued-" + i),
          client.get("queued-" + i).toCompletableFuture().get(5, TimeUnit.SECONDS));
    }

    // The ledger takes new work as before.
    assertInstanceOf(
        Reserved.class,
        client.reserve(free("after")).toCompletableFuture().get(5, TimeUnit.SECONDS));
  }
}
