package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerEvents.WindowZoneChanged;
import dev.spendgateway.policy.access.Lane;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The pure decision behind a change of {@code ledger.window-zone}: which {@link WindowZoneChanged}
 * the ledger journals at start, one row per case.
 */
class WindowZoneDeciderTest {

  private static Decider decider(String zone) {
    return new Decider(GlobalBudgetTest.settings(1000).withWindowZone(ZoneId.of(zone)));
  }

  private static LedgerState books(boolean holdingSpend, String journalZone, Instant at) {
    LedgerState state = LedgerState.empty();
    if (!journalZone.equals("UTC")) {
      state =
          state.applied(
              new WindowZoneChanged(journalZone, "UTC", Instant.parse("2026-01-01T00:00:00Z"), at));
    }
    if (holdingSpend) {
      state =
          state.applied(
              new ReservationMade(
                  "r-1", Lane.FREE, null, 1_000_000, 0, 0, at, at.plus(Duration.ofMinutes(15))));
    }
    return state;
  }

  @ParameterizedTest(
      name = "journal in {0} (spend held: {1}), configured {2}, at {3}: journals {4} from {5}")
  @CsvSource({
    // the same zone, by any of its names: nothing to journal
    "UTC,           true,  UTC,              2026-12-05T14:00:00Z, -,                -",
    "UTC,           true,  Etc/UTC,          2026-12-05T14:00:00Z, -,                -",
    "Asia/Tokyo,    true,  Asia/Tokyo,       2026-12-05T14:00:00Z, -,                -",
    // books holding windows: from the end of the day under way in the journal's zone
    "UTC,           true,  Asia/Tokyo,       2026-12-05T14:00:00Z, Asia/Tokyo,       2026-12-06T00:00:00Z",
    "UTC,           true,  America/New_York, 2026-12-05T23:59:59Z, America/New_York, 2026-12-06T00:00:00Z",
    "Asia/Tokyo,    true,  UTC,              2026-12-05T14:00:00Z, UTC,              2026-12-05T15:00:00Z",
    // Berlin's 25-hour day: its end is CET midnight, 23:00Z
    "Europe/Berlin, true,  UTC,              2026-10-25T12:00:00Z, UTC,              2026-10-25T23:00:00Z",
    // books holding no window (a new journal): at once
    "UTC,           false, Europe/Berlin,    2026-12-05T14:00:00Z, Europe/Berlin,    2026-12-05T14:00:00Z",
  })
  void aChangeIsJournaledToTakeEffectAtTheEndOfTheDayUnderWay(
      String journalZone,
      boolean holdingSpend,
      String configured,
      Instant now,
      String zone,
      String from) {
    LedgerState state = books(holdingSpend, journalZone, Instant.parse("2026-01-02T00:00:00Z"));
    Optional<LedgerEvents.Event> decided = decider(configured).adoptWindowZone(state, now);
    if (zone.equals("-")) {
      assertEquals(Optional.empty(), decided);
      return;
    }
    assertEquals(
        Optional.of(new WindowZoneChanged(zone, journalZone, Instant.parse(from), now)), decided);
    // Applied, it is the calendar the decision meant: the day under way keeps its zone.
    WindowZoneChanged e = (WindowZoneChanged) decided.get();
    LedgerState after = state.applied(e);
    assertEquals(ZoneId.of(zone), after.calendar().zoneAt(Instant.parse(from)));
    if (holdingSpend) {
      assertEquals(state.calendar().dayKey(now), after.calendar().dayKey(now));
    }
  }
}
