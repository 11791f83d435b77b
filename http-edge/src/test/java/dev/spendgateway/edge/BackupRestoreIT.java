package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The runbook's backup and restore, run as an operator runs them: a live gateway (its own process)
 * takes reservations, {@code gateway-admin backup} copies its journal while it runs, {@code restore}
 * puts the copy into a fresh data dir, and {@code verify} and {@code replay} there give the same
 * books as the live journal. Neither verb ever creates an empty database.
 */
class BackupRestoreIT {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private static final String TOKEN = "backup-it-token";

  @TempDir Path temp;

  @Test
  void aBackupOfALiveGatewayRestoresToTheSameBooks() throws Exception {
    Path live = temp.resolve("live");
    int port = freePort();
    Process gateway = startGateway(live, port, temp.resolve("gateway.txt"));
    try {
      String base = "http://127.0.0.1:" + port;
      waitReady(base, gateway, temp.resolve("gateway.txt"));
      for (int i = 1; i <= 5; i++) {
        assertEquals(201, post(base + "/ledger/reservations", "{\"id\":\"bk-" + i + "\",\"lane\":\"app\",\"brand\":\"b1\","
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
      assertTrue(restoredVerify.stdout().startsWith("OK: 8 events verified"), restoredVerify.stdout());
      assertEquals(liveVerify.stdout(), restoredVerify.stdout());

      Cli liveBooks = admin("replay", "--json", "--data-dir", live.toString());
      Cli restoredBooks = admin("replay", "--json", "--data-dir", restored.toString());
      assertEquals(0, restoredBooks.exit(), restoredBooks.output());
      assertEquals(liveBooks.stdout(), restoredBooks.stdout(), "the same books");
      assertTrue(restoredBooks.stdout().contains("\"openReservations\":2"), restoredBooks.stdout());

      // Restoring over books is refused; they are left as they were.
      Cli again = admin("restore", zip.toString(), "--data-dir", restored.toString());
      assertEquals(2, again.exit());
      assertTrue(again.stderr().strip().lines().count() == 1 && again.stderr().contains("already holds a journal"),
          again.stderr());
      // So is restoring under the running gateway.
      Cli underLive = admin("restore", zip.toString(), "--data-dir", live.toString());
      assertEquals(2, underLive.exit());
      assertTrue(underLive.stderr().contains("a gateway is running on"), underLive.stderr());
    } finally {
      gateway.destroy();
      if (!gateway.waitFor(60, TimeUnit.SECONDS)) {
        gateway.destroyForcibly();
      }
    }
  }

  @Test
  void aBackupOfADataDirWithoutAJournalCreatesNothing() throws Exception {
    Path empty = Files.createDirectories(temp.resolve("no-journal-here"));
    Cli backup = admin("backup", "--data-dir", empty.toString(), "-o", temp.resolve("empty.zip").toString());
    assertEquals(2, backup.exit());
    assertTrue(backup.stderr().contains("no journal at " + empty.resolve("ledger.mv.db")), backup.stderr());
    assertEquals(1, backup.stderr().strip().lines().count(), backup.stderr());
    assertFalse(Files.exists(empty.resolve("ledger.mv.db")), "no empty database was created");
    assertFalse(Files.exists(temp.resolve("empty.zip")));
  }

  // ---------------------------------------------------------------------------------------------

  record Cli(int exit, String stdout, String stderr) {
    String output() {
      return stdout + stderr;
    }
  }

  private Cli admin(String... args) throws Exception {
    Path root = root();
    List<String> cmd = new ArrayList<>(List.of(java(), "-cp",
        root.resolve("conf") + File.pathSeparator + root.resolve("operator-cli/target/gateway-admin.jar"),
        "dev.spendgateway.operator.GatewayAdmin"));
    cmd.addAll(List.of(args));
    Path out = Files.createTempFile(temp, "admin", ".out");
    Path err = Files.createTempFile(temp, "admin", ".err");
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("GATEWAY_"));
    Process p = pb.start();
    assertTrue(p.waitFor(180, TimeUnit.SECONDS), "gateway-admin " + String.join(" ", args) + " ends");
    return new Cli(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
  }

  private Process startGateway(Path data, int port, Path out) throws IOException {
    Path root = root();
    String jar = Path.of(System.getProperty("gateway.jar", "target/gateway.jar")).toAbsolutePath().toString();
    ProcessBuilder pb = new ProcessBuilder(java(), "-Dlogback.configurationFile=" + root.resolve("conf/logback.xml"),
        "-cp", root.resolve("conf") + File.pathSeparator + jar, "dev.spendgateway.edge.GatewayMain")
        .redirectErrorStream(true).redirectOutput(out.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("GATEWAY_"));
    pb.environment().put("GATEWAY_DATA_DIR", data.toString());
    pb.environment().put("GATEWAY_PORT", Integer.toString(port));
    pb.environment().put("GATEWAY_TOKEN", TOKEN);
    return pb.start();
  }

  private static Path root() {
    String jar = System.getProperty("gateway.jar", "target/gateway.jar");
    return Path.of(jar).toAbsolutePath().getParent().getParent().getParent();
  }

  private static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  private static int post(String url, String json) throws Exception {
    return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
        .header("x-api-key", TOKEN).header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json)).build(), HttpResponse.BodyHandlers.ofString()).statusCode();
  }

  private static void waitReady(String base, Process p, Path out) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(300).toNanos();
    while (System.nanoTime() < deadline) {
      assertTrue(p.isAlive(), "gateway exited early: " + Files.readString(out));
      try {
        if (HTTP.send(HttpRequest.newBuilder(URI.create(base + "/readyz")).timeout(Duration.ofSeconds(5)).build(),
            HttpResponse.BodyHandlers.ofString()).statusCode() == 200) {
          return;
        }
      } catch (IOException notYet) {
        // keep polling
      }
      Thread.sleep(200);
    }
    throw new AssertionError("never ready: " + Files.readString(out));
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
