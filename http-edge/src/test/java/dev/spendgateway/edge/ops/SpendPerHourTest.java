package dev.spendgateway.edge.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.AdjustmentScope;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.GroupCommit;
import dev.spendgateway.ledger.LedgerEvents.ReservationExpired;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerEvents.ReservationSettled;
import dev.spendgateway.ledger.LedgerEvents.ReservationVoided;
import dev.spendgateway.ledger.LedgerEvents.SpendAdjusted;
import dev.spendgateway.policy.access.Lane;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class SpendPerHourTest {
  private static final Instant NOW = Instant.parse("2026-12-01T10:30:00Z");

  /** A clock the test moves. */
  static final class MovingClock extends Clock {
    final AtomicReference<Instant> now = new AtomicReference<>(NOW);

    @Override
    public Instant instant() {
      return now.get();
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }
  }

  private static ReservationSettled settled(String at, long actual) {
    Instant t = Instant.parse(at);
    return new ReservationSettled("r", Lane.APP, "b", t.minusSeconds(1), 1_000_000, actual, t);
  }

  static Stream<Arguments> facts() {
    Instant t = Instant.parse("2026-12-01T10:05:00Z");
    return Stream.of(
        Arguments.of(
            "a settle counts its actual cost", settled("2026-12-01T10:05:00Z", 1234), 1234L),
        Arguments.of(
            "an expiry counts the worst case it kept",
            new ReservationExpired("r", Lane.FREE, null, t.minusSeconds(600), 5000, t),
            5000L),
        Arguments.of(
            "an operator refund counts negative",
            new SpendAdjusted("a", "op", "refund", Lane.APP, "b", -700, t),
            -700L),
        Arguments.of(
            "a brand credit (grant) counts nothing: it moves no global cap",
            new SpendAdjusted(
                "g", "op", "grant", Lane.APP, "b", -30_000, t, "2026-12-01", AdjustmentScope.GRANT),
            0L),
        Arguments.of(
            "a refund in a named window counts its delta",
            new SpendAdjusted(
                "f", "op", "refund", Lane.APP, "b", -500, t, "2026-12-01", AdjustmentScope.REFUND),
            -500L),
        Arguments.of(
            "a void counts nothing",
            new ReservationVoided("r", Lane.APP, "b", t.minusSeconds(1), 9000, t),
            0L),
        Arguments.of(
            "a reservation counts nothing (it is not spend yet)",
            new ReservationMade("r", Lane.APP, "b", 9000, 0, 0, t, t.plusSeconds(600)),
            0L),
        Arguments.of(
            "a group commit counts each of its facts",
            new GroupCommit(
                List.of(settled("2026-12-01T10:05:00Z", 100), settled("2026-12-01T10:06:00Z", 23))),
            123L));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("facts")
  void countsWhatTheBooksCount(String sentence, Event fact, long expectedMicros) {
    SpendPerHour s = new SpendPerHour(new MovingClock(), 24, x -> {});
    s.persisted(List.of(fact), Duration.ZERO);
    assertEquals(expectedMicros, s.series().get(23).micros(), sentence);
  }

  @Test
  void keepsTheLastHoursOldestFirstAndForgetsOlderOnes() {
    MovingClock clock = new MovingClock();
    SpendPerHour s = new SpendPerHour(clock, 24, x -> {});
    s.persisted(
        List.of(
            settled("2026-12-01T10:59:59Z", 1),
            settled("2026-12-01T09:00:00Z", 2),
            settled("2026-11-30T11:00:00Z", 3), // the oldest hour still kept
            settled("2026-11-30T10:59:59Z", 4)), // 24 h ago and more: out
        Duration.ZERO);
    List<SpendPerHour.Hour> series = s.series();
    assertEquals(24, series.size());
    assertEquals(Instant.parse("2026-11-30T11:00:00Z"), series.get(0).start());
    assertEquals(Instant.parse("2026-12-01T10:00:00Z"), series.get(23).start());
    assertEquals(3, series.get(0).micros());
    assertEquals(2, series.get(22).micros());
    assertEquals(1, series.get(23).micros());
    assertEquals(6, series.stream().mapToLong(SpendPerHour.Hour::micros).sum());
    // An hour later the oldest slot is reused for the new hour, starting from zero.
    clock.now.set(Instant.parse("2026-12-01T11:10:00Z"));
    s.persisted(List.of(settled("2026-12-01T11:05:00Z", 50)), Duration.ZERO);
    series = s.series();
    assertEquals(Instant.parse("2026-11-30T12:00:00Z"), series.get(0).start());
    assertEquals(50, series.get(23).micros());
    assertEquals(
        53,
        series.stream().mapToLong(SpendPerHour.Hour::micros).sum(),
        "11:00 yesterday left the window");
  }

  @Test
  void theRebuildCountsOnlyWhatHappenedBeforeRecoverySoNothingIsCountedTwice() {
    MovingClock clock = new MovingClock();
    AtomicInteger rebuilds = new AtomicInteger();
    SpendPerHour s = new SpendPerHour(clock, 24, series -> rebuilds.incrementAndGet());
    s.rebuild(
        settled(
            "2026-12-01T10:00:00Z", 999)); // before recovery: the ledger has not said where to stop
    assertEquals(0, s.series().get(23).micros());
    s.recovered(Duration.ZERO, 0, 0);
    assertEquals(1, rebuilds.get(), "recovery starts the rebuild");
    assertFalse(s.isRebuilt());
    // A write after recovery reaches the series as it is persisted, and the journal read sees it
    // too.
    clock.now.set(NOW.plusSeconds(60));
    ReservationSettled after = settled("2026-12-01T10:31:00Z", 40);
    s.persisted(List.of(after), Duration.ZERO);
    s.rebuild(settled("2026-12-01T10:10:00Z", 7));
    s.rebuild(after);
    s.rebuildDone();
    assertTrue(s.isRebuilt());
    assertEquals(47, s.series().get(23).micros());
  }
}
