package dev.spendgateway.ledger.bench;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.LedgerProtocol.Closed;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.Ledger;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.access.Lane;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * Durable reserve+settle pairs per second through {@code GlobalBudget} on the H2 FILE journal
 * (the shipped {@code conf/ledger.conf}, caps raised so nothing is refused), at 1, 16 and 256
 * concurrent callers, with reserve latency percentiles; then the same workload on a naive
 * baseline where every reservation is one H2 transaction with {@code SELECT … FOR UPDATE} on the
 * cap rows ({@link NaiveBaseline}). Results are printed as a Markdown table.
 *
 * <p>Each caller is a closed loop: reserve $0.01, wait for the durable answer, settle $0.005,
 * wait, repeat. Nothing is answered before its event is in the journal.
 *
 * <p>Run: {@code mvn -B -q -pl ledger-actor -am -Pbench -DskipTests verify}
 * (system properties: {@code bench.seconds}, {@code bench.warmup}, {@code bench.callers}).
 */
public final class LedgerBench {
  private static final int[] DEFAULT_CALLERS = {1, 16, 256};

  record Result(String target, int callers, long pairs, double seconds, Histogram reserveLatency, long errors) {
    double pairsPerSecond() {
      return pairs / seconds;
    }

    String row() {
      return String.format("| %s | %d | %,.0f | %.2f | %.2f | %.2f | %d |", target, callers, pairsPerSecond(),
          reserveLatency.getValueAtPercentile(50) / 1000.0, reserveLatency.getValueAtPercentile(99) / 1000.0,
          reserveLatency.getMaxValue() / 1000.0, errors);
    }
  }

  public static void main(String[] args) throws Exception {
    int seconds = Integer.getInteger("bench.seconds", 10);
    int warmup = Integer.getInteger("bench.warmup", 3);
    int[] levels = System.getProperty("bench.callers") == null ? DEFAULT_CALLERS
        : java.util.Arrays.stream(System.getProperty("bench.callers").split(",")).mapToInt(Integer::parseInt).toArray();
    System.out.printf("# ledger bench: %d s per level after %d s warm-up, %d cores, %s%n", seconds, warmup,
        Runtime.getRuntime().availableProcessors(), System.getProperty("java.vm.name") + " " + Runtime.version());

    List<Result> results = new java.util.ArrayList<>();
    for (int callers : levels) {
      results.add(benchLedger(callers, warmup, seconds));
      System.out.println(results.get(results.size() - 1).row());
    }
    boolean baseline = Boolean.parseBoolean(System.getProperty("bench.baseline", "true"));
    for (int callers : baseline ? levels : new int[0]) {
      results.add(NaiveBaseline.run(callers, warmup, seconds));
      System.out.println(results.get(results.size() - 1).row());
    }
    System.out.println();
    System.out.println("| target | callers | pairs/s (durable reserve+settle) | reserve p50 ms | reserve p99 ms | reserve max ms | errors |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|");
    results.forEach(r -> System.out.println(r.row()));
    for (int callers : baseline ? levels : new int[0]) {
      Result ledger = results.stream().filter(r -> r.target().equals("GlobalBudget") && r.callers() == callers).findFirst().orElseThrow();
      Result naive = results.stream().filter(r -> r.target().equals("naive SELECT FOR UPDATE") && r.callers() == callers).findFirst().orElseThrow();
      System.out.printf("speed-up at %d callers: %.1fx%n", callers, ledger.pairsPerSecond() / naive.pairsPerSecond());
    }
    System.exit(0);
  }

  static Config ledgerConfig(Path dataDir) {
    File shipped = new File("conf/ledger.conf").exists() ? new File("conf/ledger.conf") : new File("../conf/ledger.conf");
    return ConfigFactory.systemProperties().withFallback(ConfigFactory.parseMap(Map.of(
            "gateway.data-dir", dataDir.toString(),
            "ledger.caps.global-daily-usd", "1000000000",
            "ledger.caps.global-monthly-usd", "1000000000",
            "pekko.loglevel", "WARNING")))
        .withFallback(ConfigFactory.parseFile(shipped))
        .withFallback(ConfigFactory.defaultReference())
        .resolve();
  }

