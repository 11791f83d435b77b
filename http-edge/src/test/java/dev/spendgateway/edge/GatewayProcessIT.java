package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.GatewayProcess;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
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
    try (GatewayProcess gateway = demo().start(dataDir.resolve("stdout.txt"))) {
      String base = gateway.awaitReady(Duration.ofSeconds(60)).base();
      assertEquals(200, get(base + "/healthz", Map.of()).statusCode());

      String printed = gateway.output();
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
      assertEquals(
          401,
          get(base + "/admin/no-such-route", Map.of("x-api-key", token.group(1))).statusCode());
      assertEquals(
          404,
          get(base + "/admin/no-such-route", Map.of("x-api-key", admin.group(1))).statusCode());

      gateway.process.destroy(); // SIGTERM
      assertTrue(gateway.process.waitFor(40, TimeUnit.SECONDS), "gateway stops after SIGTERM");
      assertEquals(0, gateway.process.exitValue(), "clean shutdown exits 0");
    }
  }

  @Test
  void sigtermLetsAnOpenStreamFinishAndItsCostIsSettledBeforeExit() throws Exception {
    // Each SSE event of the answer arrives 250 ms after the previous one; SIGTERM lands mid-stream.
    sigtermDuringAStreamedCall(0, 250, "open");
  }

  @Test
  void sigtermBeforeTheProviderAnsweredStillDeliversTheWholeStream() throws Exception {
    // The provider takes 1.5 s to send its headers, then drips; SIGTERM lands while the call waits
    // for them, so nothing counted it as a stream yet, and Pekko HTTP sees the request done as soon
    // as the headers go out: the drain must count the call from its start to its last byte.
    sigtermDuringAStreamedCall(1500, 250, "received");
  }

  /**
   * Starts the demo, makes the simulator's next Anthropic answer wait {@code headersAfterMs} and
   * then send one SSE event every {@code dripMs}, opens a streamed call, sends SIGTERM once the
   * simulator shows the call {@code at} a point ({@code received}: the provider has the request and
   * has not answered; {@code open}: its stream is flowing), and checks the caller still got the
   * whole stream, the exit was clean, and a restart shows the call settled at its real cost.
   */
  private void sigtermDuringAStreamedCall(long headersAfterMs, long dripMs, String at)
      throws Exception {
    int port = GatewayProcess.freePort();
    try (GatewayProcess gateway = demo().port(port).start(dataDir.resolve("drain.txt"))) {
      String base = gateway.awaitReady(Duration.ofSeconds(60)).base();
      String printed = gateway.output();
      String token = find(printed, "GATEWAY_TOKEN=(\\S+)");
      String simulator = find(printed, "provider simulator at (http://\\S+)\\)");
      post(simulator + "/_sim/defaults", Map.of(), "{\"latencyMs\":" + headersAfterMs + "}");
      post(
          simulator + "/_sim/script",
          Map.of(),
          "{\"route\":\"anthropic.messages\",\"fault\":{\"kind\":\"slowDrip\",\"intervalMs\":"
              + dripMs
              + "}}");

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
              .POST(
                  HttpRequest.BodyPublishers.ofString(
                      "{\"model\":\"claude-opus-5-5\",\"max_tokens\":1000,\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"))
              .build();
      var answer = HTTP.sendAsync(stream, HttpResponse.BodyHandlers.ofString());
      awaitSimulator(simulator, at);

      gateway.process.destroy(); // SIGTERM while the call is in flight
      String body = answer.get(30, TimeUnit.SECONDS).body();
      assertTrue(body.contains("message_stop"), "the open stream was allowed to finish: " + body);
      assertTrue(gateway.process.waitFor(40, TimeUnit.SECONDS), "gateway stops after SIGTERM");
      assertEquals(0, gateway.process.exitValue(), "clean shutdown exits 0");

      // Restart on the same journal: the call was settled at its real cost, nothing left open.
      try (GatewayProcess restarted = demo().port(port).start(dataDir.resolve("again.txt"))) {
        restarted.awaitReady(Duration.ofSeconds(60));
        String token2 = find(restarted.output(), "GATEWAY_TOKEN=(\\S+)");
        String usage = get(base + "/usage?brand=drain", Map.of("x-api-key", token2)).body();
        assertTrue(usage.contains("\"openReservations\":0"), usage);
        assertTrue(
            usage.matches(
                "(?s).*\"cap\":\"brand_daily\",\"subject\":\"drain\".*\"spentUsd\":0\\.0004.*"),
            "settled at the real cost (25 in x $4/M + 15 out x $20/M = $0.0004): " + usage);
      }
    }
  }

  /**
   * Polls the demo's simulator until the call is where the SIGTERM must find it: {@code received}
   * (the request reached the provider) or {@code open} (its answer is streaming).
   */
  private static void awaitSimulator(String simulator, String at) throws Exception {
    String url = simulator + (at.equals("open") ? "/_sim/streams" : "/_sim/received");
    String field = at.equals("open") ? "\"open\":" : "\"total\":";
    Eventually.until(
        "the call is " + at + " at the simulator",
        Duration.ofSeconds(20),
        () -> get(url, Map.of()).body().replace(" ", "").contains(field + "1"));
  }

  /** The demo as bin/gateway --demo runs it, its journal in this test's data dir. */
  private GatewayProcess.Launch demo() throws IOException {
    return GatewayProcess.launch()
        .args("--demo")
        .port(GatewayProcess.freePort())
        .dataDir(dataDir.resolve("data"));
  }

  private static String find(String text, String regex) {
    Matcher m = Pattern.compile(regex).matcher(text);
    assertTrue(m.find(), regex + " in " + text);
    return m.group(1);
  }

  private static void post(String url, Map<String, String> headers, String json) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(url))
            .timeout(Duration.ofSeconds(5))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json));
    headers.forEach(b::header);
    assertEquals(200, HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString()).statusCode());
  }

  @Test
  void withoutATokenOutsideDemoItRefusesWithOneClearLine() throws Exception {
    GatewayProcess gateway =
        GatewayProcess.launch()
            .dataDir(dataDir.resolve("data"))
            .token("")
            .start(dataDir.resolve("refusal.txt"));
    assertFalse(gateway.awaitExit(Duration.ofSeconds(30)) == 0, "refuses to start");
    String printed = gateway.output().strip();
    assertTrue(printed.contains("GATEWAY_TOKEN"), printed);
    assertEquals(1, printed.lines().count(), "one clear line: " + printed);
  }

  private static HttpResponse<String> get(String url, Map<String, String> headers)
      throws IOException, InterruptedException {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5));
    headers.forEach(b::header);
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }
}
