package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerProtocol.CloseReply;
import dev.spendgateway.ledger.LedgerProtocol.Refused;
import dev.spendgateway.ledger.LedgerProtocol.Reserve;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.LedgerProtocol.Settle;
import dev.spendgateway.ledger.LedgerProtocol.VoidReservation;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapName;
import dev.spendgateway.policy.caps.CapWindows;
import dev.spendgateway.policy.caps.Spend;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What the ledger keeps of a brand or preview id once everything it did has left the books. Every
 * holder of the gateway token can name a new brand or preview id with each request, at no cost (a
 * refused reserve, or a reserve it voids at once); what the ledger keeps for good per name must be
 * only what a cap needs (a preview's lifetime spend), or a caller grows the heap and every snapshot
 * without bound (about 300 bytes per name, ~3 GB a day at 100 names a second).
 *
 * <p>Found by the insider review: 1,000 refused reserves under fresh brands left 1,000 names in the
 * id index's subject table and 1,000 voided ones 1,000 brand caps, after every id had left the
 * idempotency horizon and every window the retention.
 */
class SubjectMemoryTest {
  static final Instant START = Instant.parse("2026-11-30T10:00:00Z");

  /** Retention 2h, reservation timeout 15 min, idempotency window 1h and horizon 1d. */
  static final LedgerSettings SETTINGS = IdempotencyWindowTest.settings(1000);

  static final Decider DECIDER = new Decider(SETTINGS);

  /** How a request under a new name ends. */
  enum Outcome {
    REFUSED,
    VOIDED,
    SETTLED
  }

  static Stream<Arguments> names() {
    return Stream.of(
        // lane, outcome, hours later, cap keys per name kept, brand caps per name kept
        // Three hours on: past the 1h id window, still the same day and month.
        Arguments.of(Lane.APP, Outcome.REFUSED, 3, 0, 0),
        Arguments.of(Lane.APP, Outcome.VOIDED, 3, 0, 0),
        Arguments.of(Lane.APP, Outcome.SETTLED, 3, 2, 1), // its day and month spend, and caps
        Arguments.of(Lane.TRIAL, Outcome.REFUSED, 3, 0, 0),
        Arguments.of(Lane.TRIAL, Outcome.VOIDED, 3, 0, 0),
        Arguments.of(Lane.TRIAL, Outcome.SETTLED, 3, 1, 0), // its lifetime spend
        // Three days on: also past the retention (2h) of the windows and the horizon (1d).
        Arguments.of(Lane.APP, Outcome.REFUSED, 72, 0, 0),
        Arguments.of(Lane.APP, Outcome.VOIDED, 72, 0, 0),
        Arguments.of(Lane.APP, Outcome.SETTLED, 72, 0, 0),
        Arguments.of(Lane.TRIAL, Outcome.REFUSED, 72, 0, 0),
        Arguments.of(Lane.TRIAL, Outcome.VOIDED, 72, 0, 0),
        // the preview's lifetime cap must remember what it spent
        Arguments.of(Lane.TRIAL, Outcome.SETTLED, 72, 1, 0));
  }

  @ParameterizedTest(
      name = "{0} names that end {1}, {2}h later: {3} cap key(s) and {4} brand caps each")
  @MethodSource("names")
  void aNameKeepsOnlyWhatItsCapsNeed(
      Lane lane, Outcome outcome, int hoursLater, int keysPerName, int capsPerName) {
    int names = 1000;
    LedgerState state = LedgerState.empty();
    Instant now = START;
    for (int i = 0; i < names; i++) {
      String id = "r-" + i;
      String subject = "n-" + i;
      // A zero brand cap (app) or an amount above the preview's lifetime cap (trial) is refused.
      long amount = outcome == Outcome.REFUSED && lane == Lane.TRIAL ? 700_000 : 1;
      long daily = outcome == Outcome.REFUSED ? 0 : 5_000_000;
      Decider.Decision<ReserveReply> reserved =
          DECIDER.reserve(
              state,
              new Reserve(
                  id, lane, subject, amount, daily, 50_000_000, Owner.LEDGER_API, null, null),
              now);
      Class<? extends ReserveReply> expected =
          outcome == Outcome.REFUSED ? Refused.class : Reserved.class;
      assertInstanceOf(expected, reserved.reply());
      state = applied(state, reserved);
      if (outcome != Outcome.REFUSED) {
        Decider.Decision<?> closed =
            DECIDER.decide(
                state,
                outcome == Outcome.VOIDED
                    ? new VoidReservation(id, Owner.LEDGER_API, null, null)
                    : new Settle(id, 1, Owner.LEDGER_API, null, null),
                now);
        assertInstanceOf(CloseReply.class, closed.reply());
        state = applied(state, closed);
      }
    }

    now = now.plus(Duration.ofHours(hoursLater));
    for (Optional<Event> c = DECIDER.compact(state, now);
        c.isPresent();
        c = DECIDER.compact(state, now)) {
      state = state.applied(c.get());
    }

    assertEquals(0, state.knownReservations());
    assertEquals(0, state.recentIds().subjects().size(), "names kept by the id index");
    assertEquals(capsPerName * names, state.brandCapsBySubject().size(), "brand caps kept");
    assertEquals(
        (long) keysPerName * names,
        state.spendByKey().asMap().keySet().stream().filter(k -> k.subject() != null).count(),
        "cap keys of names kept");
    if (lane == Lane.TRIAL && keysPerName > 0) {
      assertEquals(
          new Spend(1, 0),
          state.spendOn(new CapKey(CapName.PREVIEW_LIFETIME, "n-7", CapWindows.LIFETIME)));
    }
    // And a snapshot of it holds no more.
    LedgerState reloaded = LedgerSnapshot.of(state).toState();
    assertEquals(0, reloaded.recentIds().subjects().size());
    assertEquals(capsPerName * names, reloaded.brandCapsBySubject().size());
  }

  @org.junit.jupiter.api.Test
  void namesStillUsedInTheWindowKeepAnsweringAcrossExpiryAndASnapshot() {
    LedgerState state = LedgerState.empty();
    Instant now = START;
    // Two chunks' worth of refusals under names that will expire, then a few under names that stay
    // (one of which, "keep-0", was also used by the first chunk).
    for (int i = 0; i < 2 * RecentIds.CHUNK; i++) {
      state = applied(state, refuse("old-" + i, i == 0 ? "keep-0" : "gone-" + i, now));
    }
    now = now.plus(Duration.ofMinutes(90)); // the first ids are past the 1h window
    for (int i = 0; i < 3; i++) {
      state = applied(state, refuse("new-" + i, "keep-" + i, now));
    }
    for (Optional<Event> c = DECIDER.compact(state, now);
        c.isPresent();
        c = DECIDER.compact(state, now)) {
      state = state.applied(c.get());
    }
    assertEquals(3, state.knownReservations());
    assertEquals(3, state.recentIds().subjects().size());
    for (LedgerState s : new LedgerState[] {state, LedgerSnapshot.of(state).toState()}) {
      for (int i = 0; i < 3; i++) {
        Reservation r = s.reservation("new-" + i).orElseThrow();
        assertEquals("keep-" + i, r.subject());
        assertEquals("keep-" + i, r.refusal().subject());
      }
    }
    // A name that left and comes back gets a code of its own again.
    LedgerState reloaded = LedgerSnapshot.of(state).toState();
    reloaded = applied(reloaded, refuse("again-1", "gone-1", now));
    reloaded = applied(reloaded, refuse("again-2", "keep-2", now));
    assertEquals("gone-1", reloaded.reservation("again-1").orElseThrow().subject());
    assertEquals("keep-2", reloaded.reservation("again-2").orElseThrow().subject());
    assertEquals("keep-1", reloaded.reservation("new-1").orElseThrow().subject());
  }

  /**
   * {@code gateway-admin verify} compares a replay from the first event with the newest snapshot. A
   * snapshot written before empty windows were dropped still holds a voided brand's empty windows
   * and its caps, which a replay by this version has dropped: the same books (no money differs), so
   * verify must not report them.
   */
  @org.junit.jupiter.api.Test
  void aSnapshotThatStillHoldsEmptyWindowsHasTheSameBooksAsTheReplay() {
    LedgerState state = LedgerState.empty();
    Decider.Decision<ReserveReply> reserved =
        DECIDER.reserve(
            state,
            new Reserve(
                "v-1", Lane.APP, "idle", 1, 5_000_000, 50_000_000, Owner.LEDGER_API, null, null),
            START);
    state = applied(state, reserved);
    state =
        applied(
            state,
            DECIDER.decide(state, new VoidReservation("v-1", Owner.LEDGER_API, null, null), START));
    LedgerState olderSnapshot = state;
    // A compaction that ends no window (the cutoff is before the day began) drops the empty ones.
    LedgerState replayed =
        state.applied(
            new LedgerEvents.Compacted(START.minus(Duration.ofHours(12)), START, START, null));
    assertEquals(0, replayed.brandCapsBySubject().size());
    assertEquals(1, olderSnapshot.brandCapsBySubject().size());

    org.junit.jupiter.api.Assertions.assertTrue(replayed.sameBooksAs(olderSnapshot));
    org.junit.jupiter.api.Assertions.assertTrue(
        replayed.sameBooksAs(LedgerSnapshot.of(olderSnapshot).toState()));
  }

  private static Decider.Decision<ReserveReply> refuse(String id, String brand, Instant now) {
    LedgerState any = LedgerState.empty();
    return DECIDER.reserve(
        any, new Reserve(id, Lane.APP, brand, 1, 0, 50_000_000, Owner.LEDGER_API, null, null), now);
  }

  private static LedgerState applied(LedgerState state, Decider.Decision<?> decision) {
    for (Event e : decision.events()) {
      state = state.applied(e);
    }
    return state;
  }
}
