package dev.spendgateway.ledger.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import dev.spendgateway.ledger.Eventually;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.H2Ledger;
import dev.spendgateway.ledger.Ledger;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.GroupCommit;
import dev.spendgateway.ledger.LedgerObserver;
import dev.spendgateway.ledger.LedgerProtocol.Closed;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.ledger.LedgerSnapshot;
import dev.spendgateway.ledger.LedgerState;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.ledger.SnapshotCodec;
import dev.spendgateway.policy.access.Lane;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.jackson.JacksonObjectMapperProvider;

/**
 * Recovery benchmark: how long a ledger holding a large idempotency window takes to recover, and
 * where that time goes.
 *
 * <p>Two journals of the same books are built once, through the ledger itself, on H2 FILE journals
 * under {@code recovery.dir} (default {@code ledger-actor/target/recovery-bench}; kept, so later
 * runs skip building them unless {@code recovery.generate=true}): {@code recovery.reserves} gateway
 * reservations (default 350,000, by {@code recovery.callers} = 256 callers) of which all but {@code
 * recovery.open} (default 250,000) are settled, one more reservation, then {@code recovery.after}
 * reserve+settle pairs (default 50,000, by {@code recovery.after-callers} = 32 callers: a few dozen
 * facts per row), so ~400k ids known and 250k open. In the {@code snapshot} variant the ledger
 * takes a snapshot at that one more reservation (it is restarted with {@code ledger.snapshot-every}
 * = 1, and the facts it replayed make a snapshot due at its first row), so recovery reads the
 * snapshot and 100k facts after it; in the {@code journal} variant there is no snapshot (the
 * interval is out of reach throughout, as after a snapshot that could not be loaded), so recovery
 * replays every row. {@code recovery.variants} picks them (default both).
 *
 * <p>Then, {@code recovery.runs} times per variant (default 3), each in a fresh actor system in
 * this JVM:
 *
 * <ul>
 *   <li>a ledger started on that journal with the shipped snapshot interval, timed as it logs it
 *       ("ledger recovered in N ms": from the actor's start to {@code RecoveryCompleted}, the
 *       journal plugin's start included) and until {@code awaitReady} answers;
 *   <li>the same work split into phases, by plain JDBC and the ledger's own codec: {@code read} the
 *       snapshot row, {@code parse} its CBOR into a {@link LedgerSnapshot} (a snapshot of an older
 *       version is parsed directly here, while recovery first reads it as a JSON tree for its
 *       migration), {@code build} the {@link LedgerState} from it, read the rows after it ({@code
 *       rows}), {@code decode} them, {@code fold} them into the state; the GC time of each phase
 *       (all collectors) is in brackets.
 * </ul>
 *
 * <p>Run: {@code mvn -B -o -q -pl ledger-actor -am -Precovery-bench -DskipTests verify} (about 90 s
 * to build the journals the first time, then 10-30 s); flags via {@code -Drecovery.jvmArgs=...},
 * e.g. a JFR recording: {@code
 * -Drecovery.jvmArgs=-XX:StartFlightRecording=filename=/tmp/recovery.jfr,settings=profile}. The
 * first run of each JVM is cold (classes loaded, code interpreted); a node taking the ledger over
 * has rehearsed one read of the snapshot and events ({@code RecoveryRehearsal}) but never folded
 * them, so a hand-over lies between the first run and the later ones.
 */
public final class RecoveryBench {
  private static final Instant START = Instant.parse("2026-12-01T00:00:00Z");

  /** The recovering ledger's clock: nothing has expired yet, no window has ended. */
  private static final Clock RECOVERY_CLOCK =
      Clock.fixed(START.plus(Duration.ofHours(6)), ZoneOffset.UTC);

  private RecoveryBench() {}

