package dev.spendgateway.regionsim;

import dev.spendgateway.policy.money.Micros;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * {@code loadtest/multi-region-sim.sh N}: runs seeds 1..N (or one {@code --seed}), every compared
 * policy on each, and prints per policy the overshoot (must be 0), the share of calls refused by
 * the allowance, and the share refused only because the local allowance ran out while the company
 * still had headroom. A violation prints its seed, policy and the tail of the run's trace, and the
 * exit code is 1. Seeds run on {@code --threads} threads; each run is a function of its seed alone.
 *
 * <pre>
 *   N                     how many seeds (default 1000)
 *   --seed S              run only seed S (with --trace: print its whole trace)
 *   --from S              first seed (default 1)
 *   --policies a,b        policies to run (default GLOBAL,STATIC,PULL,PULL_NO_FLOOR,PUSH; ADD_FIRST is the broken order)
 *   --trace               print the trace of every run (use with --seed)
 *   --threads T           default 2
 * </pre>
 */
public final class MultiRegionSim {
  private static final int TRACE_TAIL = 80;

  private MultiRegionSim() {}

  public static void main(String[] args) throws Exception {
    int n = 1000;
    long from = 1;
    boolean trace = false;
    int threads = 2;
    Policy[] policies = Policy.compared();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--seed" -> {
          from = Long.parseLong(args[++i]);
          n = 1;
        }
        case "--from" -> from = Long.parseLong(args[++i]);
        case "--trace" -> trace = true;
        case "--threads" -> threads = Integer.parseInt(args[++i]);
        case "--policies" ->
            policies =
                Arrays.stream(args[++i].split(","))
                    .map(s -> Policy.valueOf(s.trim().toUpperCase()))
                    .toArray(Policy[]::new);
        default -> n = Integer.parseInt(args[i]);
      }
    }
    int violations = run(SimConfig.standard(), from, n, policies, trace, threads, System.out);
    System.exit(violations == 0 ? 0 : 1);
  }

  /** Runs and prints; returns how many runs broke an invariant. */
  static int run(
      SimConfig cfg,
      long from,
      int n,
      Policy[] policies,
      boolean trace,
      int threads,
      PrintStream out)
      throws InterruptedException, ExecutionException {
    long started = System.nanoTime();
    List<List<RunResult>> perSeed = runSeeds(cfg, from, n, policies, trace, threads);
    out.printf(
        "# multi-region-sim: %d seed(s) from %d; %d-%d regions; %d h from %s (+%d min drain); caps %s/day %s/month%n",
        n,
        from,
        cfg.minRegions(),
        cfg.maxRegions(),
        cfg.hours(),
        cfg.start(),
        cfg.drainMinutes(),
        usd(cfg.dailyCapMicros()),
        usd(cfg.monthlyCapMicros()));
    out.printf(
        "# ~%d calls/day skewed by time zone (peak 14:00 local) and a 3x shift; links %d-%d ms with partitions;"
            + " a ledger crash every ~%.0f h per region (+%.0f%% right after a transfer half)%n",
        cfg.callsPerDay(),
        cfg.minLinkMillis(),
        cfg.maxLinkMillis(),
        cfg.crashEveryHours(),
        cfg.crashAfterTransferChance() * 100);
    out.printf(
        "# rebalancing: low water %.0f%%, ask to %.0f%%, floor %.0f%%, rate %.0f%%/min of the region's share%n",
        cfg.lowWaterFraction() * 100,
        cfg.askFraction() * 100,
        cfg.floorFraction() * 100,
        cfg.ratePerMinuteFraction() * 100);
    out.println();
    out.printf(
        "%-13s %6s %9s %9s %9s %9s %10s %7s %8s %11s %9s %10s %11s %10s%n",
        "policy",
        "runs",
        "calls",
        "admitted",
        "refused%",
        "stranded%",
        "strand/ref",
        "peer%",
        "down%",
        "unused/day",
        "xfers/run",
        "moved/run",
        "overshoot",
        "violations");
    int violations = 0;
    List<RunResult> broken = new ArrayList<>();
    for (int p = 0; p < policies.length; p++) {
      long calls = 0, admitted = 0, refused = 0, stranded = 0, peer = 0, down = 0, xfers = 0;
      long moved = 0, over = 0, unused = 0;
      int bad = 0;
      for (List<RunResult> seed : perSeed) {
        RunResult r = seed.get(p);
        calls += r.calls();
        admitted += r.admitted();
        refused += r.refusedByCap();
        stranded += r.stranded();
        peer += r.peerHadRoom();
        unused += r.firstDayUnusedMicros();
        down += r.refusedDown();
        xfers += r.transfers();
        moved += r.movedMicros();
        over = Math.max(over, r.overshootMicros());
        if (r.violated()) {
          bad++;
          broken.add(r);
        }
      }
      violations += bad;
      out.printf(
          "%-13s %6d %9d %9d %8.2f%% %8.2f%% %9.1f%% %6.2f%% %7.2f%% %11s %9.1f %10s %11s %10d%n",
          policies[p],
          perSeed.size(),
          calls,
          admitted,
          pct(refused, calls),
          pct(stranded, calls),
          pct(stranded, refused),
          pct(peer, calls),
          pct(down, calls),
          usd(unused / Math.max(1, perSeed.size())),
          (double) xfers / perSeed.size(),
          usd(moved / Math.max(1, perSeed.size())),
          usd(over),
          bad);
    }
    out.println();
    for (Policy p : policies) {
      out.printf("# %-13s %s%n", p, p.description);
    }
    out.println(
        "# refused%: refused by the region's allowance (GLOBAL: by the cap); stranded%: refused while the"
            + " company-wide cap still had room for the call (one global ledger would have admitted it);"
            + " peer%: refused while one other region alone had headroom for it;"
            + " unused/day: the first day's company-wide cap left unspent, per run;"
            + " down%: refused while the region's ledger was crashed");
    int shown = 0;
    for (RunResult r : broken) {
      out.println();
      out.printf("VIOLATION seed %d policy %s: %s%n", r.seed(), r.policy(), r.violation());
      out.printf(
          "  reproduce: loadtest/multi-region-sim.sh --seed %d --policies %s --trace%n",
          r.seed(), r.policy());
      if (shown++ < 3) {
        RunResult traced =
            r.trace() != null
                ? r
                : Simulation.run(Scenario.generate(r.seed(), cfg), cfg, r.policy(), true);
        List<String> lines = traced.trace().lines().toList();
        out.printf(
            "  trace (last %d of %d lines):%n", Math.min(TRACE_TAIL, lines.size()), lines.size());
        lines
            .subList(Math.max(0, lines.size() - TRACE_TAIL), lines.size())
            .forEach(l -> out.println("  " + l));
      }
    }
    if (trace && broken.isEmpty()) {
      for (List<RunResult> seed : perSeed) {
        for (RunResult r : seed) {
          out.println();
          out.printf("## trace seed %d policy %s%n", r.seed(), r.policy());
          out.println(r.trace());
        }
      }
    }
    out.printf("%n# %.1f s%n", (System.nanoTime() - started) / 1e9);
    return violations;
  }

  /** Every policy on every seed; results in seed order, whatever the threads did. */
  static List<List<RunResult>> runSeeds(
      SimConfig cfg, long from, int n, Policy[] policies, boolean trace, int threads)
      throws InterruptedException, ExecutionException {
    ExecutorService pool = Executors.newFixedThreadPool(Math.max(1, threads));
    try {
      List<Future<List<RunResult>>> futures = new ArrayList<>();
      for (long s = from; s < from + n; s++) {
        long seed = s;
        futures.add(pool.submit(() -> runSeed(cfg, seed, policies, trace)));
      }
      List<List<RunResult>> out = new ArrayList<>();
      for (Future<List<RunResult>> f : futures) {
        out.add(f.get());
      }
      return out;
    } finally {
      pool.shutdownNow();
    }
  }

  static List<RunResult> runSeed(SimConfig cfg, long seed, Policy[] policies, boolean trace) {
    Scenario sc = Scenario.generate(seed, cfg);
    List<RunResult> results = new ArrayList<>();
    for (Policy p : policies) {
      results.add(Simulation.run(sc, cfg, p, trace));
    }
    return results;
  }

  private static double pct(long part, long whole) {
    return whole == 0 ? 0 : 100.0 * part / whole;
  }

  private static String usd(long micros) {
    return "$" + Micros.toUsd(micros).setScale(2, java.math.RoundingMode.HALF_UP).toPlainString();
  }
}
