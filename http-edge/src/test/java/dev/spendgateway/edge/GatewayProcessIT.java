package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Starts the packaged gateway.jar as a separate process, the way bin/gateway does, and checks the
 * start/stop contract: --demo becomes ready and prints a working curl; SIGTERM exits 0; no token
 * outside demo refuses with one clear line.
 */
class GatewayProcessIT {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @TempDir Path dataDir;

  @Test
  void demoBecomesReadyAnswersThePrintedCurlAndStopsCleanlyOnSigterm() throws Exception {
    int port = freePort();
    Path out = dataDir.resolve("stdout.txt");
    Process gateway =
        start(List.of("--demo"), Map.of("GATEWAY_PORT", Integer.toString(port)), out);
    try {
      String base = "http://127.0.0.1:" + port;
      waitForStatus(base + "/readyz", 200, Duration.ofSeconds(60), gateway);
      assertEquals(200, get(base + "/healthz", Map.of()).statusCode());

      String printed = Files.readString(out, StandardCharsets.UTF_8);
      Matcher token = Pattern.compile("GATEWAY_TOKEN=(\\S+)").matcher(printed);
      assertTrue(token.find(), "demo prints its token: " + printed);
      assertTrue(printed.contains("curl"), "demo prints a curl example");

      // The printed token opens the authenticated routes; no token does not.
      assertEquals(200, get(base + "/usage", Map.of("x-api-key", token.group(1))).statusCode());
      assertEquals(401, get(base + "/usage", Map.of()).statusCode());

      // The printed admin token, a different secret, opens /admin; the caller token does not.
      Matcher admin = Pattern.compile("GATEWAY_ADMIN_TOKEN=(\\S+)").matcher(printed);
      assertTrue(admin.find(), "demo prints its admin token: " + printed);
      assertNotEquals(token.group(1), admin.group(1));
      assertEquals(401, get(base + "/admin/no-such-route", Map.of("x-api-key", token.group(1))).statusCode());
      assertEquals(404, get(base + "/admin/no-such-route", Map.of("x-api-key", admin.group(1))).statusCode());

      gateway.destroy(); // SIGTERM
      assertTrue(gateway.waitFor(40, TimeUnit.SECONDS), "gateway stops after SIGTERM");
      assertEquals(0, gateway.exitValue(), "clean shutdown exits 0");
    } finally {
      gateway.destroyForcibly();
    }
  }

  @Test
  void sigtermLetsAnOpenStreamFinishAndItsCostIsSettledBeforeExit() throws Exception {
    // Each SSE event of the answer arrives 250 ms after the previous one; SIGTERM lands mid-stream.
    sigtermDuringAStreamedCall(0, 250, 800);
  }

  @Test
  void sigtermBeforeTheProviderAnsweredStillDeliversTheWholeStream() throws Exception {
    // The provider takes 1.5 s to send its headers, then drips; SIGTERM lands while the call waits
    // for them, so nothing counted it as a stream yet, and Pekko HTTP sees the request done as soon
    // as the headers go out: the drain must count the call from its start to its last byte.
    sigtermDuringAStreamedCall(1500, 250, 500);
  }

