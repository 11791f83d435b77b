package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.testkit.GatewayProcess;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The shell examples of docs/OPERATIONS.md and docs/ROUTER.md that run against a gateway, pasted as
 * an operator pastes them, like {@link ReadmeExamplesIT} for the README: against a demo gateway
 * started in the same working directory (only the port differs), in order, by bash. The operator's
 * examples need the demo's admin token ({@code export GATEWAY_ADMIN_TOKEN=...} becomes the demo's)
 * and spend to give back (brand b1 spends $8 today first); their dates are computed from today by
 * the examples themselves, so they work on any day. Every command must succeed.
 */
class DocsExamplesIT {
  @TempDir Path workDir;

  @Test
  void theOperationsAndRouterExamplesRunAgainstADemoGateway() throws Exception {
    Path root = GatewayProcess.root();
    String operations = Files.readString(root.resolve("docs/OPERATIONS.md"));
    String router = Files.readString(root.resolve("docs/ROUTER.md"));
    List<String> blocks = new ArrayList<>();
    blocks.addAll(shBlocks(ReadmeExamplesIT.section(operations, "## Status and circuits")));
    blocks.addAll(shBlocks(ReadmeExamplesIT.section(operations, "## Verify: did every cap hold?")));
    // The first block of the section: the credit and adjust examples.
    blocks.add(
        shBlocks(ReadmeExamplesIT.section(operations, "## Credit a brand, adjust spend")).get(0));
    // Settle and void on a caller's behalf, on the reservation r-8a3f the prelude holds open.
    blocks.addAll(
        shBlocks(
            ReadmeExamplesIT.section(
                operations, "## Settle or void a reservation on a caller's behalf")));
    blocks.addAll(ReadmeExamplesIT.bashBlocks(router));
    assertTrue(blocks.size() >= 4, "the docs have their examples: " + blocks.size());

    String tokens = "data/demo/demo-tokens.properties";
    String printed =
        ReadmeExamplesIT.onDemo(
            workDir,
            port ->
                "export GATEWAY_PORT="
                    + port
                    + " GATEWAY_DATA_DIR=\"$PWD/data/demo\"\n"
                    + "export GATEWAY_TOKEN=$(sed -n 's/^caller=//p' "
                    + tokens
                    + ")\n"
                    // The status section's verbs take the admin token the credit section exports.
                    + "export GATEWAY_ADMIN_TOKEN=$(sed -n 's/^admin=//p' "
                    + tokens
                    + ")\n"
                    // Spend for the credits to give back: $8 for brand b1 today.
                    + "curl -s localhost:"
                    + port
                    + "/ledger/reservations -H \"x-api-key: $GATEWAY_TOKEN\""
                    + " -H 'content-type: application/json' -d '{\"id\":\"docs-1\",\"lane\":\"app\","
                    + "\"brand\":\"b1\",\"amountUsd\":8,\"brandDailyUsd\":20,\"brandMonthlyUsd\":100}'\n"
                    + "curl -s localhost:"
                    + port
                    + "/ledger/reservations/docs-1/settle -H \"x-api-key: $GATEWAY_TOKEN\""
                    + " -H 'content-type: application/json' -d '{\"actualUsd\":8}'\n"
                    // The reservation the operator settles on a caller's behalf.
                    + "curl -s localhost:"
                    + port
                    + "/ledger/reservations -H \"x-api-key: $GATEWAY_TOKEN\""
                    + " -H 'content-type: application/json' -d '{\"id\":\"r-8a3f\",\"lane\":\"app\","
                    + "\"brand\":\"b1\",\"amountUsd\":1,\"brandDailyUsd\":20,\"brandMonthlyUsd\":100}'\n"
                    + String.join("\n", blocks)
                        .replace(
                            "export GATEWAY_ADMIN_TOKEN=...",
                            "export GATEWAY_ADMIN_TOKEN=$(sed -n 's/^admin=//p' " + tokens + ")")
                        .replace("bin/gateway-admin ", root.resolve("bin/gateway-admin") + " ")
                        .replace("127.0.0.1:8787", "127.0.0.1:" + port)
                        .replace("localhost:8787", "localhost:" + port));
    assertTrue(printed.contains("\"wasOpen\":false"), "reset-circuit answered: " + printed);
    assertTrue(printed.contains("events verified"), "verify passed: " + printed);
    assertTrue(printed.contains("\"scope\":\"grant\""), "the grant was applied: " + printed);
    assertTrue(printed.contains("chat.completion"), "the router answered: " + printed);
    assertTrue(printed.contains("settled"), "the operator's settle answered: " + printed);
    assertFalse(printed.contains("HTTP 4"), printed);
  }