  public static void main(String[] args) throws Exception {
    Path base =
        Path.of(System.getProperty("recovery.dir", "ledger-actor/target/recovery-bench"))
            .toAbsolutePath();
    int reserves = Integer.getInteger("recovery.reserves", 350_000);
    int open = Integer.getInteger("recovery.open", 250_000);
    int after = Integer.getInteger("recovery.after", 50_000);
    int callers = Integer.getInteger("recovery.callers", 256);
    int afterCallers = Integer.getInteger("recovery.after-callers", 32);
    int runs = Integer.getInteger("recovery.runs", 3);
    List<String> variants =
        List.of(System.getProperty("recovery.variants", "snapshot,journal").split(","));
    System.out.printf(
        "# %d cores, %s, max heap %,d MB, GC %s%n",
        Runtime.getRuntime().availableProcessors(),
        System.getProperty("java.vm.name") + " " + Runtime.version(),
        Runtime.getRuntime().maxMemory() >> 20,
        ManagementFactory.getGarbageCollectorMXBeans().stream()
            .map(GarbageCollectorMXBean::getName)
            .toList());
    for (String variant : variants) {
      boolean snapshot = variant.equals("snapshot");
      Path dir = base.resolve(variant);
      if (Boolean.getBoolean("recovery.generate") || !Files.exists(dir.resolve("ledger.mv.db"))) {
        LedgerBench.deleteTree(dir);
        Files.createDirectories(dir);
        generate(dir, reserves, open, after, callers, afterCallers, snapshot);
      }
      Config config = config(dir, 100_000, true);
      String url = config.getString("pekko-persistence-jdbc.shared-databases.slick.db.url");
      try (Connection c = DriverManager.getConnection(url, "sa", "")) {
        long snapshotSeq = latestSnapshotSeq(c);
        System.out.printf(
            "%n## %s: journal %s (%,d bytes), %,d rows; %s%n%n",
            variant,
            dir.resolve("ledger.mv.db"),
            Files.size(dir.resolve("ledger.mv.db")),
            maxSeq(c),
            snapshotSeq == 0
                ? "no snapshot: recovery replays every row"
                : String.format(
                    "snapshot at row %,d (%,d bytes), %,d rows after it",
                    snapshotSeq, snapshotBytes(c, snapshotSeq), maxSeq(c) - snapshotSeq));
      }
      System.out.println(
          "| run | ledger recovered (log) ms | until ready ms | known | open | read ms | parse ms |"
              + " build ms | rows ms | decode ms | fold ms | phases total ms | facts replayed |");
      System.out.println("|---:|---:|---:|---:|---:|---|---|---|---|---|---|---:|---:|");
      for (int run = 1; run <= runs; run++) {
        String ledger = recoverLedger(dir);
        String phases = phases(dir);
        System.out.printf("| %d | %s | %s |%n", run, ledger, phases);
      }
    }
    System.exit(0);
  }

  static Config config(Path dir, int snapshotEvery, boolean sync) {
    Map<String, Object> overrides = new HashMap<>();
    overrides.put("ledger.caps.global-daily-usd", "1000000000");
    overrides.put("ledger.caps.global-monthly-usd", "1000000000");
    overrides.put("ledger.reservation-timeout", "12h");
    overrides.put("ledger.snapshot-every", String.valueOf(snapshotEvery));
    overrides.put("ledger.journal.sync", sync ? "on" : "off");
    overrides.put("pekko.loglevel", "WARNING");
    return H2Ledger.config(dir, overrides);
  }

  // --- the recovery, whole and in phases ---------------------------------------------------------

  /** A ledger recovering in a fresh actor system: its own figure, then until it answers. */
  private static String recoverLedger(Path dir) throws Exception {
    Config config = config(dir, 100_000, true);
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "recovery-bench", config);
    try {
      LedgerSettings settings = LedgerSettings.fromConfig(config);
      AtomicReference<String> recovered = new AtomicReference<>();
      LedgerObserver observer =
          new LedgerObserver() {
            @Override
            public void recovered(Duration took, int known, int open) {
              recovered.set(String.format("%,d | ? | %,d | %,d", took.toMillis(), known, open));
            }
          };
      long started = System.nanoTime();
      ActorRef<GlobalBudget.Command> ledger =
          Ledger.spawn(system, settings, RECOVERY_CLOCK, observer);
      LedgerClient.of(system, ledger, settings, RECOVERY_CLOCK)
          .awaitReady()
          .toCompletableFuture()
          .get(10, TimeUnit.MINUTES);
      long ready = (System.nanoTime() - started) / 1_000_000;
      return recovered.get().replace("?", String.format("%,d", ready));
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
  }

