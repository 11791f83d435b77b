package dev.spendgateway.policy.caps;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.policy.access.Lane;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CapCheckTest {
  private static final CapLimits LIMITS =
      new CapLimits(40_000_000, 600_000_000, 3_000_000, 25_000_000, 600_000);
  private static final Instant AT = Instant.parse("2026-11-30T23:59:59Z");

  @ParameterizedTest(name = "{0} at {1} falls in day {2} and month {3}")
  @CsvSource({
    "window, 2026-11-30T00:00:00Z, 2026-11-30, 2026-11",
    "window, 2026-11-30T23:59:59.999Z, 2026-11-30, 2026-11",
    "window, 2026-12-01T00:00:00Z, 2026-12-01, 2026-12",
    "window, 2027-01-01T00:00:00Z, 2027-01-01, 2027-01",
  })
  void windowsAreUtc(String ignored, Instant at, String day, String month) {
    assertEquals(day, CapWindows.dayKey(at));
    assertEquals(month, CapWindows.monthKey(at));
  }

  @ParameterizedTest(name = "a {0} reservation is checked against {1}")
  @CsvSource({
    "free,  global_daily global_monthly free_daily",
    "trial, global_daily global_monthly trial_daily preview_lifetime",
    "app,   global_daily global_monthly brand_daily brand_monthly",
  })
  void lanesHaveTheirOwnCaps(String lane, String caps) {
    List<String> names =
        CapCheck.capsFor(
                Lane.fromWireName(lane).orElseThrow(), "s1", 5_000_000, 50_000_000, AT, LIMITS)
            .stream()
            .map(a -> a.key().cap().wireName())
            .toList();
    assertEquals(List.of(caps.split(" ")), names);
  }

  @ParameterizedTest(
      name = "{0} ${1} with {2} settled+reserved on {3}: refused by {4} with headroom {5}")
  @CsvSource({
    // lane, amount, already used, on cap, first failing cap (or none), headroom micros
    "free,  0.30, 39.80, global_daily,     global_daily,     200000",
    "free,  0.30, 39.70, global_daily,     none,             0",
    "free,  0.30, 599.90, global_monthly,  global_monthly,   100000",
    "free,  0.30, 2.80, free_daily,        free_daily,       200000",
    "trial, 0.30, 0.40, preview_lifetime,  preview_lifetime, 200000",
    "trial, 0.30, 24.90, trial_daily,      trial_daily,      100000",
    "trial, 0.30, 2.90, free_daily,        none,             0",
    "app,   0.30, 4.80, brand_daily,       brand_daily,      200000",
    "app,   0.30, 49.90, brand_monthly,    brand_monthly,    100000",
    "app,   0.30, 24.90, trial_daily,      none,             0",
    "app,   0.30, 45.00, global_daily,     global_daily,     0",
  })
  void theFirstFailingCapIsNamedWithItsHeadroom(
      String lane, String amount, String used, String onCap, String failing, long headroom) {
    List<CapCheck.Applicable> caps =
        CapCheck.capsFor(
            Lane.fromWireName(lane).orElseThrow(), "s1", 5_000_000, 50_000_000, AT, LIMITS);
    Map<CapKey, Spend> spent = new HashMap<>();
    CapName usedCap = CapName.fromWireName(onCap).orElseThrow();
    long usedMicros = new java.math.BigDecimal(used).movePointRight(6).longValueExact();
    spent.put(
        new CapKey(usedCap, usedCap.perSubject() ? "s1" : null, CapWindows.windowOf(usedCap, AT)),
        new Spend(usedMicros / 2, usedMicros - usedMicros / 2));
    long amountMicros = new java.math.BigDecimal(amount).movePointRight(6).longValueExact();

    Optional<CapCheck.Failure> failure =
        CapCheck.firstFailing(caps, amountMicros, k -> spent.getOrDefault(k, Spend.NONE));

    if (failing.equals("none")) {
      assertTrue(failure.isEmpty(), () -> "unexpected refusal " + failure);
    } else {
      assertEquals(failing, failure.orElseThrow().key().cap().wireName());
      assertEquals(headroom, failure.orElseThrow().headroomMicros());
    }
  }
}