  /**
   * The journal's life as OPERATIONS tells it: a backup of the live demo gateway, the backup
   * checked in a fresh directory, then (gateway stopped) the restore over the moved-aside journal,
   * the move to PostgreSQL (a database of the test's own, dropped after), and a gateway started on
   * the restored journal. The docs' paths become the test's directory, {@code db.internal} the
   * local server; everything else runs as written.
   */
  @Test
  void theBackupRestoreAndPostgresImportExamplesRunAsWritten() throws Exception {
    Path root = GatewayProcess.root();
    String operations = Files.readString(root.resolve("docs/OPERATIONS.md"));
    List<String> backup =
        shBlocks(ReadmeExamplesIT.section(operations, "## Back up and restore the H2 journal"));
    assertEquals(3, backup.size(), "backup, check, restore: " + backup);
    String importBlock =
        shBlocks(
                ReadmeExamplesIT.section(
                    operations, "### Move an existing H2 journal to PostgreSQL"))
            .get(0);
    String replay =
        shBlocks(ReadmeExamplesIT.section(operations, "## Replay: what did we spend?")).get(0);
    // Export's first two lines; the rest follow the journal until Ctrl-C.
    String export =
        shBlocks(ReadmeExamplesIT.section(operations, "## Export and tail"))
            .get(0)
            .lines()
            .filter(l -> l.contains(" export "))
            .reduce("", (a, l) -> a + l + "\n");
    assertEquals(2, export.lines().count(), export);
    String admin = root.resolve("bin/gateway-admin") + " ";
    String tokens = "data/demo/demo-tokens.properties";

    // The gateway running: spend something, back it up, check the backup.
    String live =
        ReadmeExamplesIT.onDemo(
            workDir,
            port ->
                "export GATEWAY_DATA_DIR=\"$PWD/data/demo\" GATEWAY_TOKEN=$(sed -n 's/^caller=//p' "
                    + tokens
                    + ")\nmkdir -p backups\n"
                    + "curl -s localhost:"
                    + port
                    + "/ledger/reservations -H \"x-api-key: $GATEWAY_TOKEN\""
                    + " -H 'content-type: application/json' -d '{\"id\":\"docs-b\",\"lane\":\"app\","
                    + "\"brand\":\"b7\",\"amountUsd\":3,\"brandDailyUsd\":20,\"brandMonthlyUsd\":100}'\n"
                    + "curl -s localhost:"
                    + port
                    + "/ledger/reservations/docs-b/settle -H \"x-api-key: $GATEWAY_TOKEN\""
                    + " -H 'content-type: application/json' -d '{\"actualUsd\":3}'\n"
                    + ops(backup.get(0) + backup.get(1), admin)
                    // Replay's last example reads a restored backup: the one just checked.
                    + ops(replay.replace("/backups/2026-11-29", "$PWD/check"), admin)
                    + ops(export, admin));
    assertTrue(live.contains("written to"), "the backup was made: " + live);
    assertTrue(live.contains("events verified"), "the backup verified: " + live);
    assertTrue(
        Files.readString(workDir.resolve("journal.jsonl")).contains("ReservationSettled"),
        "the export holds the settle");
    assertTrue(
        Files.exists(workDir.resolve("tail.jsonl")), "the export from row 900001 was written");
    assertTrue(
        Files.readString(workDir.resolve("usage-backup.json")).contains("\"b7\""),
        "the checked backup holds brand b7's spend");

    // The gateway stopped: restore, then move the journal to PostgreSQL.
    String db = "docs_import_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    try {
      String stopped =
          bash(
              "export GATEWAY_DATA_DIR=\"$PWD/data/demo\" GATEWAY_JOURNAL_USER=postgres\n"
                  // The operator names the backup to restore, as the first block's comment says.
                  + "backup=$(ls \"$PWD\"/backups/ledger-*.zip)\n"
                  + ops(backup.get(2), admin)
                      .replace(
                          "mv data/ledger.mv.db data/",
                          "mv \"$GATEWAY_DATA_DIR\"/ledger.mv.db \"$GATEWAY_DATA_DIR\"/")
                      // The start is the test's own, below: a script cannot wait on a server.
                      .replaceAll("(?m)^bin/gateway$", "")
                  + ops(importBlock, admin)
                      .replace(
                          "createdb -h db.internal -U postgres gateway",
                          "createdb -h 127.0.0.1 -U postgres " + db)
                      .replace("db.internal:5432/gateway", "127.0.0.1:5432/" + db));
      assertTrue(stopped.contains("restored"), "the backup was restored: " + stopped);
      assertTrue(
          Files.exists(workDir.resolve("data/demo/ledger.mv.db.before-restore")),
          "the journal before the restore was kept");
      String before = Files.readString(workDir.resolve("before.json"));
      assertTrue(before.contains("\"b7\""), "the restored books hold brand b7: " + before);
      assertEquals(
          before,
          Files.readString(workDir.resolve("after.json")),
          "PostgreSQL's books equal the H2 journal's");
    } finally {
      try (Connection c =
              DriverManager.getConnection(
                  "jdbc:postgresql://127.0.0.1:5432/postgres", "postgres", "");
          Statement s = c.createStatement()) {
        s.execute("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
      }
    }

    // "bin/gateway": the restored journal recovers and serves.
    try (GatewayProcess gateway =
        GatewayProcess.launch()
            .args("--demo")
            .port(GatewayProcess.freePort())
            .workDir(workDir)
            .start(workDir.resolve("gateway-restored.txt"))) {
      gateway.awaitReady(Duration.ofSeconds(300));
    }
  }

