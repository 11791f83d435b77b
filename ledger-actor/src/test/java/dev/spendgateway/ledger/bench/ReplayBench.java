package dev.spendgateway.ledger.bench;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.ledger.audit.AuditConfig;
import dev.spendgateway.ledger.audit.AuditRuns;
import dev.spendgateway.ledger.audit.JournalReader;
import dev.spendgateway.ledger.audit.LedgerAudit;
import dev.spendgateway.ledger.audit.Progress;
import dev.spendgateway.ledger.audit.Violation;
import dev.spendgateway.ledger.journal.JournalSchema;
import dev.spendgateway.policy.access.Lane;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.persistence.typed.javadsl.CommandHandler;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehavior;

/**
 * Replay benchmark (docs/BENCHMARKS.md): generates a journal of N ledger events (default 1,000,000:
 * reserve + settle pairs on the app lane, 100 brands, within every cap) in an H2 FILE database
 * through the real pekko-persistence-jdbc plugin (persistence id {@code global}, 10,000 events per
 * write), then times {@code replay} and {@code verify} exactly as {@code gateway-admin} runs them
 * (read journal {@code currentEventsByPersistenceId}, the ledger's fold, the invariant checks; the
 * CLI's configuration), each in a fresh actor system; and {@code read} alone (the read journal and
 * deserialization, no fold) to show where the time goes.
 *
 * <p>System properties: {@code replay.dir} (default target/replay-bench; kept, so later runs skip
 * generation unless {@code replay.generate=true}), {@code replay.events}, {@code replay.runs}
 * (default 3), {@code replay.factsPerRow} (default 1; N: N facts per row, as the ledger's group
 * commit writes them, in target/replay-bench-rows-of-N); any other config key, e.g. {@code
 * -Djdbc-read-journal.max-buffer-size=10000}.
 */
public final class ReplayBench {
  private static final Instant START = Instant.parse("2026-11-02T00:00:00Z");
  private static final int WRITE_BATCH = 10_000;

  private ReplayBench() {}

  public static void main(String[] args) throws Exception {
    int factsPerRow = Integer.getInteger("replay.factsPerRow", 1);
    Path dir =
        Path.of(
                System.getProperty(
                    "replay.dir",
                    "ledger-actor/target/replay-bench"
                        + (factsPerRow > 1 ? "-rows-of-" + factsPerRow : "")))
            .toAbsolutePath();
    long events = Long.getLong("replay.events", 1_000_000);
    int runs = Integer.getInteger("replay.runs", 3);
    boolean generate =
        Boolean.getBoolean("replay.generate") || !Files.exists(dir.resolve("ledger.mv.db"));
    if (generate) {
      Files.createDirectories(dir);
      Files.deleteIfExists(dir.resolve("ledger.mv.db"));
      generate(dir, events, factsPerRow);
    }
    System.out.printf(
        "journal: %s (%,d bytes)%n%n",
        dir.resolve("ledger.mv.db"), Files.size(dir.resolve("ledger.mv.db")));
    System.out.println(
        "| run | verb | events | wall s | events/s (wall) | CPU s | events per CPU-s |");
    System.out.println("|---:|---|---:|---:|---:|---:|---:|");
    if (Boolean.getBoolean("replay.probe")) {
      probe(dir);
    }
    for (int run = 1; run <= runs; run++) {
      timed(run, "read", dir);
      timed(run, "replay", dir);
      timed(run, "verify", dir);
    }
  }

  static Config config(Path dir) {
    File shipped = new File("conf/ledger.conf");
    return ConfigFactory.systemProperties()
        .withFallback(
            ConfigFactory.parseMap(
                Map.of("gateway.data-dir", dir.toString(), "pekko.loglevel", "WARNING")))
        .withFallback(ConfigFactory.parseFile(shipped))
        .withFallback(ConfigFactory.defaultReference())
        .resolve();
  }

