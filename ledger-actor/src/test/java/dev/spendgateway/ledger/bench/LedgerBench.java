package dev.spendgateway.ledger.bench;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.Ledger;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol;
import dev.spendgateway.ledger.LedgerProtocol.Closed;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.ledger.journal.JournalDurability;
import dev.spendgateway.ledger.journal.JournalSyncStats;
import dev.spendgateway.ledger.journal.JournalWriter;
import dev.spendgateway.policy.access.Lane;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * Durable reserve+settle pairs per second through {@code GlobalBudget} on the H2 FILE journal (the
 * shipped {@code conf/ledger.conf}, caps raised so nothing is refused), at 1, 16 and 256 concurrent
 * callers, with reserve latency percentiles; then the same workload on a naive baseline where every
 * reservation is one H2 transaction with {@code SELECT … FOR UPDATE} on the cap rows ({@link
 * NaiveBaseline}). Results are printed as a Markdown table.
 *
 * <p>Each caller is a closed loop: reserve $0.01, wait for the durable answer, settle $0.005, wait,
 * repeat. Nothing is answered before its event is in the journal and, with {@code
 * ledger.journal.sync} on (shipped default), flushed to disk; the run prints this machine's fsync
 * latency before and after, and per level the journal's writes and fsyncs.
 *
 * <p>Run: {@code mvn -B -q -pl ledger-actor -am -Pbench -DskipTests verify} (system properties:
 * {@code bench.seconds}, {@code bench.warmup}, {@code bench.callers}).
 */
public final class LedgerBench {
  private static final int[] DEFAULT_CALLERS = {1, 16, 256};

  record Result(
      String target,
      int callers,
      long pairs,
      double seconds,
      Histogram reserveLatency,
      long errors,
      String journal) {
    Result(
        String target,
        int callers,
        long pairs,
        double seconds,
        Histogram reserveLatency,
        long errors) {
      this(target, callers, pairs, seconds, reserveLatency, errors, "");
    }

    double pairsPerSecond() {
      return pairs / seconds;
    }

    String row() {
      return String.format(
          "| %s | %d | %,.0f | %.2f | %.2f | %.2f | %d | %s |",
          target,
          callers,
          pairsPerSecond(),
          reserveLatency.getValueAtPercentile(50) / 1000.0,
          reserveLatency.getValueAtPercentile(99) / 1000.0,
          reserveLatency.getMaxValue() / 1000.0,
          errors,
          journal);
    }
  }

