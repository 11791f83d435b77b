package dev.spendgateway.loadtest;

import java.io.PrintStream;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.HdrHistogram.Histogram;

/**
 * Drives a {@link Scenario} with {@code concurrency} worker threads per target (Java 17: no virtual
 * threads), each blocking on one call at a time. Closed loop: a worker sends its next call as soon
 * as the last one returns. Open loop: call {@code i} is due at {@link RateSchedule#intendedNanos};
 * a worker waits for that moment, and latency counts from it, so a call delayed because every
 * worker was busy is charged its wait. Prints one progress line per second.
 */
final class Runner {

  /**
   * @param duration how long to run (closed loop), or {@code null}
   * @param requests how many calls, or {@code null}; with a rate and a duration, rate × duration
   * @param ratePerSecond total calls per second (open loop), or {@code null} for closed loop
   */
  record Plan(int concurrency, Duration duration, Long requests, Double ratePerSecond) {
    long limit() {
      if (requests != null) {
        return requests;
      }
      if (ratePerSecond != null) {
        return RateSchedule.requestsIn(duration, ratePerSecond);
      }
      return Long.MAX_VALUE;
    }

    boolean openLoop() {
      return ratePerSecond != null;
    }
  }

  /** How many calls were started and how long the run took, first send to last answer. */
  record Outcome(long calls, long elapsedNanos) {
    double seconds() {
      return elapsedNanos / 1e9;
    }
  }

  private Runner() {}

  static Outcome run(Scenario scenario, Plan plan, List<HttpClient> clients, PrintStream progress)
      throws InterruptedException {
    long limit = plan.limit();
    int targets = scenario.targets();
    AtomicLong[] next = new AtomicLong[targets];
    AtomicLong started = new AtomicLong();
    long start = System.nanoTime();
    long deadline =
        plan.duration() == null || plan.openLoop()
            ? Long.MAX_VALUE
            : start + plan.duration().toNanos();
    RateSchedule[] schedules = new RateSchedule[targets];
    for (int t = 0; t < targets; t++) {
      next[t] = new AtomicLong();
      // targets start half an interval apart, so their calls interleave instead of colliding
      schedules[t] =
          plan.openLoop()
              ? new RateSchedule(
                  start + Math.round(t * 1e9 / plan.ratePerSecond() / targets),
                  plan.ratePerSecond())
              : null;
    }

    ScheduledExecutorService ticker =
        Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "loadtest-progress"));
    AtomicLong tick = new AtomicLong();
    ticker.scheduleAtFixedRate(
        () -> printProgress(scenario, tick.incrementAndGet(), progress), 1, 1, TimeUnit.SECONDS);

    int workerCount = plan.concurrency() * targets;
    ExecutorService workers =
        Executors.newFixedThreadPool(workerCount, r -> daemon(r, "loadtest-worker"));
    List<Future<?>> running = new ArrayList<>();
    for (int w = 0; w < workerCount; w++) {
      HttpClient client = clients.get(w % clients.size());
      int target = w % targets;
      AtomicLong sequence = next[target];
      RateSchedule schedule = schedules[target];
      running.add(
          workers.submit(
              () -> {
                while (true) {
                  long i = sequence.getAndIncrement();
                  if (i >= limit) {
                    return null;
                  }
                  long from;
                  if (schedule != null) {
                    from = schedule.intendedNanos(i);
                    sleepUntil(from);
                  } else {
                    from = System.nanoTime();
                    if (from >= deadline) {
                      return null;
                    }
                  }
                  started.incrementAndGet();
                  scenario.execute(client, target, i, from);
                }
              }));
    }
    try {
      for (Future<?> f : running) {
        f.get();
      }
    } catch (java.util.concurrent.ExecutionException e) {
      throw new IllegalStateException("a load worker failed", e.getCause());
    } finally {
      workers.shutdownNow();
      ticker.shutdownNow();
      ticker.awaitTermination(2, TimeUnit.SECONDS);
    }
    long elapsed = System.nanoTime() - start;
    for (OpStats op : scenario.ops()) {
      op.drainInterval(); // the last partial second
    }
    return new Outcome(started.get(), elapsed);
  }

  private static void sleepUntil(long nanoTime) {
    long wait;
    while ((wait = nanoTime - System.nanoTime()) > 0) {
      LockSupport.parkNanos(wait);
    }
  }

  private static void printProgress(Scenario scenario, long second, PrintStream out) {
    StringBuilder line = new StringBuilder(String.format("[%4ds]", second));
    for (OpStats op : scenario.ops()) {
      Histogram h = op.drainInterval();
      line.append(
          String.format(
              " %s %,d/s p50 %s p99 %s %s",
              op.name(),
              h.getTotalCount(),
              Report.ms(h.getValueAtPercentile(50)),
              Report.ms(h.getValueAtPercentile(99)),
              compact(op.statuses())));
    }
    if (out != null) {
      out.println(line);
    }
  }

  private static String compact(Map<String, Long> statuses) {
    StringBuilder s = new StringBuilder("{");
    statuses.forEach((k, v) -> s.append(s.length() > 1 ? " " : "").append(k).append('=').append(v));
    return s.append('}').toString();
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
