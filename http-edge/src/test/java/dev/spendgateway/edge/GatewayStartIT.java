package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged gateway started as bin/gateway starts it (conf/ on the class path): a failed start
 * ends the process with one line and a non-zero exit, and one data dir has one writer.
 */
class GatewayStartIT {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @TempDir Path temp;

  @Test
  void aSecondGatewayOnTheSameDataDirRefusesNamingTheFirst() throws Exception {
    Path data = temp.resolve("data");
    Process first = start(List.of(), env(data, freePort()), temp.resolve("first.txt"), temp);
    try {
      waitReady(first, temp.resolve("first.txt"));
      Path out = temp.resolve("second.txt");
      Process second = start(List.of(), env(data, freePort()), out, temp);
      assertTrue(second.waitFor(180, TimeUnit.SECONDS), "the second gateway stops by itself");
      assertEquals(1, second.exitValue());
      String line = oneLine(out);
      assertTrue(line.contains("in use by another gateway (pid " + first.pid() + " on "), line);
      assertTrue(first.isAlive(), "the first gateway keeps running");
      assertTrue(Files.readString(data.resolve("gateway.lock")).contains("pid=" + first.pid()));
    } finally {
      stop(first);
    }
    // Once the first stopped, the lock is free again.
    Process again = start(List.of(), env(data, freePort()), temp.resolve("again.txt"), temp);
    try {
      waitReady(again, temp.resolve("again.txt"));
    } finally {
      stop(again);
    }
  }

  @Test
  void aBadValueInTheEnvironmentEndsTheProcessWithOneLine() throws Exception {
    Map<String, String> env = env(temp.resolve("data"), freePort());
    env.put("GATEWAY_PORT", "abc");
    Path out = temp.resolve("bad-port.txt");
    Process gateway = start(List.of(), env, out, temp);
    assertTrue(gateway.waitFor(180, TimeUnit.SECONDS), "the JVM never outlives a failed start");
    assertEquals(2, gateway.exitValue());
    String line = oneLine(out);
    assertTrue(line.contains("gateway.port") && line.contains("GATEWAY_PORT") && line.contains("\"abc\""), line);
  }

  @Test
  void aJournalH2CannotOpenIsOneLineAfterBoundedTries() throws Exception {
    Path data = Files.createDirectories(temp.resolve("data"));
    Files.write(data.resolve("ledger.mv.db"), new byte[64 * 1024]); // zeros: not an H2 file
    Path out = temp.resolve("corrupt.txt");
    Process gateway = start(List.of(), env(data, freePort()), out, temp);
    assertTrue(gateway.waitFor(180, TimeUnit.SECONDS), "stops by itself");
    assertEquals(1, gateway.exitValue());
    String line = oneLine(out);
    assertTrue(line.startsWith("gateway: the journal database in " + data) && line.contains("tried 3 times"), line);
  }

  @Test
  void aRelativeDataDirIsTakenFromTheWorkingDirectory() throws Exception {
    Map<String, String> env = env(temp.resolve("unused"), freePort());
    env.put("GATEWAY_DATA_DIR", "mydata");
    Path out = temp.resolve("relative.txt");
    Process gateway = start(List.of(), env, out, temp);
    try {
      waitReady(gateway, out);
      assertTrue(Files.exists(temp.resolve("mydata/ledger.mv.db")), "journal under the working directory");
    } finally {
      stop(gateway);
    }
  }

  // ---------------------------------------------------------------------------------------------

  private static Map<String, String> env(Path data, int port) {
    return new java.util.HashMap<>(Map.of(
        "GATEWAY_DATA_DIR", data.toString(),
        "GATEWAY_PORT", Integer.toString(port),
        "GATEWAY_TOKEN", "it-token"));
  }

  private void waitReady(Process p, Path out) throws Exception {
    String port = ports.get(p.pid());
    long deadline = System.nanoTime() + Duration.ofSeconds(300).toNanos();
    while (System.nanoTime() < deadline) {
      assertTrue(p.isAlive(), "gateway exited early: " + Files.readString(out));
      try {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readyz"))
            .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 200) {
          return;
        }
      } catch (IOException notYet) {
        // keep polling
      }
      Thread.sleep(200);
    }
    throw new AssertionError("never ready: " + Files.readString(out));
  }

  /** The port each started process was given. */
  private final Map<Long, String> ports = new java.util.HashMap<>();

  private Process start(List<String> args, Map<String, String> env, Path out, Path workDir) throws IOException {
    String jar = System.getProperty("gateway.jar", "target/gateway.jar");
    Path root = Path.of(jar).toAbsolutePath().getParent().getParent().getParent();
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Dlogback.configurationFile=" + root.resolve("conf/logback.xml"));
    cmd.add("-cp");
    cmd.add(root.resolve("conf") + java.io.File.pathSeparator + Path.of(jar).toAbsolutePath());
    cmd.add("dev.spendgateway.edge.GatewayMain");
    cmd.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(cmd).directory(workDir.toFile()).redirectErrorStream(true)
        .redirectOutput(out.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("GATEWAY_"));
    pb.environment().putAll(env);
    Process p = pb.start();
    ports.put(p.pid(), env.get("GATEWAY_PORT"));
    return p;
  }

  /** The process's output is exactly one line (startup logging is at INFO on stdout only after the check). */
  private static String oneLine(Path out) throws IOException {
    List<String> lines = Files.readString(out, StandardCharsets.UTF_8).strip().lines()
        .filter(l -> l.startsWith("gateway: ") || l.contains("Exception") || l.contains("\tat "))
        .toList();
    assertEquals(1, lines.size(), "one line: " + Files.readString(out));
    return lines.get(0);
  }

  private static void stop(Process p) throws InterruptedException {
    p.destroy();
    if (!p.waitFor(40, TimeUnit.SECONDS)) {
      p.destroyForcibly();
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