  public static void main(String[] args) throws Exception {
    int seconds = Integer.getInteger("bench.seconds", 10);
    int warmup = Integer.getInteger("bench.warmup", 3);
    int[] levels =
        System.getProperty("bench.callers") == null
            ? DEFAULT_CALLERS
            : java.util.Arrays.stream(System.getProperty("bench.callers").split(","))
                .mapToInt(Integer::parseInt)
                .toArray();
    System.out.printf(
        "# ledger bench: %d s per level after %d s warm-up, %d cores, %s%n",
        seconds,
        warmup,
        Runtime.getRuntime().availableProcessors(),
        System.getProperty("java.vm.name") + " " + Runtime.version());
    boolean sync =
        JournalDurability.syncRequested(
            ledgerConfig(Path.of(System.getProperty("java.io.tmpdir"))));
    System.out.println(
        "# journal flush (ledger.journal.sync): "
            + (sync
                ? "on — every answer waits for an fsync"
                : "OFF — answers wait for the OS write only, not the disk"));
    Config shipped = ledgerConfig(Path.of(System.getProperty("java.io.tmpdir")));
    System.out.printf(
        "# journal: ledger.journal.flush = %s, ledger.journal.pipeline = %s; settles by %s%n",
        shipped.hasPath("ledger.journal.flush")
            ? shipped.getString("ledger.journal.flush")
            : "store-and-force",
        shipped.hasPath("ledger.journal.pipeline")
            ? shipped.getString("ledger.journal.pipeline")
            : "off",
        closer() == Owner.GATEWAY
            ? "the gateway (answered at commit, flushed with the next write)"
            : "the ledger API (answered after their flush)");
    // The floor of any durable answer on this machine, measured where the benchmark's journals
    // live.
    String fsyncBefore = FsyncProbe.summary(Path.of(System.getProperty("java.io.tmpdir")));
    System.out.println("# before: " + fsyncBefore);

    List<Result> results = new java.util.ArrayList<>();
    for (int callers : levels) {
      results.add(benchLedger(callers, warmup, seconds));
      System.out.println(results.get(results.size() - 1).row());
    }
    boolean baseline = Boolean.parseBoolean(System.getProperty("bench.baseline", "true"));
    for (int callers : baseline ? levels : new int[0]) {
      results.add(NaiveBaseline.run(callers, warmup, seconds, sync));
      System.out.println(results.get(results.size() - 1).row());
    }
    String fsyncAfter = FsyncProbe.summary(Path.of(System.getProperty("java.io.tmpdir")));
    System.out.println();
    System.out.println("# before: " + fsyncBefore);
    System.out.println("# after:  " + fsyncAfter);
    System.out.println(
        "| target | callers | pairs/s (reserve+settle) | reserve p50 ms | reserve p99 ms | reserve max ms | errors | journal |");
    System.out.println("|---|---:|---:|---:|---:|---:|---:|---|");
    results.forEach(r -> System.out.println(r.row()));
    for (int callers : baseline ? levels : new int[0]) {
      Result ledger =
          results.stream()
              .filter(r -> r.target().equals("GlobalBudget") && r.callers() == callers)
              .findFirst()
              .orElseThrow();
      Result naive =
          results.stream()
              .filter(r -> r.target().equals("naive SELECT FOR UPDATE") && r.callers() == callers)
              .findFirst()
              .orElseThrow();
      System.out.printf(
          "speed-up at %d callers: %.1fx%n",
          callers, ledger.pairsPerSecond() / naive.pairsPerSecond());
    }
    System.exit(0);
  }

  /**
   * Who reserves and settles ({@code bench.closer}): {@code gateway} (default: the provider routes,
   * whose settles are answered at commit and flushed with the next write) or {@code api} (the
   * ledger API, every answer after its flush).
   */
  static Owner closer() {
    return "api".equals(System.getProperty("bench.closer", "gateway"))
        ? Owner.LEDGER_API
        : Owner.GATEWAY;
  }

