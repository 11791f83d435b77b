package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.LedgerEvents.Compacted;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.GroupCommit;
import dev.spendgateway.ledger.LedgerEvents.ReservationExpired;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerEvents.ReservationRefused;
import dev.spendgateway.ledger.LedgerEvents.ReservationSettled;
import dev.spendgateway.ledger.LedgerEvents.ReservationVoided;
import dev.spendgateway.ledger.LedgerEvents.SpendAdjusted;
import dev.spendgateway.ledger.LedgerProtocol.Adjust;
import dev.spendgateway.ledger.LedgerProtocol.AdjustReply;
import dev.spendgateway.ledger.LedgerProtocol.Adjusted;
import dev.spendgateway.ledger.LedgerProtocol.Batch;
import dev.spendgateway.ledger.LedgerProtocol.BatchWritten;
import dev.spendgateway.ledger.LedgerProtocol.CapUsage;
import dev.spendgateway.ledger.LedgerProtocol.CloseReply;
import dev.spendgateway.ledger.LedgerProtocol.Closed;
import dev.spendgateway.ledger.LedgerProtocol.Command;
import dev.spendgateway.ledger.LedgerProtocol.Compact;
import dev.spendgateway.ledger.LedgerProtocol.Conflict;
import dev.spendgateway.ledger.LedgerProtocol.ExpireDue;
import dev.spendgateway.ledger.LedgerProtocol.Forbidden;
import dev.spendgateway.ledger.LedgerProtocol.GetReservation;
import dev.spendgateway.ledger.LedgerProtocol.GetUsage;
import dev.spendgateway.ledger.LedgerProtocol.Invalid;
import dev.spendgateway.ledger.LedgerProtocol.NotFound;
import dev.spendgateway.ledger.LedgerProtocol.NotOpen;
import dev.spendgateway.ledger.LedgerProtocol.OperatorSettle;
import dev.spendgateway.ledger.LedgerProtocol.OperatorVoid;
import dev.spendgateway.ledger.LedgerProtocol.Refused;
import dev.spendgateway.ledger.LedgerProtocol.ReservationReply;
import dev.spendgateway.ledger.LedgerProtocol.ReservationView;
import dev.spendgateway.ledger.LedgerProtocol.Reserve;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.LedgerProtocol.Settle;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import dev.spendgateway.ledger.LedgerProtocol.VoidReservation;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapLimits;
import dev.spendgateway.policy.caps.CapName;
import dev.spendgateway.policy.caps.CapWindows;
import dev.spendgateway.policy.caps.Spend;
import dev.spendgateway.policy.money.Micros;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.LogCapturingExtension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResult;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResultWithReply;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** One test per command and per refusal reason: reply, event and new state together. */
@ExtendWith(TestKitJUnit5Extension.class)
@ExtendWith(LogCapturingExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GlobalBudgetTest {

  @JUnit5TestKit
  final ActorTestKit testKit =
      new JUnit5TestKitBuilder()
          .withCustomConfig(EventSourcedBehaviorTestKit.config().withFallback(ConfigFactory.load()))
          .build();

  static final CapLimits CAPS =
      new CapLimits(usd("40"), usd("600"), usd("3"), usd("25"), usd("0.60"));

  static LedgerSettings settings(int snapshotEvery) {
    return new LedgerSettings(
        CAPS,
        Duration.ofMinutes(15),
        Duration.ofHours(1),
        snapshotEvery,
        Duration.ofDays(35),
        Duration.ofHours(1),
        Duration.ofSeconds(5),
        1000,
        false,
        usd("1000"));
  }

  private final TestClock clock = TestClock.at("2026-11-30T10:00:00Z");
  private EventSourcedBehaviorTestKit<Command, Event, LedgerState> kit;

  @BeforeEach
  void setUp() {
    clock.set("2026-11-30T10:00:00Z");
    kit = newKit(1000);
  }

  private EventSourcedBehaviorTestKit<Command, Event, LedgerState> newKit(int snapshotEvery) {
    EventSourcedBehaviorTestKit<Command, Event, LedgerState> k =
        EventSourcedBehaviorTestKit.create(
            testKit.system(),
            GlobalBudget.create(settings(snapshotEvery), clock),
            EventSourcedBehaviorTestKit.enabledSerializationSettings().withVerifyCommands(false));
    k.clear();
    return k;
  }

  static long usd(String amount) {
    return Micros.ofUsdExact(new BigDecimal(amount));
  }

  private CommandResultWithReply<Command, Event, LedgerState, ReserveReply> reserve(
      String id, Lane lane, String subject, String amount) {
    return reserveApp(id, lane, subject, amount, "0", "0");
  }

  private CommandResultWithReply<Command, Event, LedgerState, ReserveReply> reserveApp(
      String id, Lane lane, String subject, String amount, String brandDaily, String brandMonthly) {
    return kit.runCommand(
        replyTo ->
            new Reserve(
                id, lane, subject, usd(amount), usd(brandDaily), usd(brandMonthly), replyTo));
  }

  private CommandResultWithReply<Command, Event, LedgerState, CloseReply> settle(
      String id, String actual) {
    return kit.runCommand(replyTo -> new Settle(id, usd(actual), replyTo));
  }

  private CommandResultWithReply<Command, Event, LedgerState, AdjustReply> adjust(
      String id, String operator, String reason, Lane lane, String subject, String deltaUsd) {
    return kit.runCommand(
        replyTo ->
            new Adjust(
                id,
                operator,
                reason,
                lane,
                subject,
                usd(deltaUsd),
                CapWindows.dayKey(clock.instant()),
                AdjustmentScope.REFUND,
                replyTo));
  }

  private static Spend spend(LedgerState state, CapName cap, String subject, String window) {
    return state.spendOn(new CapKey(cap, subject, window));
  }

  private static final String DAY = "2026-11-30";
  private static final String MONTH = "2026-11";

  // --- reserve ---------------------------------------------------------------------------------

  @Test
  void reserveHoldsTheAmountOnEveryCapOfTheLane() {
    var result = reserveApp("r-1", Lane.APP, "b1", "0.30", "5", "50");

    assertEquals(new Reserved("r-1", usd("0.30")), result.reply());
    ReservationMade made = result.eventOfType(ReservationMade.class);
    assertEquals(
        new ReservationMade(
            "r-1",
            Lane.APP,
            "b1",
            usd("0.30"),
            usd("5"),
            usd("50"),
            clock.instant(),
            clock.instant().plus(Duration.ofMinutes(15)),
            Owner.GATEWAY),
        made);
    LedgerState state = result.state();
    assertEquals(Status.RESERVED, state.reservation("r-1").orElseThrow().status());
    assertEquals(new Spend(0, usd("0.30")), spend(state, CapName.GLOBAL_DAILY, null, DAY));
    assertEquals(new Spend(0, usd("0.30")), spend(state, CapName.GLOBAL_MONTHLY, null, MONTH));
    assertEquals(new Spend(0, usd("0.30")), spend(state, CapName.BRAND_DAILY, "b1", DAY));
    assertEquals(new Spend(0, usd("0.30")), spend(state, CapName.BRAND_MONTHLY, "b1", MONTH));
    assertEquals(1, state.openReservations());
  }

  @Test
  void refusedByGlobalDailyNamingItsHeadroom() {
    reserve("big", Lane.FREE, null, "2.80");
    reserveApp("big2", Lane.APP, "b1", "37.00", "100", "100");

    var result = reserveApp("r-1", Lane.APP, "b1", "0.30", "100", "100");

    assertEquals(new Refused("r-1", CapName.GLOBAL_DAILY, null, usd("0.20")), result.reply());
    ReservationRefused refused = result.eventOfType(ReservationRefused.class);
    assertEquals(CapName.GLOBAL_DAILY, refused.cap());
    assertEquals(usd("0.20"), refused.headroomMicros());
    assertEquals(usd("40"), refused.limitMicros());
    assertEquals(Status.REFUSED, result.state().reservation("r-1").orElseThrow().status());
    assertEquals(
        new Spend(0, usd("39.80")), spend(result.state(), CapName.GLOBAL_DAILY, null, DAY));
  }

  @Test
  void refusedByGlobalMonthlyAfterFifteenFullDays() {
    for (int day = 1; day <= 15; day++) {
      clock.set(String.format("2026-11-%02dT12:00:00Z", day));
      assertInstanceOf(
          Reserved.class, reserveApp("d" + day, Lane.APP, "b1", "40", "40", "1000").reply());
    }
    clock.set("2026-11-16T12:00:00Z");
    var result = reserveApp("r-1", Lane.APP, "b1", "0.30", "40", "1000");
    assertEquals(new Refused("r-1", CapName.GLOBAL_MONTHLY, null, 0), result.reply());
    assertEquals(CapName.GLOBAL_MONTHLY, result.eventOfType(ReservationRefused.class).cap());
  }

  @Test
  void refusedByFreeDaily() {
    reserve("f1", Lane.FREE, null, "2.80");
    var result = reserve("f2", Lane.FREE, null, "0.30");
    assertEquals(new Refused("f2", CapName.FREE_DAILY, null, usd("0.20")), result.reply());
    assertEquals(CapName.FREE_DAILY, result.eventOfType(ReservationRefused.class).cap());
    assertEquals(new Spend(0, usd("2.80")), spend(result.state(), CapName.FREE_DAILY, null, DAY));
  }

  @Test
  void refusedByTrialDailyAcrossPreviews() {
    for (int p = 1; p <= 41; p++) {
      assertInstanceOf(Reserved.class, reserve("t" + p, Lane.TRIAL, "p" + p, "0.60").reply());
    }
    var result = reserve("t42", Lane.TRIAL, "p42", "0.60");
    assertEquals(new Refused("t42", CapName.TRIAL_DAILY, null, usd("0.40")), result.reply());
    assertEquals(CapName.TRIAL_DAILY, result.eventOfType(ReservationRefused.class).cap());
  }

  @Test
  void refusedByPreviewLifetimeEvenOnALaterDay() {
    reserve("t1", Lane.TRIAL, "p1", "0.40");
    var result = reserve("t2", Lane.TRIAL, "p1", "0.30");
    assertEquals(new Refused("t2", CapName.PREVIEW_LIFETIME, "p1", usd("0.20")), result.reply());
    assertEquals("lifetime", result.eventOfType(ReservationRefused.class).window());

    clock.set("2027-02-01T00:00:00Z");
    assertEquals(
        new Refused("t3", CapName.PREVIEW_LIFETIME, "p1", usd("0.20")),
        reserve("t3", Lane.TRIAL, "p1", "0.30").reply());
    assertInstanceOf(Reserved.class, reserve("t4", Lane.TRIAL, "p2", "0.30").reply());
  }

  @Test
  void refusedByBrandDaily() {
    reserveApp("a1", Lane.APP, "b1", "4.80", "5", "50");
    var result = reserveApp("a2", Lane.APP, "b1", "0.30", "5", "50");
    assertEquals(new Refused("a2", CapName.BRAND_DAILY, "b1", usd("0.20")), result.reply());
    assertEquals(CapName.BRAND_DAILY, result.eventOfType(ReservationRefused.class).cap());
    // another brand is not affected
    assertInstanceOf(Reserved.class, reserveApp("a3", Lane.APP, "b2", "0.30", "5", "50").reply());
  }

  @Test
  void refusedByBrandMonthly() {
    reserveApp("a1", Lane.APP, "b1", "9.90", "20", "10");
    clock.set("2026-11-30T23:00:00Z");
    var result = reserveApp("a2", Lane.APP, "b1", "0.30", "20", "10");
    assertEquals(new Refused("a2", CapName.BRAND_MONTHLY, "b1", usd("0.10")), result.reply());
  }

  @Test
  void invalidReserveChangesNothing() {
    var negative = reserve("r-1", Lane.FREE, null, "0").state();
    var result =
        kit.<ReserveReply>runCommand(
            replyTo -> new Reserve("r-2", Lane.FREE, null, -1, 0, 0, replyTo));
    assertEquals("amountUsd", ((Invalid) result.reply()).field());
    assertTrue(result.hasNoEvents());
    var noBrand =
        kit.<ReserveReply>runCommand(
            replyTo -> new Reserve("r-3", Lane.APP, null, 1, 5, 5, replyTo));
    assertEquals("brand", ((Invalid) noBrand.reply()).field());
    assertEquals(negative, noBrand.state());
  }

  // --- windows ---------------------------------------------------------------------------------

  @Test
  void dailyCapsRollOverAtUtcMidnight() {
    reserveApp("a1", Lane.APP, "b1", "40", "100", "1000");
    assertInstanceOf(
        Refused.class, reserveApp("a2", Lane.APP, "b1", "0.01", "100", "1000").reply());

    clock.set("2026-12-01T00:00:00Z");
    var nextDay = reserveApp("a3", Lane.APP, "b1", "0.01", "100", "1000");
    assertInstanceOf(Reserved.class, nextDay.reply());
    assertEquals(
        new Spend(0, usd("0.01")),
        spend(nextDay.state(), CapName.GLOBAL_DAILY, null, "2026-12-01"));
    assertEquals(
        new Spend(0, usd("0.01")), spend(nextDay.state(), CapName.GLOBAL_MONTHLY, null, "2026-12"));
  }

  @Test
  void monthlyCapsRollOverOnTheFirst() {
    reserveApp("a1", Lane.APP, "b1", "10", "20", "10");
    clock.set("2026-11-30T23:59:59Z");
    assertEquals(
        CapName.BRAND_MONTHLY,
        ((Refused) reserveApp("a2", Lane.APP, "b1", "1", "20", "10").reply()).cap());
    clock.set("2026-12-01T00:00:00Z");
    assertInstanceOf(Reserved.class, reserveApp("a3", Lane.APP, "b1", "1", "20", "10").reply());
  }

  @Test
  void spendCountsInTheWindowWhereItWasReserved() {
    clock.set("2026-11-30T23:59:00Z");
    reserve("r-1", Lane.FREE, null, "1.00");
    clock.set("2026-12-01T00:05:00Z");
    LedgerState state = settle("r-1", "0.70").state();
    assertEquals(new Spend(usd("0.70"), 0), spend(state, CapName.GLOBAL_DAILY, null, DAY));
    assertEquals(new Spend(usd("0.70"), 0), spend(state, CapName.GLOBAL_MONTHLY, null, MONTH));
    assertEquals(Spend.NONE, spend(state, CapName.GLOBAL_DAILY, null, "2026-12-01"));
  }

  // --- settle and void -------------------------------------------------------------------------

  @Test
  void settleClosesAtTheRealCost() {
    reserve("r-1", Lane.FREE, null, "0.30");
    var result = settle("r-1", "0.12");

    assertEquals(new Closed("r-1", Status.SETTLED, usd("0.12")), result.reply());
    ReservationSettled settled = result.eventOfType(ReservationSettled.class);
    assertEquals(usd("0.30"), settled.reservedMicros());
    assertEquals(usd("0.12"), settled.actualMicros());
    assertEquals(new Spend(usd("0.12"), 0), spend(result.state(), CapName.FREE_DAILY, null, DAY));
    assertEquals(0, result.state().openReservations());
  }

  @Test
  void settleAboveReserveIsRecordedAsIs() {
    reserve("r-1", Lane.FREE, null, "0.30");
    var result = settle("r-1", "0.45");
    assertEquals(new Closed("r-1", Status.SETTLED, usd("0.45")), result.reply());
    assertTrue(result.eventOfType(ReservationSettled.class).overReserve());
    assertEquals(new Spend(usd("0.45"), 0), spend(result.state(), CapName.GLOBAL_DAILY, null, DAY));
  }

  @Test
  void voidClosesAtZero() {
    reserve("r-1", Lane.FREE, null, "0.30");
    var result = kit.<CloseReply>runCommand(replyTo -> new VoidReservation("r-1", replyTo));
    assertEquals(new Closed("r-1", Status.VOIDED, 0), result.reply());
    assertEquals(usd("0.30"), result.eventOfType(ReservationVoided.class).reservedMicros());
    assertEquals(new Spend(0, 0), spend(result.state(), CapName.GLOBAL_DAILY, null, DAY));
  }

  @Test
  void settlingTwiceWithTheSameAmountReturnsTheFirstResultAndWithAnotherIsAConflict() {
    reserve("r-1", Lane.FREE, null, "0.30");
    settle("r-1", "0.12");
    var again = settle("r-1", "0.12");
    assertEquals(new Closed("r-1", Status.SETTLED, usd("0.12")), again.reply());
    assertTrue(again.hasNoEvents());
    var other = settle("r-1", "0.20");
    assertInstanceOf(Conflict.class, other.reply());
    assertTrue(other.hasNoEvents());
    assertEquals(usd("0.12"), other.state().reservation("r-1").orElseThrow().actualMicros());
    var voidAfter = kit.<CloseReply>runCommand(replyTo -> new VoidReservation("r-1", replyTo));
    assertEquals(new Closed("r-1", Status.SETTLED, usd("0.12")), voidAfter.reply());
    assertTrue(voidAfter.hasNoEvents());
  }

  @Test
  void settleOfUnknownOrRefusedIdChangesNothing() {
    var unknown = settle("nope", "0.10");
    assertEquals(new NotFound("nope"), unknown.reply());
    assertTrue(unknown.hasNoEvents());

    reserve("big", Lane.FREE, null, "3");
    reserve("r-1", Lane.FREE, null, "0.30");
    var refused = settle("r-1", "0.10");
    assertEquals(new NotOpen("r-1", Status.REFUSED), refused.reply());
    assertTrue(refused.hasNoEvents());
  }

  // --- idempotency -----------------------------------------------------------------------------

  @Test
  void sameIdSameRequestGetsTheSameAnswerAndHoldsOnce() {
    reserve("r-1", Lane.FREE, null, "0.30");
    var again = reserve("r-1", Lane.FREE, null, "0.30");
    assertEquals(new Reserved("r-1", usd("0.30")), again.reply());
    assertTrue(again.hasNoEvents());
    assertEquals(new Spend(0, usd("0.30")), spend(again.state(), CapName.FREE_DAILY, null, DAY));
    // still the same answer once settled
    settle("r-1", "0.10");
    assertEquals(new Reserved("r-1", usd("0.30")), reserve("r-1", Lane.FREE, null, "0.30").reply());
  }

  @Test
  void sameIdDifferentFieldsIsAConflict() {
    reserve("r-1", Lane.FREE, null, "0.30");
    var result = reserve("r-1", Lane.FREE, null, "0.31");
    assertInstanceOf(Conflict.class, result.reply());
    assertTrue(result.hasNoEvents());
    assertInstanceOf(Conflict.class, reserveApp("r-1", Lane.APP, "b1", "0.30", "5", "5").reply());
  }

  @Test
  void aRefusedIdStaysRefusedWhenRoomFreesUp() {
    reserve("big", Lane.FREE, null, "3");
    Refused first = (Refused) reserve("r-1", Lane.FREE, null, "0.30").reply();
    kit.<CloseReply>runCommand(replyTo -> new VoidReservation("big", replyTo));

    var again = reserve("r-1", Lane.FREE, null, "0.30");
    assertEquals(first, again.reply());
    assertTrue(again.hasNoEvents());
  }

  @Test
  void idempotencyHoldsAcrossARestart() {
    reserve("r-1", Lane.FREE, null, "0.30");
    reserve("big", Lane.FREE, null, "3");
    kit.restart();
    assertEquals(new Reserved("r-1", usd("0.30")), reserve("r-1", Lane.FREE, null, "0.30").reply());
    assertInstanceOf(Refused.class, reserve("big", Lane.FREE, null, "3").reply());
    assertEquals(new Spend(0, usd("0.30")), spend(kit.getState(), CapName.FREE_DAILY, null, DAY));
  }

  // --- group commit ----------------------------------------------------------------------------

  @Test
  void aBatchIsDecidedInOrderAndWrittenOnce() {
    TestProbe<ReserveReply> a = testKit.createTestProbe();
    TestProbe<ReserveReply> b = testKit.createTestProbe();
    TestProbe<ReserveReply> dup = testKit.createTestProbe();
    TestProbe<CloseReply> s = testKit.createTestProbe();
    var result =
        kit.<BatchWritten>runCommand(
            replyTo ->
                new Batch(
                    List.of(
                        new Reserve("a", Lane.FREE, null, usd("2.00"), 0, 0, a.ref()),
                        new Reserve("b", Lane.FREE, null, usd("1.50"), 0, 0, b.ref()),
                        new Reserve("a", Lane.FREE, null, usd("2.00"), 0, 0, dup.ref()),
                        new Settle("a", usd("0.50"), s.ref())),
                    replyTo));

    assertEquals(new BatchWritten(4, 3), result.reply());
    // One journal row for the whole batch, holding its three facts in the order they were decided.
    assertEquals(1, result.events().size());
    var row = assertInstanceOf(GroupCommit.class, result.events().get(0));
    assertEquals(
        List.of(ReservationMade.class, ReservationRefused.class, ReservationSettled.class),
        row.facts().stream().map(Object::getClass).toList());
    assertEquals(new Reserved("a", usd("2.00")), a.receiveMessage());
    assertEquals(new Refused("b", CapName.FREE_DAILY, null, usd("1.00")), b.receiveMessage());
    assertEquals(new Reserved("a", usd("2.00")), dup.receiveMessage());
    assertEquals(new Closed("a", Status.SETTLED, usd("0.50")), s.receiveMessage());
    assertEquals(new Spend(usd("0.50"), 0), spend(result.state(), CapName.FREE_DAILY, null, DAY));
  }

  @Test
  void aCrashBetweenDecidingAndWritingAdmitsNothingAndLosesNothingAcknowledged() {
    reserve("acked", Lane.FREE, null, "1.00");
    var ledger = testKit.spawn(GlobalBudget.create(settings(1000), clock));
    TestProbe<ReserveReply> caller = testKit.createTestProbe();
    TestProbe<BatchWritten> batcher = testKit.createTestProbe();
    TestProbe<ReservationReply> query = testKit.createTestProbe();
    ledger.tell(new GetReservation("acked", query.ref()));
    assertInstanceOf(ReservationView.class, query.receiveMessage());

    // The batch is decided in memory (the reservation fits), then its journal write fails: the
    // ledger restarts and replays the journal.
    kit.persistenceTestKit().failNextPersisted();
    ledger.tell(
        new Batch(
            List.of(new Reserve("lost", Lane.FREE, null, usd("1.00"), 0, 0, caller.ref())),
            batcher.ref()));
    caller.expectNoMessage(Duration.ofMillis(500));
    batcher.expectNoMessage(Duration.ZERO);

    ledger.tell(new GetReservation("lost", query.ref()));
    assertEquals(new NotFound("lost"), query.receiveMessage(Duration.ofSeconds(5)));
    ledger.tell(new GetReservation("acked", query.ref()));
    assertEquals(Status.RESERVED, ((ReservationView) query.receiveMessage()).status());

    // A retry of the unanswered id is decided afresh, once.
    ledger.tell(new Reserve("lost", Lane.FREE, null, usd("1.00"), 0, 0, caller.ref()));
    assertEquals(new Reserved("lost", usd("1.00")), caller.receiveMessage());
    TestProbe<Usage> usage = testKit.createTestProbe();
    ledger.tell(new GetUsage(Optional.empty(), usage.ref()));
    assertEquals(usd("2.00"), usage.receiveMessage().caps().get(0).reservedMicros());
    testKit.stop(ledger);
  }

  // --- expiry ----------------------------------------------------------------------------------

  @Test
  void anOpenReservationExpiresAtItsWorstCase() {
    reserve("r-1", Lane.FREE, null, "0.30");
    clock.advance(Duration.ofMinutes(14));
    assertTrue(kit.runCommand(new ExpireDue()).hasNoEvents());

    clock.advance(Duration.ofMinutes(1));
    CommandResult<Command, Event, LedgerState> result = kit.runCommand(new ExpireDue());
    ReservationExpired expired = result.eventOfType(ReservationExpired.class);
    assertEquals(usd("0.30"), expired.reservedMicros());
    assertEquals(Status.EXPIRED, result.state().reservation("r-1").orElseThrow().status());
    assertEquals(new Spend(usd("0.30"), 0), spend(result.state(), CapName.FREE_DAILY, null, DAY));
    // a late settle gets the first result
    assertEquals(new Closed("r-1", Status.EXPIRED, usd("0.30")), settle("r-1", "0.10").reply());
  }

  @Test
  void expiryIsReArmedAfterARestart() throws Exception {
    reserve("r-1", Lane.FREE, null, "0.30");
    reserve("r-2", Lane.FREE, null, "0.20");
    settle("r-2", "0.05");
    clock.advance(Duration.ofMinutes(16));
    kit.restart();
    // recovery itself never expires (replay reads no clock); the ledger then checks at once
    Eventually.until(
        "r-1 expires once the restarted ledger checks",
        Duration.ofSeconds(5),
        () -> !kit.getState().reservation("r-1").orElseThrow().isOpen());
    LedgerState state = kit.getState();
    assertEquals(Status.EXPIRED, state.reservation("r-1").orElseThrow().status());
    assertEquals(Status.SETTLED, state.reservation("r-2").orElseThrow().status());
    assertEquals(new Spend(usd("0.35"), 0), spend(state, CapName.FREE_DAILY, null, DAY));
  }

  // --- recovery --------------------------------------------------------------------------------

  @Test
  void recoveryFromSnapshotAndJournalReproducesTheSameState() {
    kit = newKit(5);
    clock.set("2026-11-30T23:50:00Z");
    for (int i = 0; i < 6; i++) {
      reserveApp("a" + i, Lane.APP, "b" + (i % 2), "1.10", "5", "50");
    }
    settle("a0", "0.40");
    kit.<CloseReply>runCommand(replyTo -> new VoidReservation("a1", replyTo));
    reserve("t1", Lane.TRIAL, "p1", "0.70"); // refused: preview lifetime
    settle("a2", "1.10");
    clock.set("2026-12-01T00:01:00Z"); // a new day; the open ones are not yet expired
    reserve("f1", Lane.FREE, null, "0.30");
    adjust("adj-1", "ops", "credit", Lane.FREE, null, "-0.10");
    LedgerState before = kit.getState();
    assertTrue(kit.snapshotTestKit().isPresent());

    LedgerState fromSnapshot = kit.restart().state();
    assertEquals(before, fromSnapshot);

    kit.snapshotTestKit().orElseThrow().clearAll();
    LedgerState fromJournalOnly = kit.restart().state();
    assertEquals(before, fromJournalOnly);
  }

  // --- operator, queries, compaction ------------------------------------------------------------

  @Test
  void anOperatorCreditLowersSettledSpend() {
    reserve("f1", Lane.FREE, null, "3");
    settle("f1", "3");
    assertInstanceOf(Refused.class, reserve("f2", Lane.FREE, null, "0.50").reply());
    var result = adjust("adj-1", "alice", "refund", Lane.FREE, null, "-1");
    assertEquals(
        new Adjusted(
            "adj-1", Lane.FREE, null, -usd("1"), "alice", "refund", DAY, AdjustmentScope.REFUND),
        result.reply());
    SpendAdjusted adjusted = result.eventOfType(SpendAdjusted.class);
    assertEquals("alice", adjusted.operator());
    assertEquals(new Spend(usd("2"), 0), spend(result.state(), CapName.FREE_DAILY, null, DAY));
    assertInstanceOf(Reserved.class, reserve("f3", Lane.FREE, null, "0.50").reply());
  }

  @Test
  void theSameAdjustmentIdAgainAnswersTheFirstResultAndAppliesOnce() {
    reserveApp("a1", Lane.APP, "b1", "1.50", "5", "50");
    settle("a1", "1.50");
    Adjusted first = (Adjusted) adjust("adj-1", "alice", "refund", Lane.APP, "b1", "-1").reply();
    clock.advance(Duration.ofMinutes(5));

    // A retry after a timeout: same id and fields (the reason may be retyped); the first one
    // stands.
    var again = adjust("adj-1", "alice", "refund (retry)", Lane.APP, "b1", "-1");
    assertEquals(first, again.reply());
    assertEquals("refund", ((Adjusted) again.reply()).reason());
    assertTrue(again.hasNoEvents());
    assertEquals(new Spend(usd("0.50"), 0), spend(again.state(), CapName.BRAND_DAILY, "b1", DAY));
    assertEquals(new Spend(usd("0.50"), 0), spend(again.state(), CapName.GLOBAL_DAILY, null, DAY));
  }

  @ParameterizedTest(name = "adj-1 again with {0} is a conflict")
  @CsvSource({
    "another amount,   alice, app,   b1, -2",
    "the opposite sign, alice, app,  b1, 1",
    "another brand,    alice, app,   b2, -1",
    "another lane,     alice, trial, b1, -1",
    "another operator, bob,   app,   b1, -1",
  })
  void theSameAdjustmentIdForADifferentAdjustmentIsAConflict(
      String what, String operator, String lane, String subject, String deltaUsd) {
    reserveApp("a1", Lane.APP, "b1", "3", "5", "50");
    settle("a1", "3");
    assertInstanceOf(
        Adjusted.class, adjust("adj-1", "alice", "refund", Lane.APP, "b1", "-1").reply());
    LedgerState before = kit.getState();

    var result =
        adjust(
            "adj-1", operator, "refund", Lane.fromWireName(lane).orElseThrow(), subject, deltaUsd);
    Conflict conflict = assertInstanceOf(Conflict.class, result.reply());
    assertEquals("adj-1", conflict.id());
    assertTrue(
        conflict
            .message()
            .startsWith("adjustment id adj-1 was already used for a different adjustment"),
        conflict.message());
    assertTrue(result.hasNoEvents());
    assertEquals(before, result.state());
  }

  @Test
  void adjustmentIdsAreRememberedAcrossRestartsSnapshotsAndCompaction() {
    kit = newKit(3);
    reserve("f1", Lane.FREE, null, "0.80");
    settle("f1", "0.80");
    Adjusted first =
        (Adjusted)
            adjust("adj-1", "alice", "refund", Lane.FREE, null, "-0.50")
                .reply(); // event 3: a snapshot that holds it
    adjust("adj-2", "bob", "missed invoice line", Lane.APP, "b1", "0.20"); // after the snapshot
    LedgerState before = kit.getState();
    assertEquals(2, before.knownAdjustments());

    assertEquals(before, kit.restart().state()); // snapshot + journal
    var again = adjust("adj-1", "alice", "refund", Lane.FREE, null, "-0.50");
    assertEquals(first, again.reply());
    assertTrue(again.hasNoEvents());
    assertTrue(adjust("adj-2", "bob", "missed invoice line", Lane.APP, "b1", "0.20").hasNoEvents());

    kit.snapshotTestKit().orElseThrow().clearAll();
    assertEquals(before, kit.restart().state()); // journal only
    assertInstanceOf(
        Conflict.class, adjust("adj-1", "alice", "refund", Lane.FREE, null, "-5").reply());

    // Compaction forgets the closed reservation after the retention, never an adjustment id.
    clock.advance(Duration.ofDays(40));
    LedgerState compacted = kit.runCommand(new Compact()).state();
    assertTrue(compacted.reservation("f1").isEmpty());
    assertEquals(2, compacted.knownAdjustments());
    assertTrue(adjust("adj-1", "alice", "refund", Lane.FREE, null, "-0.50").hasNoEvents());
  }

  @Test
  void aCreditBelowZeroInAnyWindowIsRefusedNamingItAndChangesNothing() {
    reserveApp("a1", Lane.APP, "b1", "2", "5", "50");
    settle("a1", "2");
    reserve("f1", Lane.FREE, null, "1");
    settle("f1", "1");
    LedgerState before = kit.getState();

    // Global daily holds 3, brand b1 only 2: crediting 2.50 to b1 would take brand_daily to -0.50.
    var result = adjust("adj-big", "alice", "refund", Lane.APP, "b1", "-2.50");
    var refused = assertInstanceOf(GlobalBudget.AdjustRefused.class, result.reply());
    assertEquals(CapName.BRAND_DAILY, refused.cap());
    assertEquals("b1", refused.subject());
    assertEquals(DAY, refused.window());
    assertEquals(usd("2"), refused.settledMicros());
    assertTrue(
        refused.message().contains("brand_daily of b1 (window " + DAY + ") below zero"),
        refused.message());
    assertTrue(result.hasNoEvents());
    assertEquals(before, result.state());
    assertTrue(
        result.state().adjustment("adj-big").isEmpty()); // the id stays free for a corrected credit

    // Exactly the settled spend is fine; a charge is never refused for sign.
    assertInstanceOf(
        Adjusted.class, adjust("adj-big", "alice", "refund", Lane.APP, "b1", "-2").reply());
    assertEquals(Spend.NONE, spend(kit.getState(), CapName.BRAND_DAILY, "b1", DAY));
    assertInstanceOf(
        Adjusted.class,
        adjust("adj-charge", "alice", "missed line", Lane.APP, "b2", "0.10").reply());
  }

  @Test
  void anAppliedCreditRepeatedAfterSpendFellAnswersTheFirstResult() {
    reserve("f1", Lane.FREE, null, "1");
    settle("f1", "1");
    Adjusted first = (Adjusted) adjust("adj-1", "alice", "refund", Lane.FREE, null, "-1").reply();

    var again =
        adjust("adj-1", "alice", "refund", Lane.FREE, null, "-1"); // would now go below zero
    assertEquals(first, again.reply());
    assertTrue(again.hasNoEvents());
  }

  @ParameterizedTest(name = "an adjustment of {0} USD is refused as above the per-adjustment limit")
  @CsvSource({"1000.000001", "-1000.000001", "1000000", "-1000000"})
  void anAdjustmentAboveTheLimitIsInvalidAndChangesNothing(String deltaUsd) {
    reserve("f1", Lane.FREE, null, "1");
    settle("f1", "1");
    var result = adjust("adj-huge", "alice", "refund", Lane.FREE, null, deltaUsd);
    Invalid invalid = assertInstanceOf(Invalid.class, result.reply());
    assertEquals("deltaUsd", invalid.field());
    assertTrue(
        invalid.message().startsWith("deltaUsd must be at most 1000 USD either way per adjustment"),
        invalid.message());
    assertTrue(result.hasNoEvents());
    assertInstanceOf(
        Adjusted.class, adjust("adj-max", "alice", "missed line", Lane.FREE, null, "1000").reply());
  }

  @ParameterizedTest(name = "adjustment id \"{0}\" by \"{1}\" on {2} {3} is refused naming {4}")
  @CsvSource({
    "'',       alice, free, ,   adjustmentId",
    "'   ',    alice, free, ,   adjustmentId",
    "a-65-char-id-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx, alice, free, , adjustmentId",
    "adj-1,    alice, app,  ,   brand",
    "adj-1,    '',    free, ,   operator",
  })
  void anInvalidAdjustmentChangesNothing(
      String id, String operator, String lane, String subject, String field) {
    var result =
        adjust(id, operator, "refund", Lane.fromWireName(lane).orElseThrow(), subject, "-1");
    assertEquals(field, assertInstanceOf(Invalid.class, result.reply()).field());
    assertTrue(result.hasNoEvents());
    assertEquals(0, result.state().knownAdjustments());
  }

  @Test
  void usageListsEveryCurrentCapWindow() {
    reserveApp("a1", Lane.APP, "b1", "0.50", "5", "50");
    settle("a1", "0.25");
    reserveApp("a2", Lane.APP, "b1", "0.50", "5", "50");
    reserve("t1", Lane.TRIAL, "p1", "0.10");

    Usage all = kit.<Usage>runCommand(replyTo -> new GetUsage(Optional.empty(), replyTo)).reply();
    assertEquals(2, all.openReservations());
    CapUsage global = all.caps().get(0);
    assertEquals(
        new CapUsage(CapName.GLOBAL_DAILY, null, DAY, usd("40"), usd("0.25"), usd("0.60")), global);
    assertEquals(usd("39.15"), global.remainingMicros());
    assertEquals(
        List.of(
            "global_daily",
            "global_monthly",
            "free_daily",
            "trial_daily",
            "brand_daily",
            "brand_monthly",
            "preview_lifetime"),
        all.caps().stream().map(c -> c.cap().wireName()).toList());

    Usage b1 = kit.<Usage>runCommand(replyTo -> new GetUsage(Optional.of("b1"), replyTo)).reply();
    assertEquals(
        new CapUsage(CapName.BRAND_MONTHLY, "b1", MONTH, usd("50"), usd("0.25"), usd("0.50")),
        b1.caps().get(b1.caps().size() - 1));
    assertFalse(b1.caps().stream().anyMatch(c -> c.cap() == CapName.PREVIEW_LIFETIME));
  }

  @Test
  void usageWithoutASubjectListsOnlyTheTopSpendersAndCountsTheRest() {
    // 30 preview ids, p00 spending least and p29 most; a subject-less read lists the top 3 only.
    for (int i = 0; i < 30; i++) {
      reserve(
          String.format("t%02d", i),
          Lane.TRIAL,
          String.format("p%02d", i),
          "0.0" + (i < 10 ? "0" : "") + (i + 1));
    }
    Usage top3 =
        kit.<Usage>runCommand(replyTo -> new GetUsage(Optional.empty(), 3, replyTo)).reply();
    assertEquals(30, top3.activeSubjects());
    assertEquals(
        List.of("p27", "p28", "p29"),
        top3.caps().stream().filter(c -> c.subject() != null).map(CapUsage::subject).toList());
    assertEquals(
        4 + 3,
        top3.caps().size(),
        "the four global and pool caps, then one lifetime cap per listed id");

    Usage none =
        kit.<Usage>runCommand(replyTo -> new GetUsage(Optional.empty(), 0, replyTo)).reply();
    assertEquals(4, none.caps().size());
    assertEquals(30, none.activeSubjects());

    Usage one =
        kit.<Usage>runCommand(replyTo -> new GetUsage(Optional.of("p00"), 0, replyTo)).reply();
    assertEquals(
        "p00", one.caps().get(one.caps().size() - 1).subject(), "a named subject is always listed");
  }

  @Test
  void theTopSpendersAreChosenByUseThenById() {
    assertEquals(List.of(), UsageView.topByUse(java.util.Map.of("a", 5L), 0));
    assertEquals(
        java.util.Set.of("b", "c"),
        java.util.Set.copyOf(UsageView.topByUse(java.util.Map.of("a", 1L, "b", 7L, "c", 3L), 2)));
    assertEquals(
        List.of("a"),
        UsageView.topByUse(java.util.Map.of("a", 2L, "b", 2L), 1),
        "ties go to the smaller id");
  }

  @Test
  void getReservationShowsStatusAndActual() {
    reserve("r-1", Lane.FREE, null, "0.30");
    ReservationReply open =
        kit.<ReservationReply>runCommand(replyTo -> new GetReservation("r-1", replyTo)).reply();
    assertEquals(
        new ReservationView(
            "r-1", Status.RESERVED, Lane.FREE, null, usd("0.30"), Optional.empty(), Owner.GATEWAY),
        open);
    settle("r-1", "0.12");
    ReservationReply settled =
        kit.<ReservationReply>runCommand(replyTo -> new GetReservation("r-1", replyTo)).reply();
    assertEquals(Optional.of(usd("0.12")), ((ReservationView) settled).actualMicros());
    assertEquals(
        new NotFound("x"),
        kit.<ReservationReply>runCommand(replyTo -> new GetReservation("x", replyTo)).reply());
  }

  @Test
  void compactionMovesIdsPastTheIdempotencyWindowAndDropsCapWindowsAfterTheRetention() {
    reserve("old", Lane.FREE, null, "0.30");
    settle("old", "0.10");
    clock.advance(Duration.ofDays(34));
    reserve("open", Lane.FREE, null, "0.30");
    // Past the idempotency window (24h) the id leaves the index; the cap windows stay (retention
    // 35d).
    var idsOnly = kit.runCommand(new Compact());
    assertInstanceOf(Compacted.class, idsOnly.event());
    assertTrue(idsOnly.state().reservation("old").isEmpty());
    // Closed 34 days ago it is past the past-id horizon too (7d after the window): fully forgotten.
    assertFalse(idsOnly.state().probablyUsedBeforeWindow("old"));
    assertFalse(spend(idsOnly.state(), CapName.GLOBAL_DAILY, null, DAY).isEmpty());

    clock.advance(Duration.ofDays(2));
    var result = kit.runCommand(new Compact());
    assertInstanceOf(Compacted.class, result.event());
    assertTrue(result.state().reservation("old").isEmpty());
    assertEquals(Spend.NONE, spend(result.state(), CapName.GLOBAL_DAILY, null, DAY));
    assertTrue(result.state().reservation("open").orElseThrow().isOpen());
  }

  // --- ownership and the ledger API's bounds -----------------------------------------------------

  private CommandResultWithReply<Command, Event, LedgerState, ReserveReply> reserveAs(
      Owner owner, String id, String amount) {
    return kit.runCommand(
        replyTo -> new Reserve(id, Lane.FREE, null, usd(amount), 0, 0, owner, replyTo));
  }

  private CommandResultWithReply<Command, Event, LedgerState, CloseReply> closeAs(
      Owner closer, String id, String action, String actual) {
    return action.equals("void")
        ? kit.runCommand(replyTo -> new VoidReservation(id, closer, replyTo))
        : kit.runCommand(replyTo -> new Settle(id, usd(actual), closer, replyTo));
  }

  @ParameterizedTest(name = "a reservation of {0} closed by {1} with {2} {3}: {4}")
  @CsvSource({
    "GATEWAY,    LEDGER_API, settle, 0.10, forbidden",
    "GATEWAY,    LEDGER_API, void,   0,    forbidden",
    "LEDGER_API, GATEWAY,    settle, 0.10, forbidden",
    "LEDGER_API, GATEWAY,    void,   0,    forbidden",
    "LEDGER_API, LEDGER_API, settle, 0.30, settled",
    "LEDGER_API, LEDGER_API, settle, 0.31, invalid",
    "LEDGER_API, LEDGER_API, void,   0,    voided",
    "GATEWAY,    GATEWAY,    settle, 0.45, settled",
    "GATEWAY,    GATEWAY,    void,   0,    voided",
  })
  void onlyTheOwnerClosesAndTheLedgerApiSettlesAtMostItsReserve(
      Owner owner, Owner closer, String action, String actual, String outcome) {
    String id = owner == Owner.GATEWAY ? "gw-1" : "r-1";
    reserveAs(owner, id, "0.30");

    var result = closeAs(closer, id, action, actual);

    switch (outcome) {
      case "forbidden" -> assertInstanceOf(Forbidden.class, result.reply());
      case "invalid" -> assertEquals("actualUsd", ((Invalid) result.reply()).field());
      case "settled" -> assertEquals(new Closed(id, Status.SETTLED, usd(actual)), result.reply());
      case "voided" -> assertEquals(new Closed(id, Status.VOIDED, 0), result.reply());
      default -> throw new IllegalArgumentException(outcome);
    }
    if (outcome.equals("forbidden") || outcome.equals("invalid")) {
      assertTrue(result.hasNoEvents());
      assertTrue(result.state().isOpen(id));
      assertEquals(
          new Spend(0, usd("0.30")), spend(result.state(), CapName.GLOBAL_DAILY, null, DAY));
    }
  }

  @Test
  void aForbiddenCloseNamesNeitherTheIdNorLeavesTheReservationUnclosable() {
    reserveAs(Owner.GATEWAY, "gw-abc", "0.30");
    var refused = closeAs(Owner.LEDGER_API, "gw-abc", "settle", "0");
    assertFalse(((Forbidden) refused.reply()).message().contains("gw-abc"));

    // The provider call that holds it still settles it, at what the provider billed.
    var settled = closeAs(Owner.GATEWAY, "gw-abc", "settle", "0.45");
    assertEquals(new Closed("gw-abc", Status.SETTLED, usd("0.45")), settled.reply());
  }

  @Test
  void theLedgerApiIsRefusedAnyIdOfTheGatewaysNamespaceKnownOrNot() {
    var unknownSettle = closeAs(Owner.LEDGER_API, "gw-never-made", "settle", "0.10");
    var unknownVoid = closeAs(Owner.LEDGER_API, "gw-never-made", "void", "0");
    assertInstanceOf(Forbidden.class, unknownSettle.reply());
    assertInstanceOf(Forbidden.class, unknownVoid.reply());
    // Its own unknown ids are still plain not-founds.
    assertEquals(new NotFound("nope"), closeAs(Owner.LEDGER_API, "nope", "settle", "0.10").reply());
  }

  @Test
  void theLedgerApiCannotReserveAnIdOfTheGatewaysNamespace() {
    var result = reserveAs(Owner.LEDGER_API, "gw-mine", "0.30");
    Invalid invalid = (Invalid) result.reply();
    assertEquals("id", invalid.field());
    assertTrue(invalid.message().contains("gw-"), invalid.message());
    assertTrue(result.hasNoEvents());
  }

  @ParameterizedTest(name = "{0} reserving {1}: {2}")
  @CsvSource({
    "LEDGER_API, 0,        invalid",
    "LEDGER_API, 0.000001, reserved",
    "GATEWAY,    0,        reserved",
  })
  void theLedgerApiReservesOnlyPositiveAmounts(Owner owner, String amount, String outcome) {
    String id = owner == Owner.GATEWAY ? "gw-z" : "z-1";
    var result = reserveAs(owner, id, amount);
    if (outcome.equals("invalid")) {
      Invalid invalid = (Invalid) result.reply();
      assertEquals("amountUsd", invalid.field());
      assertEquals("amountUsd must be greater than 0", invalid.message());
      assertTrue(result.hasNoEvents());
    } else {
      assertEquals(new Reserved(id, usd(amount)), result.reply());
      assertEquals(owner, result.eventOfType(ReservationMade.class).owner());
      assertEquals(owner, result.state().reservation(id).orElseThrow().owner());
    }
  }

  @Test
  void theSameIdFromAnotherOwnerIsAConflict() {
    reserveAs(Owner.LEDGER_API, "r-1", "0.30");
    var again = reserveAs(Owner.GATEWAY, "r-1", "0.30");
    assertInstanceOf(Conflict.class, again.reply());
    assertTrue(again.hasNoEvents());
  }

  @Test
  void anOperatorClosesAnyReservationAtAnyAmount() {
    reserveAs(Owner.LEDGER_API, "r-1", "0.30");
    reserveAs(Owner.GATEWAY, "gw-1", "0.30");
    var aboveReserve =
        kit.<CloseReply>runCommand(
            replyTo -> new OperatorSettle("r-1", usd("0.80"), "bob", "invoice", replyTo));
    assertEquals(new Closed("r-1", Status.SETTLED, usd("0.80")), aboveReserve.reply());
    var gatewayOne =
        kit.<CloseReply>runCommand(
            replyTo -> new OperatorVoid("gw-1", "bob", "not billed", replyTo));
    assertEquals(new Closed("gw-1", Status.VOIDED, 0), gatewayOne.reply());
  }

  @Test
  void ownersAreRememberedAcrossARestart() {
    reserveAs(Owner.GATEWAY, "gw-1", "0.30");
    reserveAs(Owner.LEDGER_API, "r-1", "0.30");
    kit.restart();
    assertInstanceOf(Forbidden.class, closeAs(Owner.LEDGER_API, "gw-1", "settle", "0.10").reply());
    assertInstanceOf(Forbidden.class, closeAs(Owner.GATEWAY, "r-1", "settle", "0.10").reply());
  }

  /**
   * A journal written before owners were recorded: its reservation events have no owner. They
   * replay as the owner their id's namespace implies, so a provider call's reservation is still out
   * of the ledger API's reach and another service's still closable by it.
   */
  @Test
  void oldReservationEventsWithoutAnOwnerStillReplay() throws Exception {
    var cbor =
        new com.fasterxml.jackson.databind.ObjectMapper(
            new com.fasterxml.jackson.dataformat.cbor.CBORFactory());
    var serialization =
        org.apache.pekko.serialization.SerializationExtension.get(
            org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(testKit.system()));
    java.time.Instant at = clock.instant();
    List<Object> oldEvents = new java.util.ArrayList<>();
    for (Event current :
        List.<Event>of(
            new ReservationMade(
                "gw-old",
                Lane.FREE,
                null,
                usd("0.30"),
                0,
                0,
                at,
                at.plusSeconds(900),
                Owner.GATEWAY),
            new ReservationMade(
                "svc-old",
                Lane.FREE,
                null,
                usd("0.20"),
                0,
                0,
                at,
                at.plusSeconds(900),
                Owner.LEDGER_API))) {
      var serializer = serialization.findSerializerFor(current);
      var tree =
          (com.fasterxml.jackson.databind.node.ObjectNode)
              cbor.readTree(serialization.serialize(current).get());
      assertTrue(tree.has("owner"));
      tree.remove("owner"); // the form written before owners were recorded
      oldEvents.add(
          serialization
              .deserialize(
                  cbor.writeValueAsBytes(tree),
                  serializer.identifier(),
                  org.apache.pekko.serialization.Serializers.manifestFor(serializer, current))
              .get());
    }
    kit.persistenceTestKit().persistForRecovery(GlobalBudget.PERSISTENCE_ID.id(), oldEvents);
    kit.restart();

    assertEquals(Owner.GATEWAY, kit.getState().reservation("gw-old").orElseThrow().owner());
    assertEquals(Owner.LEDGER_API, kit.getState().reservation("svc-old").orElseThrow().owner());
    assertInstanceOf(Forbidden.class, closeAs(Owner.LEDGER_API, "gw-old", "settle", "0").reply());
    assertEquals(
        new Closed("svc-old", Status.SETTLED, usd("0.20")),
        closeAs(Owner.LEDGER_API, "svc-old", "settle", "0.20").reply());
    assertEquals(
        new Closed("gw-old", Status.SETTLED, usd("0.10")),
        closeAs(Owner.GATEWAY, "gw-old", "settle", "0.10").reply());
  }
}