  /** An operator's block as the test runs it: its own paths and the repository's gateway-admin. */
  private static String ops(String block, String admin) {
    return block
        .replace("bin/gateway-admin ", admin)
        .replace("/backups/", "$PWD/backups/")
        .replace("/tmp/check", "$PWD/check");
  }

  /**
   * Runs {@code script} with bash in the test's directory; returns its output once it succeeded.
   */
  private String bash(String script) throws Exception {
    Path file = workDir.resolve("stopped.sh");
    Files.writeString(file, "set -euo pipefail\n" + script);
    Path out = workDir.resolve("stopped.txt");
    ProcessBuilder shell =
        new ProcessBuilder("bash", file.toString())
            .directory(workDir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(out.toFile());
    shell.environment().keySet().removeIf(k -> k.startsWith("GATEWAY_"));
    // Each bin/gateway-admin in the examples is a JVM reading a journal of a few rows: the JIT's
    // first tier and the serial collector start it about a quarter faster (~2.9 s against
    // ~3.5 s here). JAVA_OPTS is the script's documented knob; what the commands do is unchanged.
    shell.environment().put("JAVA_OPTS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
    Process run = shell.start();
    assertTrue(run.waitFor(240, TimeUnit.SECONDS), "the examples finish");
    String printed = Files.readString(out, StandardCharsets.UTF_8);
    assertEquals(0, run.exitValue(), "every example works:\n" + printed);
    return printed;
  }

  /** The {@code sh} and {@code bash} fenced blocks of {@code markdown}, in order. */
  private static List<String> shBlocks(String markdown) {
    List<String> blocks = new ArrayList<>();
    Matcher m = Pattern.compile("(?s)```(?:sh|bash)\\n(.*?)```").matcher(markdown);
    while (m.find()) {
      blocks.add(m.group(1));
    }
    return blocks;
  }
}
