package dev.spendgateway.edge.call;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.log.AccessLine;
import dev.spendgateway.edge.log.AccessRecord;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.cost.CostCalculator;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The core's reserve: a held attempt, a refusal naming the worst case, and a lost answer voided.
 */
@ExtendWith(TestKitJUnit5Extension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CallCoreTest {
  private static final long WORST_CASE = 42_000;

  /** One actor system for the class: Pekko's JUnit 5 extension stops it after the last test. */
  @JUnit5TestKit final ActorTestKit testKit = new JUnit5TestKitBuilder().build();

  /**
   * A ledger that answers a reserve with {@code reply} after {@code delay}, and every close at
   * once.
   */
  private CallCore core(
      GlobalBudget.ReserveReply reply, Duration delay, List<GlobalBudget.Command> seen) {
    ActorRef<GlobalBudget.Command> ref =
        testKit.spawn(
            Behaviors.<GlobalBudget.Command>setup(
                ctx ->
                    Behaviors.receiveMessage(
                        command -> {
                          seen.add(command);
                          if (command instanceof GlobalBudget.Reserve r) {
                            ctx.scheduleOnce(delay, r.replyTo(), reply);
                          } else if (command instanceof GlobalBudget.VoidReservation v) {
                            v.replyTo()
                                .tell(
                                    new GlobalBudget.Closed(
                                        v.id(),
                                        dev.spendgateway.ledger.Reservation.Status.VOIDED,
                                        0));
                          }
                          return Behaviors.same();
                        })));
    LedgerClient ledger =
        new LedgerClient(
            ref,
            testKit.system().scheduler(),
            testKit.system().executionContext(),
            Duration.ofMillis(200));
    CallServices services =
        new CallServices(
            null,
            null,
            ledger,
            null,
            null,
            Clock.systemUTC(),
            null,
            Duration.ofSeconds(1),
            CallMetrics.NONE,
            new InFlightCalls());
    return new CallCore(services, System::nanoTime);
  }

  private static ReserveRequest request() {
    return new ReserveRequest("gw-test-1", Lane.APP, "b1", WORST_CASE, 5_000_000L, 50_000_000L);
  }

  private static final Settlement.Pricing UNUSED = usage -> new CostCalculator.Settlement.Billed(0);

  private static CallCore.Reserving reserve(CallCore core) throws Exception {
    AccessLine line =
        AccessLine.arrived(Instant.now(), System.nanoTime(), "/test").withRequestId("req-1");
    return core.reserve(request(), Shape.OPENAI, UNUSED, line)
        .toCompletableFuture()
        .get(5, TimeUnit.SECONDS);
  }

  @Test
  void aReservedAnswerHoldsAnAttemptForTheAmountTheLedgerHolds() throws Exception {
    List<GlobalBudget.Command> seen = new CopyOnWriteArrayList<>();
    CallCore.Reserving r =
        reserve(core(new GlobalBudget.Reserved("gw-test-1", WORST_CASE), Duration.ZERO, seen));
    CallAttempt attempt = assertInstanceOf(CallCore.Reserving.Held.class, r).attempt();
    assertEquals(WORST_CASE, attempt.heldMicros());
  }

  @Test
  void aReserveTheLedgerDidNotAnswerInTimeIsVoidedByItsOwnId() throws Exception {
    List<GlobalBudget.Command> seen = new CopyOnWriteArrayList<>();
    CallCore core =
        core(new GlobalBudget.Reserved("gw-test-1", WORST_CASE), Duration.ofMillis(600), seen);

    CallCore.Reserving r = reserve(core);

    BudgetRefusal refusal = assertInstanceOf(CallCore.Reserving.NotHeld.class, r).refusal();
    assertEquals(503, refusal.status());
    assertEquals("ledger_unavailable", refusal.errorClass());
    Eventually.until(
        "the late reservation is voided",
        Duration.ofSeconds(5),
        () -> seen.stream().anyMatch(c -> c instanceof GlobalBudget.VoidReservation));
    GlobalBudget.VoidReservation voided =
        (GlobalBudget.VoidReservation)
            seen.stream()
                .filter(c -> c instanceof GlobalBudget.VoidReservation)
                .findFirst()
                .orElseThrow();
    assertEquals(
        "gw-test-1", voided.id(), "the id the gateway sent, so a late booking is released at once");
  }

  @Test
  void aRefusedReserveIsA402NamingTheCallsWorstCase() throws Exception {
    List<GlobalBudget.Command> seen = new CopyOnWriteArrayList<>();
    CallCore.Reserving r =
        reserve(
            core(
                new GlobalBudget.Refused(
                    "gw-test-1", dev.spendgateway.policy.caps.CapName.BRAND_DAILY, "b1", 1),
                Duration.ZERO,
                seen));

    BudgetRefusal refusal = assertInstanceOf(CallCore.Reserving.NotHeld.class, r).refusal();
    assertEquals(402, refusal.status());
    assertEquals("budget_exceeded", refusal.errorClass());
    String body =
        ((org.apache.pekko.http.javadsl.model.HttpEntity.Strict) refusal.response().entity())
            .getData()
            .utf8String();
    assertTrue(body.contains("this call needs up to $0.042"), body);
    assertTrue(
        seen.stream().noneMatch(c -> c instanceof GlobalBudget.VoidReservation),
        "a refused id holds nothing");
  }

  @Test
  void aBusyLedgerIsA503WithRetryAfterAndNothingToVoid() throws Exception {
    List<GlobalBudget.Command> seen = new CopyOnWriteArrayList<>();
    CallCore.Reserving r =
        reserve(core(new GlobalBudget.Busy("gw-test-1", 2), Duration.ZERO, seen));

    BudgetRefusal refusal = assertInstanceOf(CallCore.Reserving.NotHeld.class, r).refusal();
    assertEquals(503, refusal.status());
    assertEquals("ledger_busy", refusal.errorClass());
    assertEquals("2", refusal.response().getHeader("retry-after").map(h -> h.value()).orElse(null));
    assertTrue(
        seen.stream().noneMatch(c -> c instanceof GlobalBudget.VoidReservation),
        "a busy ledger decided nothing: there is no reservation to release");
  }

  /** When the caller's connection ends, relative to the ledger's answer to the reserve. */
  enum Leaves {
    NEVER,
    NO_SIGNAL,
    BEFORE_THE_ANSWER,
    AFTER_THE_ANSWER
  }

  /**
   * A caller who hangs up while the ledger decides its reserve: the granted hold is voided at once
   * and the attempt ends unsent with a 499 {@code caller_gone} line; a caller who stays (or whose
   * connection is not watched, or who leaves only after the answer) gets the held attempt.
   */
  @ParameterizedTest(name = "the caller leaves {0}")
  @EnumSource(Leaves.class)
  void aReserveGrantedToACallerWhoHungUpIsReleasedAndNeverSent(Leaves leaves) throws Exception {
    List<GlobalBudget.Command> seen = new CopyOnWriteArrayList<>();
    CallCore core =
        core(new GlobalBudget.Reserved("gw-test-1", WORST_CASE), Duration.ofMillis(150), seen);
    CompletableFuture<Void> gone = new CompletableFuture<>();
    AccessLine line =
        AccessLine.arrived(Instant.now(), System.nanoTime(), "/test").withRequestId("req-1");
    CompletableFuture<CallCore.Reserving> reserving =
        core.reserve(
                request(),
                Shape.OPENAI,
                UNUSED,
                line,
                leaves == Leaves.NO_SIGNAL ? Optional.empty() : Optional.of(gone))
            .toCompletableFuture();
    if (leaves == Leaves.BEFORE_THE_ANSWER) {
      gone.complete(null); // the ledger answers 150 ms later
    }
    CallCore.Reserving r = reserving.get(5, TimeUnit.SECONDS);
    if (leaves == Leaves.AFTER_THE_ANSWER) {
      gone.complete(null);
    }

    if (leaves != Leaves.BEFORE_THE_ANSWER) {
      CallAttempt attempt = assertInstanceOf(CallCore.Reserving.Held.class, r).attempt();
      assertFalse(attempt.hasEnded(), "held for the provider call");
      assertTrue(seen.stream().noneMatch(c -> c instanceof GlobalBudget.VoidReservation));
      return;
    }
    CallAttempt attempt = assertInstanceOf(CallCore.Reserving.CallerGone.class, r).attempt();
    assertTrue(attempt.hasEnded(), "ended before anything was sent");
    AccessRecord record = attempt.written().toCompletableFuture().get(5, TimeUnit.SECONDS);
    assertEquals(499, record.status());
    assertEquals("caller_gone", record.errorClass());
    assertEquals(
        0, new java.math.BigDecimal(record.settledUsd()).signum(), "voided: nothing billed");
    assertTrue(
        seen.stream()
            .anyMatch(
                c -> c instanceof GlobalBudget.VoidReservation v && v.id().equals("gw-test-1")),
        "the hold is released at once: " + seen);
  }
}
