package dev.spendgateway.edge.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.spendgateway.policy.caps.WindowCalendar;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SpendBreakdownTest {
  private static final ZoneId ISTANBUL = ZoneId.of("Europe/Istanbul");

  /** The spend trend test's moving clock, set to {@code at}. */
  private static SpendPerHourTest.MovingClock clockAt(String at) {
    SpendPerHourTest.MovingClock clock = new SpendPerHourTest.MovingClock();
    clock.now.set(Instant.parse(at));
    return clock;
  }

  @Test
  void sumsByModelAndTagBiggestFirstWithTheUntaggedAsTheirOwnRow() {
    SpendPerHourTest.MovingClock clock = clockAt("2026-12-05T10:00:00Z");
    SpendBreakdown b = new SpendBreakdown(clock, WindowCalendar.of(ISTANBUL), 10);
    b.spent("gpt-6.1-sol", Optional.of("onboarding"), 300);
    b.spent("gpt-6.1-sol", Optional.empty(), 100);
    b.spent("claude-haiku-5-5", Optional.of("onboarding"), 50);

    SpendBreakdown.View today = b.today();
    assertEquals("2026-12-05", today.window());
    assertEquals(
        List.of(
            new SpendBreakdown.Row("gpt-6.1-sol", 2, 400),
            new SpendBreakdown.Row("claude-haiku-5-5", 1, 50)),
        today.byModel());
    assertEquals(
        List.of(new SpendBreakdown.Row("onboarding", 2, 350), new SpendBreakdown.Row("", 1, 100)),
        today.byTag());
    assertEquals("2026-12", b.thisMonth().window());
    assertEquals(today.byTag(), b.thisMonth().byTag());
  }

  /**
   * 21:30Z on the 5th is already the 6th in Istanbul: the day starts over, the month keeps
   * counting; on the 1st of the next month both start over.
   */
  @Test
  void aNewDayOfTheWindowZoneStartsTheDayOverAndKeepsTheMonth() {
    SpendPerHourTest.MovingClock clock = clockAt("2026-12-05T20:00:00Z");
    SpendBreakdown b = new SpendBreakdown(clock, WindowCalendar.of(ISTANBUL), 10);
    b.spent("m", Optional.of("t"), 100);
    clock.now.set(Instant.parse("2026-12-05T21:30:00Z"));
    assertEquals("2026-12-06", b.today().window());
    assertEquals(List.of(), b.today().byModel());
    b.spent("m", Optional.of("t"), 5);
    assertEquals(List.of(new SpendBreakdown.Row("m", 1, 5)), b.today().byModel());
    assertEquals(List.of(new SpendBreakdown.Row("m", 2, 105)), b.thisMonth().byModel());
    clock.now.set(Instant.parse("2026-12-31T21:00:00Z"));
    assertEquals("2027-01", b.thisMonth().window());
    assertEquals(List.of(), b.thisMonth().byTag());
  }

  /** However many tags callers invent, a window lists at most the bound and one "(other)" row. */
  @Test
  void tagsPastTheBoundShareOneRow() {
    SpendPerHourTest.MovingClock clock = clockAt("2026-12-05T10:00:00Z");
    SpendBreakdown b = new SpendBreakdown(clock, WindowCalendar.of(ISTANBUL), 3);
    for (int i = 0; i < 10_000; i++) {
      b.spent("m", Optional.of("tag-" + i), 1);
    }
    List<SpendBreakdown.Row> rows = b.today().byTag();
    assertEquals(4, rows.size(), rows.toString());
    assertEquals(new SpendBreakdown.Row(SpendBreakdown.OTHER, 9_997, 9_997), rows.get(0));
    assertEquals(10_000, rows.stream().mapToLong(SpendBreakdown.Row::micros).sum());
  }
}
