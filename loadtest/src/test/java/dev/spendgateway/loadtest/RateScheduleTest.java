package dev.spendgateway.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RateScheduleTest {

  @ParameterizedTest(name = "at {0}/s request {1} is due {2} ns after the start")
  @CsvSource({
    "1000,    0,           0",
    "1000,    1,     1000000",
    "1000, 1000,  1000000000",
    "3,       1,   333333333",
    "3,       3,  1000000000",
    "2000,    7,     3500000",
    "0.5,     1,  2000000000",
  })
  void requestIsDueAtIOverRate(double rate, long i, long offsetNanos) {
    RateSchedule schedule = new RateSchedule(5_000L, rate);
    assertEquals(5_000L + offsetNanos, schedule.intendedNanos(i));
  }

  @ParameterizedTest(name = "{1} at {0}/s sends {2} requests")
  @CsvSource({
    "1000, 30s,    30000",
    "1000, 500ms,    500",
    "2000, 10s,    20000",
    "3,    1s,         3",
    "0.5,  3s,         1",
  })
  void aRunSendsRateTimesDuration(double rate, String duration, long requests) {
    assertEquals(
        requests,
        RateSchedule.requestsIn(new LoadTest.DurationConverter().convert(duration), rate));
  }

  @Test
  void latencyCountsFromTheIntendedSendTimeNotTheActualOne() {
    RateSchedule schedule = new RateSchedule(0, 1000);
    // request 10 was due at 10 ms; the server stalled and it completed at 250 ms: charged 240 ms
    assertEquals(
        Duration.ofMillis(240).toNanos(),
        schedule.latencyNanos(10, Duration.ofMillis(250).toNanos()));
  }

  @Test
  void aNonPositiveRateIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new RateSchedule(0, 0));
    assertThrows(IllegalArgumentException.class, () -> new RateSchedule(0, -1));
  }
}