  /** The same work by plain JDBC and the ledger's codec, one phase at a time. */
  private static String phases(Path dir) throws Exception {
    Config config = config(dir, 100_000, true);
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "recovery-phases", config);
    String url = config.getString("pekko-persistence-jdbc.shared-databases.slick.db.url");
    try (Connection c = DriverManager.getConnection(url, "sa", "")) {
      Serialization serialization = SerializationExtension.get(system.classicSystem());
      ObjectMapper cbor =
          JacksonObjectMapperProvider.get(system.classicSystem())
              .getOrCreate("jackson-cbor", Optional.empty());
      List<String> cells = new ArrayList<>();
      Phase phase = new Phase();

      long snapshotSeq = latestSnapshotSeq(c);
      LedgerState state = LedgerState.empty();
      if (snapshotSeq == 0) {
        cells.addAll(List.of("-", "-", "-"));
      } else {
        byte[] snapshot;
        try (PreparedStatement st =
            c.prepareStatement(
                "SELECT \"snapshot_payload\" FROM \"snapshot\" WHERE \"persistence_id\" ="
                    + " 'global' AND \"sequence_number\" = ?")) {
          st.setLong(1, snapshotSeq);
          try (ResultSet rs = st.executeQuery()) {
            rs.next();
            snapshot = rs.getBytes(1);
          }
        }
        cells.add(phase.lap());
        LedgerSnapshot form = cbor.readValue(snapshot, LedgerSnapshot.class);
        snapshot = null;
        cells.add(phase.lap());
        state = SnapshotCodec.stateOf(form);
        form = null;
        cells.add(phase.lap());
      }

      List<Object[]> rows = new ArrayList<>();
      try (PreparedStatement st =
          c.prepareStatement(
              "SELECT \"event_ser_id\", \"event_ser_manifest\", \"event_payload\" FROM"
                  + " \"event_journal\" WHERE \"persistence_id\" = 'global' AND"
                  + " \"sequence_number\" > ? ORDER BY \"sequence_number\"")) {
        st.setFetchSize(10_000);
        st.setLong(1, snapshotSeq);
        try (ResultSet rs = st.executeQuery()) {
          while (rs.next()) {
            rows.add(new Object[] {rs.getInt(1), rs.getString(2), rs.getBytes(3)});
          }
        }
      }
      cells.add(phase.lap());
      List<Event> events = new ArrayList<>(rows.size());
      for (Object[] row : rows) {
        events.add(
            (Event)
                serialization
                    .deserialize((byte[]) row[2], (Integer) row[0], (String) row[1])
                    .get());
      }
      rows = null;
      cells.add(phase.lap());
      long facts = 0;
      for (Event e : events) {
        state = state.applied(e);
        facts += GroupCommit.factsOf(e).size();
      }
      cells.add(phase.lap());
      cells.add(String.format("%,d", phase.total()));
      cells.add(String.format("%,d in %,d rows", facts, events.size()));
      if (state.knownReservations() == 0) {
        throw new IllegalStateException("nothing recovered");
      }
      return String.join(" | ", cells);
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
  }

  /** Wall time and GC time of consecutive phases. */
  private static final class Phase {
    private final long started = System.nanoTime();
    private long lapNanos = started;
    private long lapGc = gcMillis();

    String lap() {
      long now = System.nanoTime();
      long gc = gcMillis();
      String cell = String.format("%,d (GC %,d)", (now - lapNanos) / 1_000_000, gc - lapGc);
      lapNanos = now;
      lapGc = gc;
      return cell;
    }

    long total() {
      return (System.nanoTime() - started) / 1_000_000;
    }

    private static long gcMillis() {
      return ManagementFactory.getGarbageCollectorMXBeans().stream()
          .mapToLong(GarbageCollectorMXBean::getCollectionTime)
          .sum();
    }
  }

