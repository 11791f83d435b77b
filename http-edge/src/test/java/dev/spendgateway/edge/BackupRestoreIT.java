package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.testkit.GatewayProcess;
import dev.spendgateway.edge.testkit.GatewayProcess.Cli;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runbook's backup and restore, run as an operator runs them: a live gateway (its own process)
 * takes reservations, {@code gateway-admin backup} copies its journal while it runs, {@code
 * restore} puts the copy into a fresh data dir, and {@code verify} and {@code replay} there give
 * the same books as the live journal. Neither verb ever creates an empty database.
 */
class BackupRestoreIT {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private static final String TOKEN = "backup-it-token";

  @TempDir Path temp;

  @Test
  void aBackupOfALiveGatewayRestoresToTheSameBooks() throws Exception {
    Path live = temp.resolve("live");
    try (GatewayProcess gateway =
        GatewayProcess.launch()
            .dataDir(live)
            .port(GatewayProcess.freePort())
            .token(TOKEN)
            .start(temp.resolve("gateway.txt"))) {
      String base = gateway.awaitReady(Duration.ofSeconds(300)).base();
      for (int i = 1; i <= 5; i++) {
        assertEquals(
            201,
            post(
                base + "/ledger/reservations",
                "{\"id\":\"bk-"
                    + i
                    + "\",\"lane\":\"app\",\"brand\":\"b1\","
                    + "\"amountUsd\":0.30,\"brandDailyUsd\":5,\"brandMonthlyUsd\":50}"));
      }
      assertEquals(200, post(base + "/ledger/reservations/bk-1/settle", "{\"actualUsd\":0.12}"));
      assertEquals(200, post(base + "/ledger/reservations/bk-2/settle", "{\"actualUsd\":0.25}"));
      assertEquals(200, post(base + "/ledger/reservations/bk-3/void", "{}"));

      Path zip = temp.resolve("backups/ledger.zip");
      Cli backup = admin("backup", "--data-dir", live.toString(), "-o", zip.toString());
      assertEquals(0, backup.exit(), backup.output());
      assertTrue(Files.size(zip) > 0);

      Path restored = temp.resolve("restored");
      Cli restore = admin("restore", zip.toString(), "--data-dir", restored.toString());
      assertEquals(0, restore.exit(), restore.output());

      Cli liveVerify = admin("verify", "--data-dir", live.toString());
      Cli restoredVerify = admin("verify", "--data-dir", restored.toString());
      assertEquals(0, liveVerify.exit(), liveVerify.output());
      assertEquals(0, restoredVerify.exit(), restoredVerify.output());
      assertTrue(
          restoredVerify.stdout().startsWith("OK: 8 events verified"), restoredVerify.stdout());
      assertEquals(liveVerify.stdout(), restoredVerify.stdout());

      Cli liveBooks = admin("replay", "--json", "--data-dir", live.toString());
      Cli restoredBooks = admin("replay", "--json", "--data-dir", restored.toString());
      assertEquals(0, restoredBooks.exit(), restoredBooks.output());
      assertEquals(liveBooks.stdout(), restoredBooks.stdout(), "the same books");
      assertTrue(restoredBooks.stdout().contains("\"openReservations\":2"), restoredBooks.stdout());

      // Restoring over books is refused; they are left as they were.
      Cli again = admin("restore", zip.toString(), "--data-dir", restored.toString());
      assertEquals(2, again.exit());
      assertTrue(
          again.stderr().strip().lines().count() == 1
              && again.stderr().contains("already holds a journal"),
          again.stderr());
      // So is restoring under the running gateway.
      Cli underLive = admin("restore", zip.toString(), "--data-dir", live.toString());
      assertEquals(2, underLive.exit());
      assertTrue(underLive.stderr().contains("a gateway is running on"), underLive.stderr());
    }
  }

  @Test
  void aBackupOfADataDirWithoutAJournalCreatesNothing() throws Exception {
    Path empty = Files.createDirectories(temp.resolve("no-journal-here"));
    Cli backup =
        admin("backup", "--data-dir", empty.toString(), "-o", temp.resolve("empty.zip").toString());
    assertEquals(2, backup.exit());
    assertTrue(
        backup.stderr().contains("no journal at " + empty.resolve("ledger.mv.db")),
        backup.stderr());
    assertEquals(1, backup.stderr().strip().lines().count(), backup.stderr());
    assertFalse(Files.exists(empty.resolve("ledger.mv.db")), "no empty database was created");
    assertFalse(Files.exists(temp.resolve("empty.zip")));
  }

  // ---------------------------------------------------------------------------------------------

  private Cli admin(String... args) throws Exception {
    return GatewayProcess.admin(temp, args);
  }

  private static int post(String url, String json) throws Exception {
    return HTTP.send(
            HttpRequest.newBuilder(URI.create(url))
                .timeout(Duration.ofSeconds(30))
                .header("x-api-key", TOKEN)
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .build(),
            HttpResponse.BodyHandlers.ofString())
        .statusCode();
  }
}
