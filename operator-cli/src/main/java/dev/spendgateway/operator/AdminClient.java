package dev.spendgateway.operator;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import picocli.CommandLine;

/**
 * The HTTP side of the write verbs: JSON to the gateway's {@code /admin} routes with the admin
 * token, the answer on stdout (2xx) or stderr, and for an adjustment whose outcome is unknown how
 * to rerun it safely.
 */
final class AdminClient {
  /** How long a write verb waits for the gateway's answer. */
  static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(30);

  private final CommandLine.Model.CommandSpec spec;
  private final GatewayOptions gateway;

  AdminClient(CommandLine.Model.CommandSpec spec, GatewayOptions gateway) {
    this.spec = spec;
    this.gateway = gateway;
  }

  /** POSTs {@code body} (JSON) to the gateway; prints the answer; 0 on 2xx, 1 otherwise. */
  int post(String path, Map<String, Object> body) throws IOException, InterruptedException {
    return printAnswer(send(jsonPost(path, body)));
  }

  /**
   * POSTs an adjustment (credit or adjust) under {@code adjustmentId}, which the gateway applies at
   * most once. Says the id before sending; when the outcome is unknown (no answer in time, a broken
   * connection, a 5xx) adds how to rerun safely. 0 on 2xx, 1 on another answer, 2 on no answer.
   */
  int postAdjustment(String path, Map<String, Object> body, String adjustmentId)
      throws IOException, InterruptedException {
    body.put("adjustmentId", adjustmentId);
    HttpRequest request = jsonPost(path, body);
    PrintWriter err = spec.commandLine().getErr();
    err.println("adjustment id: " + adjustmentId);
    err.flush();
    HttpResponse<String> response;
    try {
      response = HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      err.println("gateway-admin: " + noAnswer(e));
      err.println(safeRetry(adjustmentId));
      err.flush();
      return GatewayAdmin.FAILED;
    }
    int exit = printAnswer(response);
    if (response.statusCode() >= 500) {
      err.println(safeRetry(adjustmentId));
      err.flush();
    }
    return exit;
  }

  /**
   * GETs {@code /admin/status} and prints it: 0 when ready, 1 when the gateway answered not ready
   * or refused, an error (exit 2) when it did not answer.
   */
  int status() throws IOException, InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(gateway.uri("/admin/status"))
            .timeout(ANSWER_TIMEOUT)
            .header("authorization", "Bearer " + gateway.adminToken())
            .GET()
            .build();
    HttpResponse<String> response = send(request);
    int exit = printAnswer(response);
    if (exit == 0 && response.body().contains("\"ready\":false")) {
      return GatewayAdmin.VIOLATION;
    }
    return exit;
  }

  /** A path segment (an id, a brand, a model) encoded for the URL. */
  static String encode(String segment) {
    return URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20");
  }

  /** Sends {@code request}; a refused connection is one line naming where it tried. */
  private HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
    try {
      return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
    } catch (ConnectException e) {
      throw new IllegalStateException(unreachable());
    }
  }

  private HttpRequest jsonPost(String path, Map<String, Object> body) throws IOException {
    String json = new ObjectMapper().writeValueAsString(body);
    return HttpRequest.newBuilder(gateway.uri(path))
        .timeout(ANSWER_TIMEOUT)
        .header("authorization", "Bearer " + gateway.adminToken())
        .header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(json, StandardCharsets.UTF_8))
        .build();
  }

  /** The body on stdout for a 2xx (0), else {@code HTTP <status> <body>} on stderr (1). */
  private int printAnswer(HttpResponse<String> response) {
    boolean ok = response.statusCode() / 100 == 2;
    PrintWriter out = ok ? spec.commandLine().getOut() : spec.commandLine().getErr();
    out.println(ok ? response.body() : "HTTP " + response.statusCode() + " " + response.body());
    out.flush();
    return ok ? 0 : GatewayAdmin.VIOLATION;
  }

  private String unreachable() {
    return "cannot reach the gateway at "
        + gateway.uri("")
        + " (is it running? "
        + "GATEWAY_HOST/GATEWAY_PORT or --host/--port)";
  }

  private String noAnswer(IOException e) {
    if (e instanceof ConnectException) {
      return unreachable();
    }
    if (e instanceof HttpTimeoutException) {
      return "no answer from the gateway within "
          + ANSWER_TIMEOUT.toSeconds()
          + " s; the "
          + "adjustment may or may not have been applied";
    }
    return "the connection to the gateway failed ("
        + e.getClass().getSimpleName()
        + (e.getMessage() == null ? "" : ": " + e.getMessage())
        + "); the adjustment may or may "
        + "not have been applied";
  }

  private static String safeRetry(String adjustmentId) {
    return "to retry safely, run the same command again with --id "
        + adjustmentId
        + " (the gateway applies an adjustment id at most once)";
  }
}