  private static long latestSnapshotSeq(Connection c) throws Exception {
    try (ResultSet rs =
        c.createStatement()
            .executeQuery(
                "SELECT MAX(\"sequence_number\") FROM \"snapshot\" WHERE \"persistence_id\" ="
                    + " 'global'")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static long snapshotBytes(Connection c, long seq) throws Exception {
    try (PreparedStatement st =
        c.prepareStatement(
            "SELECT OCTET_LENGTH(\"snapshot_payload\") FROM \"snapshot\" WHERE"
                + " \"persistence_id\" = 'global' AND \"sequence_number\" = ?")) {
      st.setLong(1, seq);
      try (ResultSet rs = st.executeQuery()) {
        return rs.next() ? rs.getLong(1) : 0;
      }
    }
  }

  private static long maxSeq(Connection c) throws Exception {
    try (ResultSet rs =
        c.createStatement()
            .executeQuery(
                "SELECT MAX(\"sequence_number\") FROM \"event_journal\" WHERE \"persistence_id\" ="
                    + " 'global'")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  // --- building the state through the ledger -----------------------------------------------------

  /**
   * The gateway's ids: its namespace and a random-looking UUID, fixed per index so every build
   * writes the same ids.
   */
  private static String id(long i) {
    return "gw-" + new UUID(mix(i), mix(~i));
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
    z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
    return z ^ (z >>> 31);
  }

  private static void generate(
      Path dir, int reserves, int open, int after, int callers, int afterCallers, boolean snapshot)
      throws Exception {
    long started = System.nanoTime();
    // 1. The state to snapshot; no snapshot yet (the interval is out of reach), no flush.
    try (Writer w = new Writer(dir, Integer.MAX_VALUE)) {
      w.drive(0, reserves, reserves - open, callers);
    }
    // 2. One more reservation, with a snapshot due at once (the facts replayed count): it is at
    // that row.
    String url =
        config(dir, 1, false).getString("pekko-persistence-jdbc.shared-databases.slick.db.url");
    long snapshotAt;
    try (Connection c = DriverManager.getConnection(url, "sa", "")) {
      snapshotAt = maxSeq(c) + 1;
    }
    try (Writer w = new Writer(dir, snapshot ? 1 : Integer.MAX_VALUE)) {
      w.drive(reserves, reserves + 1, reserves, 1);
      try (Connection c = DriverManager.getConnection(url, "sa", "")) {
        if (snapshot) {
          Eventually.until(
              "a snapshot at row " + snapshotAt,
              Duration.ofMinutes(5),
              () -> latestSnapshotSeq(c) == snapshotAt);
        }
      }
    }
    // 3. Traffic after the snapshot: what a recovery replays.
    try (Writer w = new Writer(dir, Integer.MAX_VALUE)) {
      w.drive(reserves + 1, reserves + 1 + after, reserves + 1 + after, afterCallers);
    }
    System.out.printf(
        "# built in %.1f s: %,d reserves, %,d left open, %s at row %,d, %,d pairs after%n",
        (System.nanoTime() - started) / 1e9,
        reserves + 1,
        open + 1,
        snapshot ? "snapshot" : "no snapshot",
        snapshotAt,
        after);
  }

  /** A ledger writing the benchmark's reservations (no flush: only the build is faster). */
  private static final class Writer implements AutoCloseable {
    private final ActorSystem<Void> system;
    private final LedgerClient client;

    Writer(Path dir, int snapshotEvery) throws Exception {
      Config config = config(dir, snapshotEvery, false);
      system = ActorSystem.create(Behaviors.empty(), "recovery-bench-build", config);
      LedgerSettings settings = LedgerSettings.fromConfig(config);
      // Reservations start at START and follow the real clock: all in one day, none expiring.
      Clock clock = Clock.offset(Clock.systemUTC(), Duration.between(Instant.now(), START));
      client = LedgerClient.of(system, Ledger.spawn(system, settings, clock), settings, clock);
      client.awaitReady().toCompletableFuture().get(10, TimeUnit.MINUTES);
    }

    /** Reserves ids {@code [from, to)}; those below {@code settleBelow} are settled after. */
    void drive(long from, long to, long settleBelow, int callers) throws Exception {
      AtomicLong next = new AtomicLong(from);
      CompletableFuture<?>[] loops = new CompletableFuture<?>[callers];
      for (int c = 0; c < callers; c++) {
        loops[c] = new CompletableFuture<>();
        loop(next, to, settleBelow, loops[c]);
      }
      CompletableFuture.allOf(loops).get(1, TimeUnit.HOURS);
    }

    private void loop(AtomicLong next, long to, long settleBelow, CompletableFuture<?> done) {
      long i = next.getAndIncrement();
      if (i >= to) {
        done.complete(null);
        return;
      }
      if (i % 50_000 == 0) {
        System.err.printf("building: reservation %,d%n", i);
      }
      String id = id(i);
      client
          .reserve(
              new ReserveRequest(
                  id,
                  Lane.APP,
                  "brand-" + (i % 100),
                  10_000,
                  1_000_000_000_000L,
                  1_000_000_000_000L))
          .thenCompose(
              reply -> {
                if (!(reply instanceof Reserved)) {
                  throw new IllegalStateException("not reserved: " + reply);
                }
                return i < settleBelow
                    ? client.settle(id, 5_000).thenApply(r -> (Object) r)
                    : CompletableFuture.completedFuture((Object) new Closed(id, null, 0));
              })
          .whenComplete(
              (reply, failure) -> {
                if (failure != null || !(reply instanceof Closed)) {
                  done.completeExceptionally(
                      failure != null
                          ? failure
                          : new IllegalStateException("not closed: " + reply));
                } else {
                  loop(next, to, settleBelow, done);
                }
              });
    }

    @Override
    public void close() throws Exception {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
  }
}