  private static Result benchLedger(int callers, int warmupSeconds, int seconds) throws Exception {
    Path dataDir = Files.createTempDirectory("ledger-bench");
    Config config = ledgerConfig(dataDir);
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "ledger-bench", config);
    try {
      LedgerSettings settings = LedgerSettings.fromConfig(config);
      LedgerClient client = LedgerClient.of(system, Ledger.spawn(system, settings, Clock.systemUTC()), settings);
      client.awaitReady().toCompletableFuture().get(60, TimeUnit.SECONDS);

      ConcurrentHistogram latency = new ConcurrentHistogram(TimeUnit.SECONDS.toMicros(60), 3);
      AtomicLong pairs = new AtomicLong();
      AtomicLong errors = new AtomicLong();
      AtomicBoolean measuring = new AtomicBoolean(false);
      AtomicBoolean running = new AtomicBoolean(true);
      AtomicLong ids = new AtomicLong();
      CompletableFuture<?>[] loops = new CompletableFuture<?>[callers];
      for (int c = 0; c < callers; c++) {
        String brand = "brand-" + (c % 100);
        loops[c] = new CompletableFuture<>();
        callerLoop(client, brand, ids, latency, pairs, errors, measuring, running, loops[c]);
      }
      Thread.sleep(warmupSeconds * 1000L);
      latency.reset();
      pairs.set(0);
      errors.set(0);
      measuring.set(true);
      long start = System.nanoTime();
      Thread.sleep(seconds * 1000L);
      long done = pairs.get();
      double elapsed = (System.nanoTime() - start) / 1e9;
      measuring.set(false);
      Histogram snapshot = latency.copy();
      long errs = errors.get();
      running.set(false);
      CompletableFuture.allOf(loops).get(60, TimeUnit.SECONDS);
      return new Result("GlobalBudget", callers, done, elapsed, snapshot, errs);
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
      deleteTree(dataDir); // a run leaves ~1 GB of H2 file behind otherwise
    }
  }

  /** Removes a benchmark's scratch directory (best effort). */
  static void deleteTree(Path dir) {
    try (var paths = Files.walk(dir)) {
      paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (java.io.IOException ignored) {
      // scratch space in the temp dir: the OS cleans up what is left
    }
  }

  /** One caller: reserve, then settle, then again, until told to stop. No thread is blocked. */
  private static void callerLoop(LedgerClient client, String brand, AtomicLong ids, ConcurrentHistogram latency,
      AtomicLong pairs, AtomicLong errors, AtomicBoolean measuring, AtomicBoolean running, CompletableFuture<?> finished) {
    if (!running.get()) {
      finished.complete(null);
      return;
    }
    String id = "bench-" + ids.incrementAndGet();
    long t0 = System.nanoTime();
    client.reserve(new ReserveRequest(id, Lane.APP, brand, 10_000, 1_000_000_000_000L, 1_000_000_000_000L))
        .thenCompose(reply -> {
          long micros = (System.nanoTime() - t0) / 1000;
          if (measuring.get()) {
            latency.recordValue(Math.min(micros, TimeUnit.SECONDS.toMicros(60)));
          }
          if (!(reply instanceof Reserved)) {
            throw new IllegalStateException("not reserved: " + reply);
          }
          return client.settle(id, 5_000);
        })
        .whenComplete((reply, failure) -> {
          if (failure == null && reply instanceof Closed) {
            pairs.incrementAndGet();
          } else {
            errors.incrementAndGet();
          }
          callerLoop(client, brand, ids, latency, pairs, errors, measuring, running, finished);
        });
  }
}
