package dev.spendgateway.operator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.audit.JsonlEvents;
import dev.spendgateway.ledger.audit.UsageReport;
import dev.spendgateway.ledger.ops.FileJournalLock;
import dev.spendgateway.ledger.ops.JournalLock;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code import}: an export of an H2 journal written into a fresh journal (another H2 file, a new
 * PostgreSQL database) gives the same books (replay, verify, a ledger recovering on it) and the
 * same export back; a second import into the now non-empty journal is refused and changes nothing.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ImportVerbTest {
  /** The PostgreSQL server the tests use; test databases are created and dropped on it. */
  private static final String PG_SERVER =
      System.getProperty("test.postgres.url", "jdbc:postgresql://127.0.0.1:5432/postgres");

  private static final String PG_USER = System.getProperty("test.postgres.user", "postgres");

  @TempDir static Path work;
  private Path source;
  private Path export;
  private List<String> exported;
  private String liveUsage;

  @BeforeAll
  void exportAStoppedLedgersJournal() throws Exception {
    source = Files.createDirectories(work.resolve("source"));
    try (TestLedger ledger = TestLedger.start(source, Map.of())) {
      GroupCommitExportTest.workload(ledger.client);
      liveUsage = usage(ledger);
    }
    export = work.resolve("export.jsonl");
    Cli.Run run = Cli.onJournal(source, "export", "--format", "jsonl", "-o", export.toString());
    assertEquals(0, run.exit(), run.err());
    exported = Files.readAllLines(export);
    assertTrue(exported.size() > 200, exported.size() + " events exported");
  }

  @Test
  void anExportImportedIntoAFreshH2JournalGivesTheSameBooks() throws Exception {
    Path target = work.resolve("target");
    long rows = rows(exported);
    Cli.Run imported = Cli.onJournal(target, "import", "--input", export.toString());
    assertEquals(0, imported.exit(), imported.out() + imported.err());
    assertEquals(
        "OK: imported " + exported.size() + " events in " + rows + " rows", imported.out().trim());

    Cli.Run replaySource = Cli.onJournal(source, "replay", "--json");
    Cli.Run replayTarget = Cli.onJournal(target, "replay", "--json");
    assertEquals(0, replayTarget.exit(), replayTarget.err());
    assertEquals(replaySource.out(), replayTarget.out());

    Cli.Run verify = Cli.onJournal(target, "verify");
    assertEquals(0, verify.exit(), verify.out() + verify.err());
    assertEquals(
        "OK: "
            + exported.size()
            + " events verified (journal rows up to sequence number "
            + rows
            + "); no snapshot",
        verify.out().trim());

    Cli.Run again = Cli.onJournal(target, "export", "--format", "jsonl");
    assertEquals(0, again.exit(), again.err());
    assertEquals(exported, again.out().lines().toList(), "the same events, rows and numbers");

    // The ledger itself recovers the imported journal to the books it had.
    try (TestLedger recovered = TestLedger.start(target, Map.of())) {
      assertEquals(liveUsage, usage(recovered));
    }

    // A second import into the journal, now holding rows, is refused and writes nothing.
    Cli.Run twice = Cli.onJournal(target, "import", "--input", export.toString());
    assertEquals(GatewayAdmin.FAILED, twice.exit(), twice.out() + twice.err());
    assertEquals(
        "gateway-admin: the target journal already holds "
            + rows
            + " rows; import writes only into an empty journal",
        twice.err().trim());
    assertEquals(
        exported, Cli.onJournal(target, "export", "--format", "jsonl").out().lines().toList());
  }

  /**
   * An export cut short (the export killed mid-write: its last line half written) or with a gap
   * must be refused before anything is written. The import wrote every row before the bad line,
   * then stopped: the target journal held a partial history, and running the import again (with a
   * good export) was refused because the journal was no longer empty.
   */
  @Test
  void anExportCutShortIsRefusedBeforeAnythingIsWritten() throws Exception {
    String last = exported.get(exported.size() - 1);
    List<String> cut = new java.util.ArrayList<>(exported.subList(0, exported.size() - 1));
    cut.add(last.substring(0, last.length() / 2));
    Path cutFile = Files.write(work.resolve("cut.jsonl"), cut);
    Path target = work.resolve("cut-target");
    Cli.Run imported = Cli.onJournal(target, "import", "--input", cutFile.toString());
    assertEquals(GatewayAdmin.FAILED, imported.exit(), imported.out() + imported.err());
    assertTrue(
        imported.err().contains("line " + exported.size()) && imported.err().contains("nothing"),
        imported.err());
    assertEquals(1, imported.err().lines().count(), imported.err());

    // A gap (the row after the first left out) is refused the same way.
    long firstRow = new JsonlEvents().parse(exported.get(0)).sequenceNr();
    List<String> gap =
        exported.stream()
            .filter(l -> new JsonlEvents().parse(l).sequenceNr() != firstRow + 1)
            .toList();
    Path gapFile = Files.write(work.resolve("gap.jsonl"), gap);
    Cli.Run gapped = Cli.onJournal(target, "import", "--input", gapFile.toString());
    assertEquals(GatewayAdmin.FAILED, gapped.exit(), gapped.out() + gapped.err());
    assertTrue(gapped.err().contains("nothing"), gapped.err());

    // Nothing was written: the good export now imports.
    Cli.Run good = Cli.onJournal(target, "import", "--input", export.toString());
    assertEquals(0, good.exit(), good.out() + good.err());
  }

  /**
   * A gateway running on the target data dir (it holds gateway.lock; its ledger has recovered an
   * empty journal) must not get rows written behind its back: the import reached its database
   * through H2's AUTO_SERVER, said OK, and the running ledger's next write was fenced.
   */
  @Test
  void anImportIntoTheDataDirOfARunningGatewayIsRefusedAndWritesNothing() throws Exception {
    Path target = Files.createDirectories(work.resolve("running"));
    try (JournalLock.Lease gateway = new FileJournalLock(target).acquire();
        TestLedger ledger = TestLedger.start(target, Map.of())) {
      Cli.Run imported = Cli.onJournal(target, "import", "--input", export.toString());
      assertEquals(GatewayAdmin.FAILED, imported.exit(), imported.out() + imported.err());
      assertTrue(
          imported.err().startsWith("gateway-admin: the journal in " + target.toAbsolutePath()),
          imported.err());
      assertTrue(imported.err().contains("stop it before importing"), imported.err());
      assertEquals(1, imported.err().lines().count(), imported.err());
      assertEquals(
          List.of(), Cli.onJournal(target, "export", "--format", "jsonl").out().lines().toList());
    }
  }

  @Test
  void anExportImportedIntoANewPostgresJournalGivesTheSameBooks() throws Exception {
    String name = "import_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    String url = PG_SERVER.substring(0, PG_SERVER.lastIndexOf('/') + 1) + name;
    sql("CREATE DATABASE " + name);
    try {
      long rows = rows(exported);
      Cli.Run imported = onPostgres(url, "import", "--input", export.toString());
      assertEquals(0, imported.exit(), imported.out() + imported.err());
      assertEquals(
          "OK: imported " + exported.size() + " events in " + rows + " rows",
          imported.out().trim());

      Cli.Run replay = onPostgres(url, "replay", "--json");
      assertEquals(0, replay.exit(), replay.err());
      assertEquals(Cli.onJournal(source, "replay", "--json").out(), replay.out());
      Cli.Run verify = onPostgres(url, "verify");
      assertEquals(0, verify.exit(), verify.out() + verify.err());
      assertTrue(
          verify.out().startsWith("OK: " + exported.size() + " events verified"), verify.out());
      assertEquals(exported, onPostgres(url, "export", "--format", "jsonl").out().lines().toList());

      Cli.Run twice = onPostgres(url, "import", "--input", export.toString());
      assertEquals(GatewayAdmin.FAILED, twice.exit(), twice.out() + twice.err());
      assertTrue(twice.err().contains("already holds " + rows + " rows"), twice.err());
    } finally {
      sql("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }
  }

  /** {@code verb} on the PostgreSQL journal at {@code url} (an empty data dir: no H2 involved). */
  private Cli.Run onPostgres(String url, String verb, String... more) throws Exception {
    Path noH2 = Files.createDirectories(work.resolve("no-h2"));
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                verb,
                "--config",
                postgresConfig(),
                "--data-dir",
                noH2.toString(),
                "--journal-url",
                url));
    args.addAll(List.of(more));
    return Cli.run(args.toArray(String[]::new));
  }

  private static String postgresConfig() throws URISyntaxException {
    return Path.of(ImportVerbTest.class.getResource("/operator-postgres-test.conf").toURI())
        .toString();
  }

  private static void sql(String statement) throws Exception {
    try (Connection c = DriverManager.getConnection(PG_SERVER, PG_USER, "");
        Statement s = c.createStatement()) {
      s.execute(statement);
    }
  }

  /** Journal rows in an export: the facts of one row share its sequence number. */
  private static long rows(List<String> lines) {
    JsonlEvents jsonl = new JsonlEvents();
    return lines.stream().map(l -> jsonl.parse(l).sequenceNr()).distinct().count();
  }

  private static String usage(TestLedger ledger) throws Exception {
    return UsageReport.json(
        ledger.client.usage(Optional.empty()).toCompletableFuture().get(30, TimeUnit.SECONDS));
  }
}
