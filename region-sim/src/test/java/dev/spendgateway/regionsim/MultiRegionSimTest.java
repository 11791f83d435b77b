package dev.spendgateway.regionsim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The simulation's promises, fast: hundreds of seeds at a fifth of the scale with no overshoot and
 * no broken invariant for every real policy; a run is a function of its seed; and the checker does
 * fail — the broken transfer order (add before take) is caught, with a real overshoot.
 */
class MultiRegionSimTest {
  private static final SimConfig SMALL = SimConfig.small();
  private static final Policy[] REAL = {
    Policy.STATIC, Policy.PULL, Policy.PULL_NO_FLOOR, Policy.PUSH
  };
  private static final Policy[] ALL = {Policy.GLOBAL, Policy.STATIC, Policy.PULL, Policy.PUSH};

  @Test
  void hundredsOfSeedsNeverOvershootAndKeepEveryInvariant() throws Exception {
    List<List<RunResult>> seeds = MultiRegionSim.runSeeds(SMALL, 1, 200, REAL, false, 2);
    int transfers = 0;
    int crashes = 0;
    int refused = 0;
    for (List<RunResult> seed : seeds) {
      for (RunResult r : seed) {
        assertEquals(0, r.overshootMicros(), () -> "seed " + r.seed() + " " + r.policy());
        assertNull(r.violation(), () -> "seed " + r.seed() + " " + r.policy());
        transfers += r.transfers();
        crashes += r.crashes();
        refused += r.refusedByCap();
      }
    }
    // Not vacuous: allowance moved, ledgers crashed, and the caps were reached.
    assertTrue(transfers > 1_000, "transfers " + transfers);
    assertTrue(crashes > 1_000, "crashes " + crashes);
    assertTrue(refused > 1_000, "refused " + refused);
  }

  @Test
  void aRunIsReproducedFromItsSeed() throws Exception {
    List<RunResult> first = MultiRegionSim.runSeed(SMALL, 7, ALL, true);
    List<RunResult> again = MultiRegionSim.runSeed(SMALL, 7, ALL, true);
    assertEquals(first, again);
    assertTrue(first.get(2).trace().contains(" OUT "), "the PULL run moved allowance");
    // Threads change nothing either: results come back in seed order, each from its seed alone.
    assertEquals(
        MultiRegionSim.runSeeds(SMALL, 20, 12, ALL, false, 1),
        MultiRegionSim.runSeeds(SMALL, 20, 12, ALL, false, 2));
  }

  @Test
  void aTransferWhoseLenderCrashedBeforeSendingItLandsFromTheJournaledOut() {
    // The case recovery exists for: the out is durable, its Give was never sent.
    for (long seed = 1; seed <= 60; seed++) {
      RunResult r =
          Simulation.run(Scenario.generate(seed, SMALL), SMALL, Policy.PULL_NO_FLOOR, true);
      List<String> lines = r.trace().lines().toList();
      for (int i = 1; i < lines.size(); i++) {
        if (lines.get(i).contains("CRASH (after journaling an out, before sending it)")) {
          String out = lines.get(i - 1);
          String tid = out.substring(out.indexOf(" OUT ") + 5).split(" ")[0];
          assertNull(r.violation(), r.violation());
          assertTrue(
              lines.subList(i, lines.size()).stream().anyMatch(l -> l.contains(" IN " + tid + " ")),
              "transfer " + tid + " of seed " + seed + " never landed");
          return;
        }
      }
    }
    throw new AssertionError("no seed crashed a lender between its out and its Give");
  }

  @Test
  void theBrokenOrderAddBeforeTakeIsCaught() throws Exception {
    List<List<RunResult>> seeds =
        MultiRegionSim.runSeeds(SMALL, 1, 30, new Policy[] {Policy.ADD_FIRST}, false, 2);
    int overshot = 0;
    for (List<RunResult> seed : seeds) {
      RunResult r = seed.get(0);
      assertNotNull(r.violation(), () -> "seed " + r.seed() + " broke nothing");
      if (r.overshootMicros() > 0) {
        overshot++;
      }
    }
    // Not only the sum of allowances: some runs spend above the company-wide cap.
    assertTrue(overshot > 0, "no run of the broken order overshot");
  }

  @Test
  void aViolationIsPrintedWithItsSeedAndTrace() throws Exception {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int violations =
        MultiRegionSim.run(
            SMALL,
            1,
            2,
            new Policy[] {Policy.PULL, Policy.ADD_FIRST},
            false,
            1,
            new PrintStream(bytes, true, StandardCharsets.UTF_8));
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertEquals(2, violations, "both runs of the broken order, none of PULL");
    assertTrue(out.contains("VIOLATION seed 1 policy ADD_FIRST"), out);
    assertTrue(out.contains("--seed 1 --policies ADD_FIRST --trace"), out);
    assertTrue(out.contains("INVARIANT BROKEN"), out);
  }
}