  static Config ledgerConfig(Path dataDir) {
    File shipped =
        new File("conf/ledger.conf").exists()
            ? new File("conf/ledger.conf")
            : new File("../conf/ledger.conf");
    return ConfigFactory.systemProperties()
        .withFallback(
            ConfigFactory.parseMap(
                Map.of(
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
      var ledger = Ledger.spawn(system, settings, Clock.systemUTC());
      // bench.ask=pekko: Pekko's ask (a temporary actor per ask), to measure the direct replies
      // the gateway's client uses against it.
      LedgerClient client =
          ("pekko".equals(System.getProperty("bench.ask"))
                  ? new LedgerClient(
                      ledger, system.scheduler(), system.executionContext(), settings.askTimeout())
                  : LedgerClient.of(system, ledger, settings))
              .actingAs(closer());
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
      Thread.sleep(warmupSeconds * 1000L); // time is the point: the warm-up window
      latency.reset();
      pairs.set(0);
      errors.set(0);
      JournalStats stats = new JournalStats(JournalWriter.of(system.classicSystem()).stats());
      JournalStats.Snapshot statsAtStart = stats.now();
      measuring.set(true);
      long start = System.nanoTime();
      Thread.sleep(seconds * 1000L); // time is the point: the measured window
      long done = pairs.get();
      double elapsed = (System.nanoTime() - start) / 1e9;
      measuring.set(false);
      Histogram snapshot = latency.copy();
      long errs = errors.get();
      running.set(false);
      CompletableFuture.allOf(loops).get(60, TimeUnit.SECONDS);
      return new Result(
          "GlobalBudget", callers, done, elapsed, snapshot, errs, stats.since(statsAtStart));
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
      deleteTree(dataDir); // a run leaves ~1 GB of H2 file behind otherwise
    }
  }

  /** The journal's writes and syncs over the measured interval, as one table cell. */
  private record JournalStats(JournalSyncStats live) {
    record Snapshot(long writes, long syncs, long syncedWrites, long syncNanos) {}

    Snapshot now() {
      return new Snapshot(live.writes(), live.syncs(), live.syncedWrites(), live.syncNanos());
    }

    String since(Snapshot start) {
      Snapshot end = now();
      long syncs = end.syncs() - start.syncs();
      if (syncs == 0) {
        return (end.writes() - start.writes()) + " writes, no fsync";
      }
      return String.format(
          "%,d writes, %,d fsyncs (%.2f writes/fsync), fsync mean %.2f ms",
          end.writes() - start.writes(),
          syncs,
          (double) (end.syncedWrites() - start.syncedWrites()) / syncs,
          (end.syncNanos() - start.syncNanos()) / 1e6 / syncs);
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

  /**
   * Whether a caller waits for each settle's answer before its next reserve ({@code bench.settle =
   * wait}, the default) or goes on once the settle is sent ({@code send}), as the gateway's
   * provider calls do.
   */
  private static final boolean WAIT_FOR_SETTLE =
      !"send".equals(System.getProperty("bench.settle", "wait"));

  /**
   * With {@code bench.settle = send}: how long after sending a settle the caller's next reserve
   * goes ({@code bench.gap-micros}, default 0), standing in for the answer's trip to the caller and
   * the next request's way back through the edge.
   */
  private static final long GAP_MICROS = Long.getLong("bench.gap-micros", 0);

  /** What a caller that does not wait for its settle counts the pair by. */
  private static final Object SENT = new Object();

  /** One caller: reserve, then settle, then again, until told to stop. No thread is blocked. */
  private static void callerLoop(
      LedgerClient client,
      String brand,
      AtomicLong ids,
      ConcurrentHistogram latency,
      AtomicLong pairs,
      AtomicLong errors,
      AtomicBoolean measuring,
      AtomicBoolean running,
      CompletableFuture<?> finished) {
    if (!running.get()) {
      finished.complete(null);
      return;
    }
    String id = "bench-" + ids.incrementAndGet();
    long t0 = System.nanoTime();
    client
        .reserve(
            new ReserveRequest(id, Lane.APP, brand, 10_000, 1_000_000_000_000L, 1_000_000_000_000L))
        .thenCompose(
            reply -> {
              long micros = (System.nanoTime() - t0) / 1000;
              if (measuring.get()) {
                latency.recordValue(Math.min(micros, TimeUnit.SECONDS.toMicros(60)));
              }
              if (!(reply instanceof Reserved)) {
                throw new IllegalStateException("not reserved: " + reply);
              }
              CompletionStage<LedgerProtocol.CloseReply> settled = client.settle(id, 5_000);
              if (WAIT_FOR_SETTLE) {
                return settled.thenApply(Object.class::cast);
              }
              // As a provider call: its settle is sent and the caller's next call goes on without
              // its answer (the settle is counted as an error if it is not settled after all).
              settled.whenComplete(
                  (closed, failure) -> {
                    if (failure != null || !(closed instanceof Closed)) {
                      errors.incrementAndGet();
                    }
                  });
              return GAP_MICROS == 0
                  ? CompletableFuture.<Object>completedFuture(SENT)
                  : CompletableFuture.supplyAsync(
                      () -> SENT,
                      CompletableFuture.delayedExecutor(GAP_MICROS, TimeUnit.MICROSECONDS));
            })
        .whenComplete(
            (reply, failure) -> {
              if (failure == null && (reply instanceof Closed || reply == SENT)) {
                pairs.incrementAndGet();
              } else {
                errors.incrementAndGet();
              }
              callerLoop(client, brand, ids, latency, pairs, errors, measuring, running, finished);
            });
  }
}
