package dev.spendgateway.regionsim;

import java.time.Instant;

/**
 * The simulation's knobs. {@link #standard()} is what loadtest/multi-region-sim.sh and the tests
 * run; every field is in the printed header so a figure can be traced to its settings.
 *
 * @param minRegions fewest regions a seed draws (3)
 * @param maxRegions most regions a seed draws (5)
 * @param dailyCapMicros company-wide daily cap ($200: small, so a day's traffic reaches it)
 * @param monthlyCapMicros company-wide monthly cap ($320: the first day spends up to $200 of it, so
 *     it binds on the second day, after the daily windows rolled over)
 * @param start when the run begins (a midnight, UTC, mid-month)
 * @param hours traffic, partitions and crashes last this long (30: the day rolls over once)
 * @param drainMinutes afterwards, links heal and nothing crashes: every in-flight transfer must
 *     land
 * @param callsPerDay expected calls per day over all regions (about 1.4 times what the cap admits)
 * @param reservationTimeoutSeconds a call whose settle never comes is expired after this long
 * @param minLinkMillis shortest base latency of a link between two regions
 * @param maxLinkMillis longest one (jitter stays within it)
 * @param lowWaterFraction PULL asks when headroom falls below this share of its share
 * @param askFraction PULL asks for enough to get back to this fraction of its share
 * @param floorFraction a lender keeps this fraction of its share as headroom
 * @param ratePerMinuteFraction a lender lends at most this fraction of its share per key per minute
 * @param crashEveryHours mean time between crashes of one region's ledger
 * @param crashAfterTransferChance chance that a ledger crashes right after journaling a transfer
 *     half and before sending the message that goes with it (the case recovery must cover)
 * @param duplicateChance chance that a message is delivered twice
 */
record SimConfig(
    int minRegions,
    int maxRegions,
    long dailyCapMicros,
    long monthlyCapMicros,
    Instant start,
    int hours,
    int drainMinutes,
    int callsPerDay,
    int reservationTimeoutSeconds,
    int minLinkMillis,
    int maxLinkMillis,
    double lowWaterFraction,
    double askFraction,
    double floorFraction,
    double ratePerMinuteFraction,
    double crashEveryHours,
    double crashAfterTransferChance,
    double duplicateChance) {

  static SimConfig standard() {
    return new SimConfig(
        3,
        5,
        200_000_000L,
        320_000_000L,
        Instant.parse("2026-03-14T00:00:00Z"),
        30,
        10,
        2_000,
        60,
        50,
        200,
        0.10,
        0.25,
        0.15,
        0.30,
        8.0,
        0.05,
        0.02);
  }

  /**
   * The same shape at a fifth of the scale (a fifth of the calls against a fifth of the caps) and
   * with a crash every 3 hours per region instead of 8: what the fast test runs over hundreds of
   * seeds in seconds, with more crashes to recover from.
   */
  static SimConfig small() {
    SimConfig s = standard();
    return new SimConfig(
        s.minRegions(),
        s.maxRegions(),
        s.dailyCapMicros() / 5,
        s.monthlyCapMicros() / 5,
        s.start(),
        s.hours(),
        s.drainMinutes(),
        s.callsPerDay() / 5,
        s.reservationTimeoutSeconds(),
        s.minLinkMillis(),
        s.maxLinkMillis(),
        s.lowWaterFraction(),
        s.askFraction(),
        s.floorFraction(),
        s.ratePerMinuteFraction(),
        3.0,
        s.crashAfterTransferChance(),
        s.duplicateChance());
  }

  /** The same settings over fewer hours. */
  SimConfig withHours(int h) {
    return new SimConfig(
        minRegions,
        maxRegions,
        dailyCapMicros,
        monthlyCapMicros,
        start,
        h,
        drainMinutes,
        callsPerDay,
        reservationTimeoutSeconds,
        minLinkMillis,
        maxLinkMillis,
        lowWaterFraction,
        askFraction,
        floorFraction,
        ratePerMinuteFraction,
        crashEveryHours,
        crashAfterTransferChance,
        duplicateChance);
  }
}