  /**
   * {@code read}: the read journal and deserialization only; {@code replay}: plus the fold; {@code
   * verify}: plus the checks.
   */
  private static void timed(int run, String verb, Path dir) throws Exception {
    // Exactly what bin/gateway-admin runs with (conf/application.conf + the CLI's read settings).
    Config config = AuditConfig.forReading(Path.of("conf/application.conf"), dir);
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "replay-bench", config);
    try {
      JournalReader reader = new JournalReader(system);
      LedgerAudit audit = new LedgerAudit(LedgerSettings.fromConfig(config).caps());
      Progress progress = new Progress(System.err, verb);
      long cpuStart = cpuNanos();
      if (verb.equals("read")) {
        reader
            .current(1)
            .runWith(org.apache.pekko.stream.javadsl.Sink.foreach(j -> progress.tick()), system)
            .toCompletableFuture()
            .get(1, TimeUnit.HOURS);
      } else if (verb.equals("verify")) {
        Optional<Violation> v =
            AuditRuns.verify(
                    system,
                    reader.current(1),
                    reader.latestSnapshot(Duration.ofSeconds(60)),
                    audit,
                    progress)
                .toCompletableFuture()
                .get(1, TimeUnit.HOURS);
        if (v.isPresent()) {
          throw new IllegalStateException("generated journal does not verify: " + v.get());
        }
      } else {
        AuditRuns.replay(system, reader.current(1), Optional.empty(), audit, progress)
            .toCompletableFuture()
            .get(1, TimeUnit.HOURS);
      }
      double seconds = progress.elapsed().toNanos() / 1e9;
      double cpu = (cpuNanos() - cpuStart) / 1e9;
      System.out.printf(
          "| %d | %s | %,d | %.2f | %,d | %.2f | %,.0f |%n",
          run, verb, progress.count(), seconds, progress.rate(), cpu, progress.count() / cpu);
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * Where the time goes, below the plugin: the same rows by plain JDBC (one query, fetch size
   * 10,000), first bytes only, then bytes plus deserialization with the journal's serializer.
   */
  private static void probe(Path dir) throws Exception {
    Config config = config(dir);
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "replay-probe", config);
    try {
      var serialization =
          org.apache.pekko.serialization.SerializationExtension.get(
              org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(system));
      String url = config.getString("pekko-persistence-jdbc.shared-databases.slick.db.url");
      for (boolean deserialize : new boolean[] {false, true}) {
        long started = System.nanoTime();
        long cpuStart = cpuNanos();
        long n = 0;
        try (var c = java.sql.DriverManager.getConnection(url, "sa", "");
            var st =
                c.prepareStatement(
                    "SELECT \"sequence_number\", \"event_ser_id\", \"event_ser_manifest\", "
                        + "\"event_payload\" FROM \"event_journal\" WHERE \"persistence_id\" = 'global' ORDER BY \"sequence_number\"")) {
          st.setFetchSize(10_000);
          try (var rs = st.executeQuery()) {
            while (rs.next()) {
              byte[] payload = rs.getBytes(4);
              if (deserialize) {
                serialization.deserialize(payload, rs.getInt(2), rs.getString(3)).get();
              }
              n++;
            }
          }
        }
        double seconds = (System.nanoTime() - started) / 1e9;
        double cpu = (cpuNanos() - cpuStart) / 1e9;
        System.out.printf(
            "| probe | jdbc%s | %,d | %.2f | %,.0f | %.2f | %,.0f |%n",
            deserialize ? "+deserialize" : "", n, seconds, n / seconds, cpu, n / cpu);
      }
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * CPU time of the whole JVM (all threads, GC included): a figure less skewed by a busy machine
   * than wall time.
   */
  private static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean)
            java.lang.management.ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  // --- generation through the real journal plugin ---------------------------------------------

  private record Write(List<Event> events, ActorRef<Done> replyTo) {}

  /** Writes given ledger events under persistence id {@code global}; nothing else. */
  private static final class JournalWriter extends EventSourcedBehavior<Write, Event, Long> {
    JournalWriter() {
      super(GlobalBudget.PERSISTENCE_ID);
    }

    @Override
    public Long emptyState() {
      return 0L;
    }

    @Override
    public CommandHandler<Write, Event, Long> commandHandler() {
      return newCommandHandlerBuilder()
          .forAnyState()
          .onCommand(
              Write.class,
              (state, w) ->
                  Effect().persist(w.events()).thenRun(s -> w.replyTo().tell(Done.getInstance())))
          .build();
    }

    @Override
    public EventHandler<Long, Event> eventHandler() {
      return newEventHandlerBuilder().forAnyState().onAnyEvent((state, e) -> state + 1);
    }
  }

  /**
   * {@code facts} as journal rows: one per fact, or (as the ledger's group commit writes them) one
   * {@link GlobalBudget.GroupCommit} per {@code factsPerRow} facts.
   */
  private static List<Event> rows(List<Event> facts, int factsPerRow) {
    if (factsPerRow <= 1) {
      return facts;
    }
    List<Event> rows = new ArrayList<>();
    for (int i = 0; i < facts.size(); i += factsPerRow) {
      rows.add(
          dev.spendgateway.ledger.LedgerEvents.GroupCommit.of(
              facts.subList(i, Math.min(facts.size(), i + factsPerRow))));
    }
    return rows;
  }

  private static void generate(Path dir, long events, int factsPerRow) throws Exception {
    Config config = config(dir);
    ActorSystem<Void> system =
        ActorSystem.create(Behaviors.empty(), "replay-bench-generate", config);
    try {
      JournalSchema.createIfNotExists(system).toCompletableFuture().get(60, TimeUnit.SECONDS);
      ActorRef<Write> writer =
          system.systemActorOf(
              Behaviors.setup(ctx -> new JournalWriter()),
              "journal-writer",
              org.apache.pekko.actor.typed.Props.empty());
      long started = System.nanoTime();
      long written = 0;
      long pair = 0;
      while (written < events) {
        List<Event> batch = new ArrayList<>(WRITE_BATCH);
        while (batch.size() < WRITE_BATCH && written + batch.size() < events) {
          String id = "r-" + pair;
          String brand = "b" + (pair % 100);
          Instant at = START.plusMillis(pair * 10);
          if (written + batch.size() + 2 <= events) {
            batch.add(
                new GlobalBudget.ReservationMade(
                    id,
                    Lane.APP,
                    brand,
                    10,
                    5_000_000,
                    50_000_000,
                    at,
                    at.plus(Duration.ofMinutes(15))));
            batch.add(
                new GlobalBudget.ReservationSettled(
                    id, Lane.APP, brand, at, 10, 7, at.plusMillis(5)));
          } else {
            batch.add(
                new GlobalBudget.ReservationMade(
                    id,
                    Lane.APP,
                    brand,
                    10,
                    5_000_000,
                    50_000_000,
                    at,
                    at.plus(Duration.ofMinutes(15))));
          }
          pair++;
        }
        List<Event> rows = rows(batch, factsPerRow);
        AskPattern.<Write, Done>ask(
                writer,
                replyTo -> new Write(rows, replyTo),
                Duration.ofMinutes(5),
                system.scheduler())
            .toCompletableFuture()
            .get(5, TimeUnit.MINUTES);
        written += batch.size();
      }
      double seconds = (System.nanoTime() - started) / 1e9;
      System.out.printf(
          "generated %,d events in %.1f s (%,.0f events/s written)%n",
          written, seconds, written / seconds);
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
