package dev.spendgateway.operator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.ledger.audit.Journaled;
import dev.spendgateway.ledger.audit.JsonlEvents;
import dev.spendgateway.ledger.audit.UsageReport;
import dev.spendgateway.ledger.ops.FileJournalLock;
import dev.spendgateway.ledger.ops.JournalLock;
import dev.spendgateway.policy.access.Lane;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The read verbs of {@code gateway-admin} against the H2 FILE journal of a ledger that keeps
 * running (AUTO_SERVER): replay equals the live {@code /usage}, verify passes on it and fails,
 * naming the first bad event, on corrupted exports; export round-trips; tail follows.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GatewayAdminTest {
  @TempDir static Path dataDir;
  @TempDir static Path work;
  private TestLedger ledger;
  private Path config;

  @BeforeAll
  void runALedger() throws Exception {
    // A group commit is one journal row, so the few rows below need a short snapshot interval for
    // a snapshot to exist (verify compares the books with it).
    ledger = TestLedger.start(dataDir, Map.of("ledger.snapshot-every", 3));
    config = TestLedger.CONFIG;
    LedgerClient client = ledger.client;
    // 150 reservations, settled, voided, refused, an operator adjustment and an operator settle.
    List<CompletionStage<?>> calls = new ArrayList<>();
    for (int i = 0; i < 150; i++) {
      calls.add(
          client.reserve(
              new ReserveRequest(
                  "r-" + i, Lane.APP, "b" + (i % 3), 10_000, 1_000_000, 10_000_000)));
    }
    awaitAll(calls);
    calls.clear();
    for (int i = 0; i < 100; i++) {
      calls.add(i % 4 == 0 ? client.voidReservation("r-" + i) : client.settle("r-" + i, 7_000 + i));
    }
    calls.add(
        client.reserve(
            new ReserveRequest("big", Lane.APP, "b0", 2_000_000, 1_000_000, 10_000_000)));
    calls.add(client.reserve(new ReserveRequest("free-1", Lane.FREE, null, 40_000, 0, 0)));
    calls.add(client.operatorSettle("r-120", 5_000, "bob", "caller lost the answer"));
    awaitAll(calls);
    // After the settles are durable: a credit may not take b1's spend below zero.
    client
        .adjust(
            "adj-1",
            "alice",
            "refund",
            Lane.APP,
            "b1",
            -30_000,
            dev.spendgateway.policy.caps.CapWindows.dayKey(java.time.Instant.now()),
            dev.spendgateway.ledger.AdjustmentScope.REFUND)
        .toCompletableFuture()
        .get(20, TimeUnit.SECONDS);
  }

  @AfterAll
  void stop() throws Exception {
    ledger.close();
  }

  private record Run(int exit, String out, String err) {}

  private Run admin(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    var cli = GatewayAdmin.commandLine();
    cli.setOut(new PrintWriter(out));
    cli.setErr(new PrintWriter(err));
    int exit = cli.execute(args);
    return new Run(exit, out.toString(), err.toString());
  }

  private String[] journalArgs(String verb, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(verb, "--config", config.toString(), "--data-dir", dataDir.toString()));
    args.addAll(List.of(more));
    return args.toArray(String[]::new);
  }

  @Test
  void replayOfTheRunningLedgersJournalEqualsItsUsage() throws Exception {
    GlobalBudget.Usage live =
        ledger.client.usage(Optional.empty()).toCompletableFuture().get(10, TimeUnit.SECONDS);
    Run run = admin(journalArgs("replay", "--json"));
    assertEquals(0, run.exit(), run.err());
    assertEquals(UsageReport.json(live), run.out().trim());
    assertTrue(run.err().contains("replay: "), run.err());

    Run table = admin(journalArgs("replay"));
    assertEquals(0, table.exit(), table.err());
    assertTrue(table.out().contains("brand_daily      b1"), table.out());
  }

  @Test
  void reportTotalsEqualTheLiveBooksToTheMicroDollar() throws Exception {
    GlobalBudget.Usage live =
        ledger.client.usage(Optional.empty()).toCompletableFuture().get(10, TimeUnit.SECONDS);
    long companySpent =
        live.caps().stream()
            .filter(c -> c.cap() == dev.spendgateway.policy.caps.CapName.GLOBAL_MONTHLY)
            .mapToLong(c -> c.spentMicros())
            .sum();
    Run csv = admin(journalArgs("report", "--by", "day,brand,lane", "--format", "csv"));
    assertEquals(0, csv.exit(), csv.err());
    List<String> lines = csv.out().lines().toList();
    assertEquals("day,brand,lane,calls,settled_usd,voided,expired_usd,refused", lines.get(0));
    long settled = 0;
    long calls = 0;
    long refused = 0;
    for (String line : lines.subList(1, lines.size())) {
      String[] f = line.split(",");
      calls += Long.parseLong(f[3]);
      settled += new java.math.BigDecimal(f[4]).movePointRight(6).longValueExact();
      settled += new java.math.BigDecimal(f[6]).movePointRight(6).longValueExact();
      refused += Long.parseLong(f[7]);
    }
    assertEquals(companySpent, settled, csv.out());
    // 150 app reservations and the free one; "big" was refused by b0's daily cap.
    assertEquals(151, calls, csv.out());
    assertEquals(1, refused, csv.out());

    Run table = admin(journalArgs("report", "--by", "brand"));
    assertEquals(0, table.exit(), table.err());
    assertTrue(table.out().contains("total"), table.out());
    Run bad = admin(journalArgs("report", "--by", "colour"));
    assertEquals(2, bad.exit(), bad.err());
    assertTrue(bad.err().contains("--by: unknown key 'colour'"), bad.err());
  }

  @Test
  void verifyPassesOnTheJournalAndChecksTheSnapshot() {
    Run run = admin(journalArgs("verify"));
    assertEquals(0, run.exit(), run.out() + run.err());
    assertTrue(run.out().startsWith("OK: "), run.out());
    assertTrue(run.out().contains("totals equal the snapshot at"), run.out());
  }

  @Test
  void verifyOfAnExportEditedToSettleTwiceFailsAtTheDuplicate() throws Exception {
    List<String> lines = export();
    JsonlEvents jsonl = new JsonlEvents();
    int settleIndex = indexOf(lines, "\"type\":\"ReservationSettled\"");
    Journaled settle = jsonl.parse(lines.get(settleIndex));
    long badSeq = jsonl.parse(lines.get(lines.size() - 1)).sequenceNr() + 1;
    List<String> corrupt = new ArrayList<>(lines);
    corrupt.add(jsonl.line(new Journaled(badSeq, settle.event())));
    Path file = Files.write(work.resolve("double-settle.jsonl"), corrupt);

    // An export is verified on its own: no journal needed in the data dir.
    Path noJournal = Files.createDirectories(work.resolve("no-journal"));
    Run run =
        admin(
            "verify",
            "--config",
            config.toString(),
            "--data-dir",
            noJournal.toString(),
            "--input",
            file.toString());
    assertEquals(1, run.exit(), run.out() + run.err());
    String id = ((GlobalBudget.ReservationSettled) settle.event()).id();
    assertEquals(
        "VIOLATION at journal row "
            + badSeq
            + " (ReservationSettled): reservation "
            + id
            + " closed twice (first closed in journal row "
            + settle.sequenceNr()
            + ")",
        run.out().trim());
  }

  @Test
  void verifyOfAnExportEditedToReserveAClosedIdAgainFailsAtTheSecondReservation() throws Exception {
    List<String> lines = export();
    JsonlEvents jsonl = new JsonlEvents();
    // A reservation that was settled: reserving its id again is what a forgotten id used to allow.
    Journaled settle = jsonl.parse(lines.get(indexOf(lines, "\"type\":\"ReservationSettled\"")));
    String id = ((GlobalBudget.ReservationSettled) settle.event()).id();
    Journaled made =
        lines.stream()
            .map(jsonl::parse)
            .filter(j -> j.event() instanceof GlobalBudget.ReservationMade m && m.id().equals(id))
            .findFirst()
            .orElseThrow();
    long badSeq = jsonl.parse(lines.get(lines.size() - 1)).sequenceNr() + 1;
    List<String> corrupt = new ArrayList<>(lines);
    corrupt.add(jsonl.line(new Journaled(badSeq, made.event())));
    Path file = Files.write(work.resolve("second-reservation.jsonl"), corrupt);

    Run run = admin(journalArgs("verify", "--input", file.toString()));
    assertEquals(1, run.exit(), run.out() + run.err());
    assertEquals(
        "VIOLATION at journal row "
            + badSeq
            + " (ReservationMade): reservation "
            + id
            + " reserved a second time (first reserved in journal row "
            + made.sequenceNr()
            + ")",
        run.out().trim());
  }

  @Test
  void verifyOfAnExportEditedToApplyAnAdjustmentTwiceFailsAtTheRepeat() throws Exception {
    List<String> lines = export();
    JsonlEvents jsonl = new JsonlEvents();
    Journaled adjusted = jsonl.parse(lines.get(indexOf(lines, "\"type\":\"SpendAdjusted\"")));
    long badSeq = jsonl.parse(lines.get(lines.size() - 1)).sequenceNr() + 1;
    List<String> corrupt = new ArrayList<>(lines);
    corrupt.add(jsonl.line(new Journaled(badSeq, adjusted.event())));
    Path file = Files.write(work.resolve("double-adjustment.jsonl"), corrupt);

    Run run = admin(journalArgs("verify", "--input", file.toString()));
    assertEquals(1, run.exit(), run.out() + run.err());
    assertEquals(
        "VIOLATION at journal row "
            + badSeq
            + " (SpendAdjusted): adjustment adj-1 applied twice "
            + "(first applied in journal row "
            + adjusted.sequenceNr()
            + ")",
        run.out().trim());
  }

  @Test
  void verifyOfAnExportWithAnOverCapReservationFailsAtIt() throws Exception {
    List<String> lines = export();
    JsonlEvents jsonl = new JsonlEvents();
    int at = indexOf(lines, "\"type\":\"ReservationMade\"");
    Journaled made = jsonl.parse(lines.get(at));
    GlobalBudget.ReservationMade m = (GlobalBudget.ReservationMade) made.event();
    // Same event, but $50: past the $40 global daily cap.
    var over =
        new GlobalBudget.ReservationMade(
            m.id(),
            m.lane(),
            m.subject(),
            50_000_000,
            100_000_000,
            100_000_000,
            m.at(),
            m.expiresAt());
    List<String> corrupt = new ArrayList<>(lines);
    corrupt.set(at, jsonl.line(new Journaled(made.sequenceNr(), over)));
    Path file = Files.write(work.resolve("over-cap.jsonl"), corrupt);

    Run run = admin(journalArgs("verify", "--input", file.toString()));
    assertEquals(1, run.exit(), run.out() + run.err());
    assertTrue(
        run.out()
            .startsWith(
                "VIOLATION at journal row "
                    + made.sequenceNr()
                    + " (ReservationMade): reservation "
                    + m.id()
                    + " of $50 accepted past cap global_daily"),
        run.out());
  }

  @Test
  void exportRoundTripsAndStartsAtFrom() throws Exception {
    List<String> lines = export();
    JsonlEvents jsonl = new JsonlEvents();
    for (String line : lines) {
      assertEquals(line, jsonl.line(jsonl.parse(line)));
      assertTrue(line.contains("\"v\":1"), line);
    }
    assertTrue(
        lines.stream()
            .anyMatch(
                l -> l.contains("\"operator\":\"bob\"") && l.contains("caller lost the answer")));
    // --from counts journal rows; a group commit's facts share their row's number.
    long fromSeq = jsonl.parse(lines.get(lines.size() / 2)).sequenceNr();
    assertTrue(fromSeq > 1, "the export spans several rows");
    Run from = admin(journalArgs("export", "--format", "jsonl", "--from", Long.toString(fromSeq)));
    assertEquals(0, from.exit(), from.err());
    assertTrue(from.out().startsWith("{\"seq\":" + fromSeq + ","), from.out());
    assertEquals(
        lines.stream().filter(l -> jsonl.parse(l).sequenceNr() >= fromSeq).count(),
        from.out().lines().count());
  }

  @Test
  void tailPrintsEventsWrittenAfterItStarted() throws Exception {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    // Told once tail has chosen where to start: every row written after that is followed.
    CompletableFuture<Long> following = new CompletableFuture<>();
    var cli = tailCommandLine(out, err, following);
    var tail =
        CompletableFuture.supplyAsync(() -> cli.execute(journalArgs("tail", "--limit", "1")));
    tail.whenComplete(
        (exit, e) ->
            following.completeExceptionally(
                new AssertionError("tail ended before following: exit " + exit + ", " + err)));
    long start = following.get(30, TimeUnit.SECONDS);
    assertTrue(start > 1, "tail starts after the journal's last row, not at " + start);
    ledger
        .client
        .reserve(new ReserveRequest("tailed", Lane.FREE, null, 1_000, 0, 0))
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
    Run run = new Run(tail.get(30, TimeUnit.SECONDS), out.toString(), err.toString());
    assertEquals(0, run.exit(), run.err());
    assertTrue(run.out().contains("\"id\":\"tailed\""), run.out());
  }

  /**
   * A journal row that cannot be read (a damaged disk block, a hand edit): export, verify and
   * replay stopped with Jackson's message alone, naming no row; and {@code export -o} had already
   * replaced the file it was told to write (yesterday's export, say) with the rows before it. The
   * error must name where the journal stops being readable, and -o must be written whole or not at
   * all.
   */
  @Test
  void aJournalRowThatCannotBeReadIsNamedAndExportLeavesItsFileAlone() throws Exception {
    Path other = work.resolve("broken-row");
    try (TestLedger l = TestLedger.start(other, Map.of())) {
      for (int i = 0; i < 10; i++) {
        l.client
            .reserve(new ReserveRequest("x-" + i, Lane.FREE, null, 1_000, 0, 0))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
      }
    }
    try (java.sql.Connection c =
            java.sql.DriverManager.getConnection(
                "jdbc:h2:file:" + other + "/ledger;DATABASE_TO_UPPER=false", "sa", "");
        java.sql.Statement s = c.createStatement()) {
      assertEquals(
          1,
          s.executeUpdate(
              "UPDATE \"event_journal\" SET \"event_payload\" = X'00010203'"
                  + " WHERE \"sequence_number\" = 6"));
    }
    Path previous = Files.writeString(work.resolve("yesterday.jsonl"), "yesterday's export\n");
    Run export =
        admin(
            "export",
            "--config",
            config.toString(),
            "--data-dir",
            other.toString(),
            "-o",
            previous.toString());
    assertEquals(GatewayAdmin.FAILED, export.exit(), export.err());
    assertTrue(export.err().contains("after sequence number 5 cannot be read"), export.err());
    assertEquals(
        "yesterday's export\n", Files.readString(previous), "the file -o named is as it was");
    try (var left = Files.list(work)) {
      assertEquals(
          List.of(),
          left.filter(f -> f.toString().endsWith(".partial")).toList(),
          "nothing half-written");
    }
    Run verify = admin("verify", "--config", config.toString(), "--data-dir", other.toString());
    assertEquals(GatewayAdmin.FAILED, verify.exit(), verify.err());
    assertTrue(verify.err().contains("after sequence number 5 cannot be read"), verify.err());
  }

  /**
   * A snapshot that cannot be loaded is optional to the ledger (it replays the whole journal, and
   * the next snapshot replaces it); verify refused to check anything ("cannot load the latest
   * snapshot", exit 2) until that next snapshot, up to 100,000 facts later.
   */
  @Test
  void verifyChecksTheJournalWhenTheSnapshotCannotBeLoaded() throws Exception {
    Path other = work.resolve("broken-snapshot");
    try (TestLedger l = TestLedger.start(other, Map.of("ledger.snapshot-every", 3))) {
      for (int i = 0; i < 10; i++) {
        l.client
            .reserve(new ReserveRequest("s-" + i, Lane.FREE, null, 1_000, 0, 0))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
      }
      TimeUnit.SECONDS.sleep(1); // the snapshot is written beside the ledger
    }
    try (java.sql.Connection c =
            java.sql.DriverManager.getConnection(
                "jdbc:h2:file:" + other + "/ledger;DATABASE_TO_UPPER=false", "sa", "");
        java.sql.Statement s = c.createStatement()) {
      assertTrue(
          s.executeUpdate("UPDATE \"snapshot\" SET \"snapshot_payload\" = X'0001020304'") > 0,
          "a snapshot was written");
    }
    Run run = admin("verify", "--config", config.toString(), "--data-dir", other.toString());
    assertEquals(0, run.exit(), run.out() + run.err());
    assertTrue(run.out().startsWith("OK: 10 events verified"), run.out());
    assertTrue(run.out().contains("the newest snapshot could not be loaded"), run.out());
  }

  /**
   * tail reads a running gateway's journal through that gateway's database server; when the gateway
   * stops, it must say so and end, not wait silently for rows that will never come (a restarted
   * gateway serves the journal elsewhere).
   */
  @Test
  void tailEndsNamingTheGatewayWhenTheGatewayItFollowsStops() throws Exception {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CompletableFuture<Long> following = new CompletableFuture<>();
    var cli = tailCommandLine(out, err, following);
    JournalLock.Lease gateway = new FileJournalLock(dataDir).acquire();
    CompletableFuture<Integer> tail;
    try {
      tail = CompletableFuture.supplyAsync(() -> cli.execute(journalArgs("tail")));
      following.get(30, TimeUnit.SECONDS);
    } finally {
      gateway.close(); // the gateway stops
    }
    int exit = tail.get(30, TimeUnit.SECONDS);
    assertEquals(GatewayAdmin.FAILED, exit, err.toString());
    assertTrue(
        err.toString().startsWith("gateway-admin: the gateway serving the journal in " + dataDir),
        err.toString());
    assertTrue(err.toString().contains("run tail again"), err.toString());
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "replay", "verify", "export", "tail", "report", "credit", "adjust", "settle", "void"
      })
  void everyVerbHasHelp(String verb) {
    Run run = admin(verb, "--help");
    assertEquals(0, run.exit(), run.err());
    assertTrue(run.out().startsWith("Usage: gateway-admin " + verb), run.out());
  }

  @Test
  void aMissingJournalIsReportedNotCreated() throws Exception {
    Path empty = Files.createDirectory(work.resolve("empty"));
    Run run = admin("replay", "--config", config.toString(), "--data-dir", empty.toString());
    assertEquals(2, run.exit());
    assertTrue(run.err().contains("no journal at"), run.err());
    assertTrue(Files.notExists(empty.resolve("ledger.mv.db")));
  }

  private List<String> export() {
    Run run = admin(journalArgs("export", "--format", "jsonl"));
    assertEquals(0, run.exit(), run.err());
    return run.out().lines().toList();
  }

  private static int indexOf(List<String> lines, String needle) {
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).contains(needle)) {
        return i;
      }
    }
    throw new AssertionError("no line with " + needle);
  }

  private static void awaitAll(List<CompletionStage<?>> calls) throws Exception {
    for (CompletionStage<?> c : calls) {
      c.toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  /**
   * gateway-admin's command line writing to {@code out} and {@code err}, its tail telling {@code
   * following} the row it starts after.
   */
  private static picocli.CommandLine tailCommandLine(
      StringWriter out, StringWriter err, CompletableFuture<Long> following) {
    var cli = GatewayAdmin.commandLine();
    cli.setOut(new PrintWriter(out));
    cli.setErr(new PrintWriter(err));
    ((JournalVerbs.Tail) cli.getSubcommands().get("tail").getCommandSpec().userObject()).following =
        following::complete;
    return cli;
  }

  /**
   * bin/gateway --demo keeps its books in demo/ of the data dir: a verb pointed at the data dir
   * itself finds no journal there and says where the demo's is, and the backup hints name the
   * command as it is typed from the repository (bin/gateway-admin).
   */
  @ParameterizedTest(name = "{0} on a demo's data dir names demo/")
  @ValueSource(strings = {"replay", "verify", "backup"})
  void aVerbOnADemosDataDirNamesTheDemoJournal(String verb) throws Exception {
    Path demoHome = Files.createDirectories(work.resolve("demo-home-" + verb));
    Files.createDirectories(demoHome.resolve("demo"));
    Files.writeString(demoHome.resolve("demo/ledger.mv.db"), "");
    String[] more =
        verb.equals("backup")
            ? new String[] {"-o", work.resolve("demo-" + verb + ".zip").toString()}
            : new String[0];

    Cli.Run run = Cli.onJournal(demoHome, verb, more);

    assertTrue(run.exit() != 0, run.out() + run.err());
    assertTrue(run.err().contains("no journal at " + demoHome), run.err());
    assertTrue(run.err().contains("--data-dir " + demoHome.resolve("demo")), run.err());
  }

  @Test
  void theBackupHelpNamesTheCommandAsTyped() {
    Cli.Run help = Cli.run("backup", "--help");
    assertTrue(help.out().contains("bin/gateway-admin restore FILE"), help.out());
    assertTrue(!help.out().matches("(?s).*[^/]gateway-admin (restore|verify).*"), help.out());
  }

  /** gateway-admin --help lists each verb with a whole sentence, never one cut mid-way. */
  @Test
  void theVerbListShowsWholeSentences() {
    String help = Cli.run("--help").out();
    String commands = help.substring(help.indexOf("Commands:") + "Commands:".length());
    List<String> entries = new ArrayList<>();
    for (String line : commands.lines().toList()) {
      if (line.matches("  \\S.*")) {
        entries.add(line.strip());
      } else if (!line.isBlank() && !entries.isEmpty()) {
        int last = entries.size() - 1;
        entries.set(last, entries.get(last) + " " + line.strip());
      }
    }
    assertTrue(entries.size() > 10, help);
    for (String entry : entries) {
      assertTrue(entry.endsWith("."), "a whole sentence: " + entry);
    }
  }
}
