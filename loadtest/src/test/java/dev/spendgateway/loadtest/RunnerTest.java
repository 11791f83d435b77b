package dev.spendgateway.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

class RunnerTest {

  /** Records which (target, i) ran, and how late each open-loop call started. */
  private static final class Fake implements Scenario {
    final int targets;
    final Set<String> calls = ConcurrentHashMap.newKeySet();
    final OpStats stats = new OpStats("fake");
    volatile long maxLateNanos;

    Fake(int targets) {
      this.targets = targets;
    }

    @Override
    public List<OpStats> ops() {
      return List.of(stats);
    }

    @Override
    public int targets() {
      return targets;
    }

    @Override
    public void execute(HttpClient client, int target, long i, long fromNanos) {
      calls.add(target + ":" + i);
      maxLateNanos = Math.max(maxLateNanos, System.nanoTime() - fromNanos);
      stats.record(200, System.nanoTime() - fromNanos);
    }
  }

  @Test
  void closedLoopRunsExactlyTheRequestedCallsOncePerTarget() throws Exception {
    Fake fake = new Fake(2);
    Runner.Outcome o =
        Runner.run(
            fake, new Runner.Plan(4, null, 500L, null), List.of(HttpClient.newHttpClient()), null);
    assertEquals(1000, o.calls());
    assertEquals(1000, fake.calls.size());
    assertTrue(fake.calls.contains("0:499") && fake.calls.contains("1:499"));
    assertEquals(1000, fake.stats.totalLatency().getTotalCount());
  }

  @Test
  void openLoopSendsOnScheduleAndTakesRateTimesDuration() throws Exception {
    Fake fake = new Fake(1);
    Runner.Outcome o =
        Runner.run(
            fake,
            new Runner.Plan(2, Duration.ofMillis(200), null, 500d),
            List.of(HttpClient.newHttpClient()),
            null);
    assertEquals(100, o.calls());
    // call 99 is due at 198 ms: the run cannot finish before it
    assertTrue(o.elapsedNanos() >= Duration.ofMillis(198).toNanos(), "elapsed " + o.elapsedNanos());
  }
}
