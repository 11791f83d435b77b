package dev.spendgateway.policy.caps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class WindowCalendarTest {

  @ParameterizedTest(name = "in {0}, {1} falls in day {2} and month {3}")
  @CsvSource({
    "UTC,              2026-11-30T23:59:59Z, 2026-11-30, 2026-11",
    "UTC,              2026-12-01T00:00:00Z, 2026-12-01, 2026-12",
    "Europe/Istanbul,  2026-11-30T20:59:59Z, 2026-11-30, 2026-11",
    "Europe/Istanbul,  2026-11-30T21:00:00Z, 2026-12-01, 2026-12",
    "America/New_York, 2027-01-01T04:59:59Z, 2026-12-31, 2026-12",
    "America/New_York, 2027-01-01T05:00:00Z, 2027-01-01, 2027-01",
    "Pacific/Kiritimati, 2026-12-31T10:00:00Z, 2027-01-01, 2027-01",
  })
  void aWindowIsTheCalendarDayAndMonthInTheZone(String zone, Instant at, String day, String month) {
    WindowCalendar calendar = WindowCalendar.of(ZoneId.of(zone));
    assertEquals(day, calendar.dayKey(at));
    assertEquals(month, calendar.monthKey(at));
  }

  @ParameterizedTest(name = "in {0}, the day holding {1} lasts {2} hours")
  @CsvSource({
    // spring forward: 2026-03-08 in New York, 2026-03-29 in Berlin, 23 hours
    "America/New_York, 2026-03-08T12:00:00Z, 23",
    "Europe/Berlin,    2026-03-29T12:00:00Z, 23",
    // fall back: 2026-11-01 in New York, 2026-10-25 in Berlin, 25 hours
    "America/New_York, 2026-11-01T12:00:00Z, 25",
    "Europe/Berlin,    2026-10-25T12:00:00Z, 25",
    // no DST in Istanbul, nor in UTC
    "Europe/Istanbul,  2026-10-25T12:00:00Z, 24",
    "UTC,              2026-03-08T12:00:00Z, 24",
  })
  void aDstDayLasts23Or25Hours(String zone, Instant at, long hours) {
    assertEquals(Duration.ofHours(hours), WindowCalendar.of(ZoneId.of(zone)).lengthOfDay(at));
  }

  @Test
  void theHourRepeatedAtFallBackStaysInTheSameDay() {
    WindowCalendar ny = WindowCalendar.of(ZoneId.of("America/New_York"));
    // 01:30 EDT and 01:30 EST on 2026-11-01 are an hour apart, both on the 1st.
    assertEquals("2026-11-01", ny.dayKey(Instant.parse("2026-11-01T05:30:00Z")));
    assertEquals("2026-11-01", ny.dayKey(Instant.parse("2026-11-01T06:30:00Z")));
    assertEquals("2026-11-02", ny.dayKey(Instant.parse("2026-11-02T05:00:00Z")));
    assertEquals("2026-11-01", ny.dayKey(Instant.parse("2026-11-02T04:59:59Z")));
  }

  @Test
  void aChangeOfZoneTakesEffectAtTheEndOfTheCurrentDayAndLeavesPastWindowsAlone() {
    Instant noon = Instant.parse("2026-12-05T12:00:00Z");
    WindowCalendar calendar = WindowCalendar.UTC.changedTo(ZoneId.of("Europe/Istanbul"), noon);

    // Everything before the change keeps its UTC day, including the rest of today.
    assertEquals("2026-12-04", calendar.dayKey(Instant.parse("2026-12-04T22:00:00Z")));
    assertEquals("2026-12-05", calendar.dayKey(Instant.parse("2026-12-05T22:00:00Z")));
    // From the next UTC midnight, Istanbul's days: 2026-12-06 began at 00:00Z (03:00 there) and
    // ends at Istanbul's midnight, 21:00Z: a 21-hour first day, then 24-hour days.
    assertEquals(Instant.parse("2026-12-06T00:00:00Z"), calendar.periods().get(1).from());
    assertEquals("2026-12-06", calendar.dayKey(Instant.parse("2026-12-06T00:00:00Z")));
    assertEquals("2026-12-06", calendar.dayKey(Instant.parse("2026-12-06T20:59:59Z")));
    assertEquals("2026-12-07", calendar.dayKey(Instant.parse("2026-12-06T21:00:00Z")));
    assertEquals(Duration.ofHours(24), calendar.lengthOfDay(Instant.parse("2026-12-07T12:00:00Z")));
    assertEquals(ZoneId.of("Europe/Istanbul"), calendar.currentZone());
  }

  @Test
  void aZoneBehindTheOldOneLengthensTheDayItTakesOver() {
    Instant noon = Instant.parse("2026-12-05T12:00:00Z");
    WindowCalendar calendar = WindowCalendar.UTC.changedTo(ZoneId.of("America/New_York"), noon);
    // At 00:00Z on the 6th it is still the 5th in New York: the 5th goes on until 05:00Z.
    assertEquals("2026-12-05", calendar.dayKey(Instant.parse("2026-12-06T04:59:59Z")));
    assertEquals("2026-12-06", calendar.dayKey(Instant.parse("2026-12-06T05:00:00Z")));
  }

  @Test
  void theSameZoneAgainChangesNothing() {
    WindowCalendar istanbul = WindowCalendar.of(ZoneId.of("Europe/Istanbul"));
    assertSame(istanbul, istanbul.changedTo(ZoneId.of("Europe/Istanbul"), Instant.now()));
  }

  @Test
  void theCachedDayNeverOutlivesItsWindow() {
    // Asked in turn on both sides of each boundary: the cached day must never answer for the other.
    WindowCalendar calendar =
        WindowCalendar.UTC
            .changedTo(ZoneId.of("Asia/Tokyo"), Instant.parse("2026-12-05T12:00:00Z"))
            .changedTo(ZoneId.of("Europe/Berlin"), Instant.parse("2026-12-06T12:00:00Z"));
    WindowCalendar uncached =
        WindowCalendar.ofPeriods(calendar.periods()); // a fresh cache for the reference answers
    Instant t = Instant.parse("2026-12-04T00:00:00Z");
    for (int i = 0; i < 4 * 24 * 4; i++, t = t.plusSeconds(900)) {
      for (Instant at : new Instant[] {t, t.minusSeconds(1), t.plusSeconds(86_400)}) {
        String expected = java.time.LocalDate.ofInstant(at, uncached.zoneAt(at)).toString();
        assertEquals(expected, calendar.dayKey(at), "day of " + at);
        assertEquals(expected.substring(0, 7), calendar.monthKey(at), "month of " + at);
      }
    }
  }

  @Test
  void aJournaledChangeAppliedAsItWasDecidedGivesTheSameCalendar() {
    Instant noon = Instant.parse("2026-12-05T12:00:00Z");
    WindowCalendar decided = WindowCalendar.UTC.changedTo(ZoneId.of("Europe/Istanbul"), noon);
    assertEquals(
        decided,
        WindowCalendar.UTC.withZoneFrom(
            Instant.parse("2026-12-06T00:00:00Z"), ZoneId.of("Europe/Istanbul")));
  }

  @Test
  void utcByAnyOfItsNamesIsNoChange() {
    Instant noon = Instant.parse("2026-12-05T12:00:00Z");
    assertSame(WindowCalendar.UTC, WindowCalendar.UTC.changedTo(ZoneId.of("UTC"), noon));
    assertSame(WindowCalendar.UTC, WindowCalendar.UTC.changedTo(ZoneId.of("Etc/UTC"), noon));
  }
}
