package dev.spendgateway.ledger.bench;

import com.typesafe.config.Config;
import dev.spendgateway.ledger.Ledger;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.ledger.LedgerState;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.access.Lane;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;

/**
 * Memory over time: a steady rate of durable reserve+settle pairs (each a new id) against the real
 * ledger on an H2 FILE journal, with the idempotency window scaled down so ids leave it during the
 * run. Every {@code bench.report} seconds it prints heap after the last GC, the reserve p99 of the
 * interval, and the latest snapshot's size and serialization time (the snapshot row read back and
 * serialized again off the writer: what the snapshot store pays) with its id memory estimate. Flat
 * columns over the run are the point: state, snapshots and latency follow the window, not the run's
 * length.
 *
 * <p>Run (5 minutes; the figures in docs/BENCHMARKS.md "Memory over time"): {@code java -Xmx1g -cp
 * <test classpath> -Dbench.minutes=5 -Dbench.rate=500 -Dledger.idempotency-window=1m
 * -Dledger.idempotency-horizon=2m ... MemoryOverTimeBench}
 */
public final class MemoryOverTimeBench {
  public static void main(String[] args) throws Exception {
    int minutes = Integer.getInteger("bench.minutes", 5);
    int rate = Integer.getInteger("bench.rate", 500);
    int reportSeconds = Integer.getInteger("bench.report", 15);
    Path dataDir = Files.createTempDirectory("ledger-memory-bench");
    Config config = LedgerBench.ledgerConfig(dataDir);
    LedgerSettings settings = LedgerSettings.fromConfig(config);
    System.out.printf(
        "# memory over time: %d min at %d pairs/s, window %s, horizon %s, retention %s, snapshot after %d+ facts"
            + " (and half the ids held), compaction every %s, %d cores, heap max %d MB%n",
        minutes,
        rate,
        settings.idempotencyWindow(),
        settings.idempotencyHorizon(),
        settings.retention(),
        settings.snapshotEvery(),
        settings.compactionInterval(),
        Runtime.getRuntime().availableProcessors(),
        Runtime.getRuntime().maxMemory() >> 20);
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "ledger-memory-bench", config);
    Serialization serialization = SerializationExtension.get(Adapter.toClassic(system));
    ScheduledExecutorService pacer = Executors.newSingleThreadScheduledExecutor();
    try {
      LedgerClient client =
          LedgerClient.of(system, Ledger.spawn(system, settings, Clock.systemUTC()), settings);
      client.awaitReady().toCompletableFuture().get(60, TimeUnit.SECONDS);
      Recorder latency = new Recorder(3);
      AtomicLong next = new AtomicLong();
      AtomicLong errors = new AtomicLong();
      long periodNanos = TimeUnit.SECONDS.toNanos(1) / rate;
      pacer.scheduleAtFixedRate(
          () -> pair(client, "mem-" + next.getAndIncrement(), latency, errors),
          0,
          periodNanos,
          TimeUnit.NANOSECONDS);
      System.out.println(
          "| t (s) | pairs | heap after GC (MB) | reserve p99 (ms) | reserve max (ms) | snapshot bytes"
              + " | snapshot serialize (ms) | ids in window | id memory (MB) | errors | journal file (MB) |");
      System.out.println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
      long start = System.nanoTime();
      for (int t = reportSeconds; t <= minutes * 60; t += reportSeconds) {
        // Time is the point: one report row per interval of traffic.
        Thread.sleep(
            Math.max(0, start + TimeUnit.SECONDS.toNanos(t) - System.nanoTime()) / 1_000_000);
        Histogram h = latency.getIntervalHistogram();
        String snap = latestSnapshot(dataDir, serialization);
        long heapMb = oldGenAfterGcMb();
        long fileMb = Files.size(dataDir.resolve("ledger.mv.db")) >> 20;
        System.out.printf(
            "| %d | %,d | %d | %.2f | %.2f | %s | %d | %,d |%n",
            t,
            next.get(),
            heapMb,
            h.getValueAtPercentile(99) / 1000.0,
            h.getMaxValue() / 1000.0,
            snap,
            errors.get(),
            fileMb);
      }
    } finally {
      pacer.shutdownNow();
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    System.exit(0);
  }

  private static void pair(LedgerClient client, String id, Recorder latency, AtomicLong errors) {
    long started = System.nanoTime();
    client
        .reserve(
            new ReserveRequest(
                id,
                Lane.APP,
                "brand-" + (id.hashCode() & 63),
                10_000,
                1_000_000_000_000L,
                1_000_000_000_000L))
        .thenCompose(
            r -> {
              latency.recordValue((System.nanoTime() - started) / 1000);
              return client.settle(id, 5_000);
            })
        .whenComplete(
            (r, e) -> {
              if (e != null) {
                errors.incrementAndGet();
              }
            });
  }

  /**
   * Heap in use right after a full collection, in MB: what the ledger really holds. The forced GC
   * is measured after the interval's latencies were taken, so it lands in the next interval's max.
   */
  private static long oldGenAfterGcMb() {
    System.gc();
    Runtime rt = Runtime.getRuntime();
    return (rt.totalMemory() - rt.freeMemory()) >> 20;
  }

  /** Size, re-serialization time, ids and id memory of the latest snapshot row. */
  private static String latestSnapshot(Path dataDir, Serialization serialization) throws Exception {
    String url =
        "jdbc:h2:file:"
            + dataDir.toAbsolutePath()
            + "/ledger;DATABASE_TO_UPPER=false;AUTO_SERVER=TRUE";
    try (Connection c = DriverManager.getConnection(url, "sa", "");
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT \"snapshot_ser_id\", \"snapshot_ser_manifest\", \"snapshot_payload\""
                    + " FROM \"snapshot\" ORDER BY \"sequence_number\" DESC LIMIT 1")) {
      if (!rs.next()) {
        return "- | - | - | -";
      }
      byte[] bytes = rs.getBytes(3);
      LedgerState state =
          (LedgerState) serialization.deserialize(bytes, rs.getInt(1), rs.getString(2)).get();
      long t0 = System.nanoTime();
      serialization.serialize(state).get();
      double ms = (System.nanoTime() - t0) / 1e6;
      return String.format(
          "%,d | %.1f | %,d | %.1f",
          bytes.length, ms, state.knownReservations(), state.idMemoryBytes() / 1048576.0);
    }
  }
}