  /**
   * Starts the demo, makes the simulator's next Anthropic answer wait {@code headersAfterMs} and
   * then send one SSE event every {@code dripMs}, opens a streamed call, sends SIGTERM after
   * {@code sigtermAfterMs}, and checks the caller still got the whole stream, the exit was clean,
   * and a restart shows the call settled at its real cost.
   */
  private void sigtermDuringAStreamedCall(long headersAfterMs, long dripMs, long sigtermAfterMs) throws Exception {
    int port = freePort();
    Path out = dataDir.resolve("drain.txt");
    Process gateway = start(List.of("--demo"), Map.of("GATEWAY_PORT", Integer.toString(port)), out);
    try {
      String base = "http://127.0.0.1:" + port;
      waitForStatus(base + "/readyz", 200, Duration.ofSeconds(60), gateway);
      String printed = Files.readString(out, StandardCharsets.UTF_8);
      String token = find(printed, "GATEWAY_TOKEN=(\\S+)");
      String simulator = find(printed, "provider simulator at (http://\\S+)\\)");
      post(simulator + "/_sim/defaults", Map.of(), "{\"latencyMs\":" + headersAfterMs + "}");
      post(simulator + "/_sim/script", Map.of(),
          "{\"route\":\"anthropic.messages\",\"fault\":{\"kind\":\"slowDrip\",\"intervalMs\":" + dripMs + "}}");

      HttpRequest stream =
          HttpRequest.newBuilder(URI.create(base + "/anthropic/v1/messages"))
              .timeout(Duration.ofSeconds(30))
              .header("x-api-key", token)
              .header("content-type", "application/json")
              .header("anthropic-version", "2023-06-01")
              .header("x-spend-lane", "app")
              .header("x-spend-brand", "drain")
              .header("x-spend-brand-daily-usd", "5")
              .header("x-spend-brand-monthly-usd", "50")
              .POST(HttpRequest.BodyPublishers.ofString(
                  "{\"model\":\"claude-opus-5-5\",\"max_tokens\":1000,\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"))
              .build();
      var answer = HTTP.sendAsync(stream, HttpResponse.BodyHandlers.ofString());
      Thread.sleep(sigtermAfterMs);

      gateway.destroy(); // SIGTERM while the call is in flight
      String body = answer.get(30, TimeUnit.SECONDS).body();
      assertTrue(body.contains("message_stop"), "the open stream was allowed to finish: " + body);
      assertTrue(gateway.waitFor(40, TimeUnit.SECONDS), "gateway stops after SIGTERM");
      assertEquals(0, gateway.exitValue(), "clean shutdown exits 0");

      // Restart on the same journal: the call was settled at its real cost, nothing left open.
      Path again = dataDir.resolve("again.txt");
      Process restarted = start(List.of("--demo"), Map.of("GATEWAY_PORT", Integer.toString(port)), again);
      try {
        waitForStatus(base + "/readyz", 200, Duration.ofSeconds(60), restarted);
        String token2 = find(Files.readString(again, StandardCharsets.UTF_8), "GATEWAY_TOKEN=(\\S+)");
        String usage = get(base + "/usage?brand=drain", Map.of("x-api-key", token2)).body();
        assertTrue(usage.contains("\"openReservations\":0"), usage);
        assertTrue(usage.matches("(?s).*\"cap\":\"brand_daily\",\"subject\":\"drain\".*\"spentUsd\":0\\.0004.*"),
            "settled at the real cost (25 in x $4/M + 15 out x $20/M = $0.0004): " + usage);
      } finally {
        restarted.destroy();
        restarted.waitFor(40, TimeUnit.SECONDS);
        restarted.destroyForcibly();
      }
    } finally {
      gateway.destroyForcibly();
    }
  }

  private static String find(String text, String regex) {
    Matcher m = Pattern.compile(regex).matcher(text);
    assertTrue(m.find(), regex + " in " + text);
    return m.group(1);
  }

  private static void post(String url, Map<String, String> headers, String json) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5))
            .header("content-type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json));
    headers.forEach(b::header);
    assertEquals(200, HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString()).statusCode());
  }

  @Test
  void withoutATokenOutsideDemoItRefusesWithOneClearLine() throws Exception {
    Path out = dataDir.resolve("refusal.txt");
    Process gateway = start(List.of(), Map.of("GATEWAY_TOKEN", ""), out);
    assertTrue(gateway.waitFor(30, TimeUnit.SECONDS));
    assertFalse(gateway.exitValue() == 0, "refuses to start");
    String printed = Files.readString(out, StandardCharsets.UTF_8).strip();
    assertTrue(printed.contains("GATEWAY_TOKEN"), printed);
    assertEquals(1, printed.lines().count(), "one clear line: " + printed);
  }

  private Process start(List<String> args, Map<String, String> env, Path out) throws IOException {
    String jar = System.getProperty("gateway.jar", "target/gateway.jar");
    Path root = Path.of(jar).toAbsolutePath().getParent().getParent().getParent();
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Dconfig.file=" + root.resolve("conf/application.conf"));
    cmd.add("-Dlogback.configurationFile=" + root.resolve("conf/logback.xml"));
    cmd.add("-jar");
    cmd.add(jar);
    cmd.addAll(args);
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
    pb.environment().put("GATEWAY_DATA_DIR", dataDir.resolve("data").toString());
    pb.environment().remove("GATEWAY_TOKEN");
    pb.environment().putAll(env);
    return pb.start();
  }

  private static void waitForStatus(String url, int status, Duration max, Process p)
      throws Exception {
    long deadline = System.nanoTime() + max.toNanos();
    while (System.nanoTime() < deadline) {
      assertTrue(p.isAlive(), "gateway exited early with " + (p.isAlive() ? "" : p.exitValue()));
      try {
        if (get(url, Map.of()).statusCode() == status) {
          return;
        }
      } catch (IOException notYetListening) {
        // keep polling
      }
      Thread.sleep(200);
    }
    throw new AssertionError(url + " never answered " + status);
  }

  private static HttpResponse<String> get(String url, Map<String, String> headers)
      throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5));
    headers.forEach(b::header);
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
