package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerEvents.WindowZoneChanged;
import dev.spendgateway.ledger.LedgerProtocol.CloseReply;
import dev.spendgateway.ledger.LedgerProtocol.Command;
import dev.spendgateway.ledger.LedgerProtocol.GetUsage;
import dev.spendgateway.ledger.LedgerProtocol.Refused;
import dev.spendgateway.ledger.LedgerProtocol.Reserve;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.LedgerProtocol.Settle;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapName;
import dev.spendgateway.policy.caps.Spend;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.LogCapturingExtension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code ledger.window-zone} through the ledger, with an injected clock: day windows roll over at
 * the zone's midnight (23- and 25-hour DST days included), and a change of zone is journaled and
 * takes effect at the end of the day under way, so spend reserved before it stays in its window and
 * a recovery gives the same books.
 */
@ExtendWith(TestKitJUnit5Extension.class)
@ExtendWith(LogCapturingExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class WindowZoneLedgerTest {

  @JUnit5TestKit
  final ActorTestKit testKit =
      new JUnit5TestKitBuilder()
          .withCustomConfig(EventSourcedBehaviorTestKit.config().withFallback(ConfigFactory.load()))
          .build();

  private final TestClock clock = TestClock.at("2026-12-05T10:00:00Z");

  /**
   * The test's settings: reservations time out after 3 days, so none expires while the clock jumps
   * across the days these tests walk through (a restart expires what is due at once).
   */
  private static LedgerSettings settings(String zone, int snapshotEvery) {
    return new LedgerSettings(
            GlobalBudgetTest.CAPS,
            Duration.ofDays(3),
            Duration.ofHours(1),
            snapshotEvery,
            Duration.ofDays(35),
            Duration.ofHours(1),
            Duration.ofSeconds(5),
            1000,
            false,
            GlobalBudgetTest.usd("1000"))
        .withWindowZone(ZoneId.of(zone));
  }

  /**
   * The zone the next start of the ledger reads from its settings: what an operator edits in conf
   * before a restart ({@link #restartedIn}).
   */
  private final AtomicReference<String> configuredZone = new AtomicReference<>("UTC");

  private int snapshotEvery = 1000;

  /**
   * A ledger over an empty journal, configured with {@code zone}. Its settings are read at every
   * start, so {@link #restartedIn} restarts it over the same journal with another zone.
   */
  private EventSourcedBehaviorTestKit<Command, Event, LedgerState> newLedger(String zone) {
    configuredZone.set(zone);
    EventSourcedBehaviorTestKit<Command, Event, LedgerState> kit =
        EventSourcedBehaviorTestKit.create(
            testKit.system(),
            Behaviors.setup(
                context ->
                    GlobalBudget.create(settings(configuredZone.get(), snapshotEvery), clock)),
            EventSourcedBehaviorTestKit.enabledSerializationSettings().withVerifyCommands(false));
    kit.clear();
    kit.restart();
    return adopted(kit, zone);
  }

  /** {@code kit}'s ledger restarted over its journal with {@code zone} configured. */
  private EventSourcedBehaviorTestKit<Command, Event, LedgerState> restartedIn(
      EventSourcedBehaviorTestKit<Command, Event, LedgerState> kit, String zone) {
    configuredZone.set(zone);
    kit.restart();
    return adopted(kit, zone);
  }

  /** Waits for the ledger to have journaled {@code zone} as its current one (it does at start). */
  private static EventSourcedBehaviorTestKit<Command, Event, LedgerState> adopted(
      EventSourcedBehaviorTestKit<Command, Event, LedgerState> kit, String zone) {
    Eventually.until(
        "the ledger counts in " + zone,
        Duration.ofSeconds(5),
        () ->
            dev.spendgateway.policy.caps.WindowCalendar.sameZone(
                kit.getState().calendar().currentZone(), ZoneId.of(zone)));
    return kit;
  }

  private ReserveReply reserve(
      EventSourcedBehaviorTestKit<Command, Event, LedgerState> kit, String id, String usd) {
    return kit.<ReserveReply>runCommand(
            replyTo -> new Reserve(id, Lane.FREE, null, GlobalBudgetTest.usd(usd), 0, 0, replyTo))
        .reply();
  }

  private static Spend freeDaily(LedgerState state, String day) {
    return state.spendOn(new CapKey(CapName.FREE_DAILY, null, day));
  }

  private static Usage usage(EventSourcedBehaviorTestKit<Command, Event, LedgerState> kit) {
    return kit.<Usage>runCommand(replyTo -> new GetUsage(Optional.empty(), replyTo)).reply();
  }

  private static String windowOf(Usage usage, CapName cap) {
    return usage.caps().stream().filter(c -> c.cap() == cap).findFirst().orElseThrow().window();
  }

  // --- DST days ------------------------------------------------------------------------------

  @ParameterizedTest(
      name = "in {0}, the day {1} ({4} hours) runs from {2} to {3}: the free pool refills at {3}")
  @CsvSource({
    // spring forward: Berlin's 2026-03-29 lasts 23 hours (CET midnight to CEST midnight)
    "Europe/Berlin,    2026-03-29, 2026-03-28T23:00:00Z, 2026-03-29T22:00:00Z, 23",
    // fall back: Berlin's 2026-10-25 lasts 25 hours (CEST midnight to CET midnight)
    "Europe/Berlin,    2026-10-25, 2026-10-24T22:00:00Z, 2026-10-25T23:00:00Z, 25",
    "America/New_York, 2026-03-08, 2026-03-08T05:00:00Z, 2026-03-09T04:00:00Z, 23",
    "America/New_York, 2026-11-01, 2026-11-01T04:00:00Z, 2026-11-02T05:00:00Z, 25",
    // a day without a change, for comparison
    "Europe/Istanbul,  2026-10-25, 2026-10-24T21:00:00Z, 2026-10-25T21:00:00Z, 24",
  })
  void aDayWindowRollsOverAtTheZonesMidnight(
      String zone, String day, Instant start, Instant end, long hours) {
    assertEquals(Duration.ofHours(hours), Duration.between(start, end));
    clock.set(start.minusSeconds(3_600).toString());
    var ledger = newLedger(zone);

    // The last second of the day before, then the whole pool at the first second of the day.
    clock.set(start.minusSeconds(1).toString());
    assertInstanceOf(Reserved.class, reserve(ledger, "before", "1"));
    clock.set(start.toString());
    assertInstanceOf(Reserved.class, reserve(ledger, "first", "3"));
    // Full until the last second of the day, whether it lasts 23, 24 or 25 hours ...
    clock.set(end.minusSeconds(1).toString());
    assertInstanceOf(Refused.class, reserve(ledger, "last", "0.01"));
    assertEquals(day, windowOf(usage(ledger), CapName.FREE_DAILY));
    // ... and empty again at the zone's next midnight.
    clock.set(end.toString());
    assertInstanceOf(Reserved.class, reserve(ledger, "next", "3"));

    LedgerState state = ledger.getState();
    String dayBefore = java.time.LocalDate.parse(day).minusDays(1).toString();
    String dayAfter = java.time.LocalDate.parse(day).plusDays(1).toString();
    assertEquals(new Spend(0, GlobalBudgetTest.usd("1")), freeDaily(state, dayBefore));
    assertEquals(new Spend(0, GlobalBudgetTest.usd("3")), freeDaily(state, day));
    assertEquals(new Spend(0, GlobalBudgetTest.usd("3")), freeDaily(state, dayAfter));
    Usage now = usage(ledger);
    assertEquals(dayAfter, windowOf(now, CapName.FREE_DAILY));
    assertEquals(dayAfter.substring(0, 7), windowOf(now, CapName.GLOBAL_MONTHLY));
    assertEquals(zone, now.zone());
  }

  @Test
  void aMonthWindowIsTheZonesCalendarMonth() {
    clock.set("2026-11-30T12:00:00Z");
    var ledger = newLedger("Asia/Tokyo");
    clock.set("2026-11-30T14:59:59Z"); // 23:59:59 on 30 November in Tokyo
    reserve(ledger, "nov", "1");
    clock.set("2026-11-30T15:00:00Z"); // midnight: 1 December in Tokyo, still November in UTC
    reserve(ledger, "dec", "2");
    LedgerState state = ledger.getState();
    assertEquals(
        new Spend(0, GlobalBudgetTest.usd("1")),
        state.spendOn(new CapKey(CapName.GLOBAL_MONTHLY, null, "2026-11")));
    assertEquals(
        new Spend(0, GlobalBudgetTest.usd("2")),
        state.spendOn(new CapKey(CapName.GLOBAL_MONTHLY, null, "2026-12")));
  }

  // --- a change of zone ------------------------------------------------------------------------

  @Test
  void aNewJournalCountsInTheConfiguredZoneAtOnce() {
    clock.set("2026-12-05T16:00:00Z"); // 01:00 on the 6th in Tokyo
    var ledger = newLedger("Asia/Tokyo");
    assertEquals(
        List.of(new WindowZoneChanged("Asia/Tokyo", "UTC", clock.instant(), clock.instant())),
        ledger.persistenceTestKit().persistedInStorage(GlobalBudget.PERSISTENCE_ID.id()));
    assertEquals("2026-12-06", windowOf(usage(ledger), CapName.GLOBAL_DAILY));
  }

  @Test
  void theSameZoneAgainJournalsNothing() {
    var ledger = newLedger("UTC");
    reserve(ledger, "r-1", "1");
    ledger.restart();
    reserve(ledger, "r-2", "1");
    assertTrue(
        ledger.persistenceTestKit().persistedInStorage(GlobalBudget.PERSISTENCE_ID.id()).stream()
            .noneMatch(e -> e instanceof WindowZoneChanged),
        "a journal counting in UTC configured UTC changes nothing");
    assertEquals("UTC", usage(ledger).zone());
  }

  @Test
  void aChangeMidDayKeepsTodaysWindowUntilItsEndThenCountsInTheNewZone() {
    clock.set("2026-12-05T09:00:00Z");
    var utc = newLedger("UTC");
    assertInstanceOf(Reserved.class, reserve(utc, "before", "2"));

    // Restarted at 14:00Z with Tokyo configured (23:00 there): journaled once, effective at the
    // end of the UTC day under way.
    clock.set("2026-12-05T14:00:00Z");
    var tokyo = restartedIn(utc, "Asia/Tokyo");
    List<Object> journal =
        tokyo.persistenceTestKit().persistedInStorage(GlobalBudget.PERSISTENCE_ID.id());
    assertEquals(
        new WindowZoneChanged(
            "Asia/Tokyo",
            "UTC",
            Instant.parse("2026-12-06T00:00:00Z"),
            Instant.parse("2026-12-05T14:00:00Z")),
        journal.get(journal.size() - 1));

    // 16:00Z is already the 6th in Tokyo, but today's UTC window goes on: the pool has 1 left.
    clock.set("2026-12-05T16:00:00Z");
    Usage stillUtc = usage(tokyo);
    assertEquals("UTC", stillUtc.zone());
    assertEquals("2026-12-05", windowOf(stillUtc, CapName.FREE_DAILY));
    assertInstanceOf(Refused.class, reserve(tokyo, "too-much", "1.01"));
    assertInstanceOf(Reserved.class, reserve(tokyo, "today", "1"));
    // The reservation from before the change settles in the window it was counted in.
    tokyo.<CloseReply>runCommand(
        replyTo -> new Settle("before", GlobalBudgetTest.usd("0.5"), replyTo));

    // At UTC midnight (09:00 on the 6th in Tokyo) the new zone's first window begins; it ends at
    // Tokyo's midnight, 15:00Z.
    clock.set("2026-12-06T00:00:00Z");
    Usage first = usage(tokyo);
    assertEquals("Asia/Tokyo", first.zone());
    assertEquals("2026-12-06", windowOf(first, CapName.FREE_DAILY));
    assertInstanceOf(Reserved.class, reserve(tokyo, "tokyo-6th", "3"));
    clock.set("2026-12-06T14:59:59Z");
    assertInstanceOf(Refused.class, reserve(tokyo, "still-6th", "0.01"));
    clock.set("2026-12-06T15:00:00Z");
    assertInstanceOf(Reserved.class, reserve(tokyo, "tokyo-7th", "3"));

    LedgerState books = tokyo.getState();
    assertEquals(
        new Spend(GlobalBudgetTest.usd("0.5"), GlobalBudgetTest.usd("1")),
        freeDaily(books, "2026-12-05"));
    assertEquals(new Spend(0, GlobalBudgetTest.usd("3")), freeDaily(books, "2026-12-06"));
    assertEquals(new Spend(0, GlobalBudgetTest.usd("3")), freeDaily(books, "2026-12-07"));

    // A recovery (journal only, and again with Tokyo still configured) gives the same books and
    // journals no second change.
    int rows =
        tokyo.persistenceTestKit().persistedInStorage(GlobalBudget.PERSISTENCE_ID.id()).size();
    assertEquals(books, tokyo.restart().state());
    assertEquals(books, restartedIn(tokyo, "Asia/Tokyo").getState());
    assertEquals(
        rows,
        tokyo.persistenceTestKit().persistedInStorage(GlobalBudget.PERSISTENCE_ID.id()).size());
  }

  @Test
  void aRecoveryFromSnapshotOrJournalKeepsTheCalendarAndTheWindows() {
    clock.set("2026-12-05T09:00:00Z");
    snapshotEvery = 3;
    var utc = newLedger("UTC");
    reserve(utc, "a", "1");
    clock.set("2026-12-05T14:00:00Z");
    var tokyo = restartedIn(utc, "Asia/Tokyo");
    reserve(tokyo, "b", "1");
    clock.set("2026-12-06T01:00:00Z");
    reserve(tokyo, "c", "1");
    reserve(tokyo, "d", "0.5");
    LedgerState before = tokyo.getState();
    assertTrue(tokyo.snapshotTestKit().isPresent());

    LedgerState fromSnapshot = tokyo.restart().state();
    assertEquals(before, fromSnapshot);
    assertEquals(before.calendar(), fromSnapshot.calendar());
    tokyo.snapshotTestKit().orElseThrow().clearAll();
    LedgerState fromJournalOnly = tokyo.restart().state();
    assertEquals(before, fromJournalOnly);
    assertEquals(new Spend(0, GlobalBudgetTest.usd("2")), freeDaily(fromJournalOnly, "2026-12-05"));
    assertEquals(
        new Spend(0, GlobalBudgetTest.usd("1.5")), freeDaily(fromJournalOnly, "2026-12-06"));
  }

  @Test
  void theMadeEventKeepsItsInstantNotItsWindow() {
    // What makes replay exact: the window is derived from the instant through the journal's own
    // calendar, never from the zone configured now.
    clock.set("2026-12-05T16:00:00Z");
    var tokyo = newLedger("Asia/Tokyo");
    ReservationMade made =
        tokyo
            .<ReserveReply>runCommand(
                replyTo ->
                    new Reserve("m", Lane.FREE, null, GlobalBudgetTest.usd("1"), 0, 0, replyTo))
            .eventOfType(ReservationMade.class);
    assertEquals(clock.instant(), made.at());
  }
}
