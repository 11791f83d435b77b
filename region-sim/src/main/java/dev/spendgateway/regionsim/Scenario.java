package dev.spendgateway.regionsim;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Everything a seed decides before any policy runs: the regions, their time zones and demand, every
 * call, every partition and every crash. Each policy runs on the same scenario, so their refusals
 * differ only by what the policy did.
 *
 * @param splitWeights what the operator configured (expected demand)
 * @param demandWeights what the traffic actually is (the guess is off by up to ±60%)
 * @param tzHours each region's offset from UTC: its daytime peak comes at its own 14:00
 * @param linkMillis base latency of each pair (symmetric)
 * @param calls every call, in time order
 * @param linkDown intervals during which a pair cannot talk (either direction)
 * @param crashes every ledger crash, in time order
 * @param downByPair {@code linkDown} indexed by pair
 */
record Scenario(
    long seed,
    int regions,
    List<Integer> splitWeights,
    List<Double> demandWeights,
    List<Integer> tzHours,
    int[][] linkMillis,
    int shiftRegion,
    long shiftFromMillis,
    long shiftToMillis,
    List<Call> calls,
    List<Interval> linkDown,
    List<Crash> crashes,
    Interval[][] downByPair) {

  /**
   * One caller's call: reserve {@code amountMicros}, then settle (or void) after {@code
   * durationMillis}.
   */
  record Call(
      int index,
      long atMillis,
      int region,
      long amountMicros,
      long durationMillis,
      boolean voided,
      long actualMicros) {}

  /** Pair {@code a}–{@code b} is cut from {@code fromMillis} to {@code toMillis}. */
  record Interval(int a, int b, long fromMillis, long toMillis) {}

  record Crash(int region, long atMillis, long downMillis) {}

  private static final long HOUR = 3_600_000L;

  static Scenario generate(long seed, SimConfig cfg) {
    SplittableRandom rng = new SplittableRandom(seed);
    int n = cfg.minRegions() + rng.nextInt(cfg.maxRegions() - cfg.minRegions() + 1);
    long span = cfg.hours() * HOUR;
    List<Integer> split = new ArrayList<>();
    List<Double> demand = new ArrayList<>();
    List<Integer> tz = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      int w = 60 + rng.nextInt(81);
      split.add(w);
      demand.add(w * (0.4 + 1.2 * rng.nextDouble()));
      tz.add(Math.floorMod((int) Math.round(r * 24.0 / n) - 2 + rng.nextInt(5) + 12, 24) - 12);
    }
    int[][] links = new int[n][n];
    for (int a = 0; a < n; a++) {
      for (int b = a + 1; b < n; b++) {
        // Base latency leaves room for up to 10% jitter within the 50-200 ms range.
        int base =
            cfg.minLinkMillis()
                + rng.nextInt((int) ((cfg.maxLinkMillis() - cfg.minLinkMillis()) * 0.9) + 1);
        links[a][b] = base;
        links[b][a] = base;
      }
    }
    int shiftRegion = rng.nextInt(n);
    long shiftFrom = (long) ((4 + rng.nextDouble() * 18) * HOUR);
    long shiftTo = shiftFrom + 4 * HOUR;

    List<Call> calls = new ArrayList<>();
    double demandTotal = demand.stream().mapToDouble(Double::doubleValue).sum();
    // Mean of the daytime curve below over a day: 0.15 + 0.85 * (14/24) * (2/pi).
    double meanCurve = 0.15 + 0.85 * (14.0 / 24.0) * (2.0 / Math.PI);
    for (int r = 0; r < n; r++) {
      double peakPerMilli =
          cfg.callsPerDay() / 86_400_000.0 / meanCurve * demand.get(r) / demandTotal;
      double maxPerMilli = peakPerMilli * 3.0;
      long t = 0;
      while (true) {
        t += (long) Math.ceil(-Math.log(1 - rng.nextDouble()) / maxPerMilli);
        if (t >= span) {
          break;
        }
        double rate =
            peakPerMilli
                * daytime(t, tz.get(r))
                * (r == shiftRegion && t >= shiftFrom && t < shiftTo ? 3.0 : 1.0);
        if (rng.nextDouble() * maxPerMilli >= rate) {
          continue;
        }
        long amount = 20_000L + rng.nextLong(380_001L);
        long duration = 500 + Math.min(45_000, (long) (-Math.log(1 - rng.nextDouble()) * 4_000));
        boolean voided = rng.nextDouble() < 0.05;
        long actual = voided ? 0 : amount * (300 + rng.nextInt(701)) / 1000;
        calls.add(new Call(0, t, r, amount, duration, voided, actual));
      }
    }
    calls.sort(Comparator.comparingLong(Call::atMillis).thenComparingInt(Call::region));
    List<Call> numbered = new ArrayList<>(calls.size());
    for (int i = 0; i < calls.size(); i++) {
      Call c = calls.get(i);
      numbered.add(
          new Call(
              i,
              c.atMillis(),
              c.region(),
              c.amountMicros(),
              c.durationMillis(),
              c.voided(),
              c.actualMicros()));
    }

    List<Interval> down = new ArrayList<>();
    for (int a = 0; a < n; a++) {
      for (int b = a + 1; b < n; b++) {
        long t = 0;
        while (true) {
          t += (long) (-Math.log(1 - rng.nextDouble()) * 3 * HOUR);
          if (t >= span) {
            break;
          }
          long len = 10_000 + rng.nextLong(20 * 60_000L);
          down.add(new Interval(a, b, t, Math.min(span, t + len)));
          t += len;
        }
      }
    }
    // Now and then a whole region is cut off from every other one.
    for (int r = 0; r < n; r++) {
      long t = 0;
      while (true) {
        t += (long) (-Math.log(1 - rng.nextDouble()) * 16 * HOUR);
        if (t >= span) {
          break;
        }
        long len = 60_000 + rng.nextLong(30 * 60_000L);
        for (int o = 0; o < n; o++) {
          if (o != r) {
            down.add(new Interval(Math.min(r, o), Math.max(r, o), t, Math.min(span, t + len)));
          }
        }
        t += len;
      }
    }

    List<Crash> crashes = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      long t = 0;
      while (true) {
        t += (long) (-Math.log(1 - rng.nextDouble()) * cfg.crashEveryHours() * HOUR);
        if (t >= span) {
          break;
        }
        long len = 5_000 + rng.nextLong(55_001L);
        crashes.add(new Crash(r, t, len));
        t += len;
      }
    }
    crashes.sort(Comparator.comparingLong(Crash::atMillis).thenComparingInt(Crash::region));
    return new Scenario(
        seed,
        n,
        List.copyOf(split),
        List.copyOf(demand),
        List.copyOf(tz),
        links,
        shiftRegion,
        shiftFrom,
        shiftTo,
        List.copyOf(numbered),
        List.copyOf(down),
        List.copyOf(crashes),
        byPair(down, n));
  }

  /** Demand through a region's local day: a floor at night, a peak at 14:00 local. */
  static double daytime(long atMillis, int tzHours) {
    double localHour = Math.floorMod(atMillis / 60_000 + tzHours * 60L, 24 * 60) / 60.0;
    double day = localHour >= 7 && localHour <= 21 ? Math.sin(Math.PI * (localHour - 7) / 14) : 0;
    return 0.15 + 0.85 * day;
  }

  /** Whether {@code a} and {@code b} can talk at {@code atMillis}. */
  boolean linkUp(int a, int b, long atMillis) {
    for (Interval i : downByPair[Math.min(a, b) * regions + Math.max(a, b)]) {
      if (atMillis >= i.fromMillis() && atMillis < i.toMillis()) {
        return false;
      }
    }
    return true;
  }

  /**
   * {@code down} by pair (index {@code lo * regions + hi}): {@link #linkUp} is asked per message.
   */
  private static Interval[][] byPair(List<Interval> down, int regions) {
    List<List<Interval>> lists = new ArrayList<>();
    for (int i = 0; i < regions * regions; i++) {
      lists.add(new ArrayList<>());
    }
    for (Interval i : down) {
      lists.get(i.a() * regions + i.b()).add(i);
    }
    return lists.stream().map(l -> l.toArray(Interval[]::new)).toArray(Interval[][]::new);
  }
}
