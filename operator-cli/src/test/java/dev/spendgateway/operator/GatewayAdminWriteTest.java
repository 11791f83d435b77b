package dev.spendgateway.operator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The write verbs {@code credit} and {@code adjust} against a scripted stand-in for the gateway's
 * admin API (the real one runs them in http-edge's {@code AdminRoutesTest}): they send an
 * adjustment id, chosen with {@code --id} or new, say it before sending, and whenever the outcome
 * is unknown (no answer, a 5xx) say how to rerun safely with it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class GatewayAdminWriteTest {
  private static final String TOKEN = "write-test-token";

  /** Stub status that drops the connection without answering. */
  private static final int DROP = -1;

  private final ObjectMapper mapper = new ObjectMapper();
  private final List<Recorded> requests = new CopyOnWriteArrayList<>();
  private HttpServer server;
  private volatile int status;

  private record Recorded(String path, String authorization, JsonNode body) {}

  private record Run(int exit, String out, String err) {}

  @BeforeAll
  void startStub() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", this::answer);
    server.start();
  }

  @AfterAll
  void stopStub() {
    server.stop(0);
  }

  @BeforeEach
  void reset() {
    requests.clear();
    status = 200;
  }

  private void answer(HttpExchange exchange) throws IOException {
    JsonNode body = mapper.readTree(exchange.getRequestBody().readAllBytes());
    requests.add(
        new Recorded(
            exchange.getRequestURI().getRawPath(),
            exchange.getRequestHeaders().getFirst("authorization"),
            body));
    if (status == DROP) {
      exchange.close();
      return;
    }
    byte[] answer =
        (status == 200
                ? "{\"adjustmentId\":\"" + body.path("adjustmentId").asText() + "\"}"
                : "{\"error\":{\"type\":\"stub\",\"message\":\"scripted " + status + "\"}}")
            .getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("content-type", "application/json");
    exchange.sendResponseHeaders(status, answer.length);
    exchange.getResponseBody().write(answer);
    exchange.close();
  }

  private Run admin(int port, String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(List.of("--admin-token", TOKEN));
    return withEnv(port, Map.of(), all.toArray(String[]::new));
  }

  /**
   * Runs the CLI with {@code env} as its whole environment, the stub as its gateway, alice as
   * operator.
   */
  private Run withEnv(int port, Map<String, String> env, String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(
        List.of("--host", "127.0.0.1", "--port", String.valueOf(port), "--operator", "alice"));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    var cli = GatewayAdmin.commandLine(env::get);
    cli.setOut(new PrintWriter(out));
    cli.setErr(new PrintWriter(err));
    int exit = cli.execute(all.toArray(String[]::new));
    return new Run(exit, out.toString(), err.toString());
  }

  private Run admin(String... args) {
    return admin(server.getAddress().getPort(), args);
  }

  private static String[] credit(String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "credit",
                "--brand",
                "b1",
                "--usd",
                "2.50",
                "--window",
                "2026-11-29",
                "--scope",
                "refund",
                "--reason",
                "refund"));
    args.addAll(List.of(more));
    return args.toArray(String[]::new);
  }

  private static String retryLine(String id) {
    return "to retry safely, run the same command again with --id " + id;
  }

  @Test
  void creditSendsTheIdChosenWithIdAndSaysItFirst() {
    Run run = admin(credit("--id", "ticket-812:1"));

    assertEquals(0, run.exit(), run.err());
    Recorded sent = requests.get(0);
    assertEquals("/admin/brands/b1/credit", sent.path());
    assertEquals("Bearer " + TOKEN, sent.authorization());
    assertEquals("ticket-812:1", sent.body().get("adjustmentId").textValue());
    assertEquals("alice", sent.body().get("operator").textValue());
    assertEquals("adjustment id: ticket-812:1", run.err().lines().findFirst().orElseThrow());
    assertEquals("{\"adjustmentId\":\"ticket-812:1\"}", run.out().trim());
    assertFalse(run.err().contains("retry"), run.err());
  }

  @Test
  void withoutIdEachRunSendsANewIdAndPrintsIt() {
    Run first =
        admin(
            "adjust",
            "--lane",
            "free",
            "--usd",
            "0.40",
            "--window",
            "2026-11",
            "--scope",
            "refund",
            "--reason",
            "missed invoice line");
    Run second =
        admin(
            "adjust",
            "--lane",
            "free",
            "--usd",
            "0.40",
            "--window",
            "2026-11",
            "--scope",
            "refund",
            "--reason",
            "missed invoice line");

    assertEquals(0, first.exit(), first.err());
    String id = requests.get(0).body().get("adjustmentId").textValue();
    assertTrue(id.matches("adj-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"), id);
    assertEquals("/admin/adjustments", requests.get(0).path());
    assertEquals("adjustment id: " + id, first.err().trim());
    assertNotEquals(id, requests.get(1).body().get("adjustmentId").textValue());
  }

  @ParameterizedTest(name = "the gateway answers {0}: exit {1}, says how to retry: {2}")
  @CsvSource({
    "200, 0, false",
    "400, 1, false",
    "409, 1, false",
    "500, 1, true",
    "503, 1, true",
    "-1,  2, true", // the connection drops before any answer
  })
  void whenTheOutcomeIsUnknownItSaysHowToRetryWithTheSameId(
      int answer, int exit, boolean saysHowToRetry) {
    status = answer;
    Run run = admin(credit());

    assertEquals(exit, run.exit(), run.out() + run.err());
    String sentId = requests.get(0).body().get("adjustmentId").textValue();
    assertTrue(run.err().startsWith("adjustment id: " + sentId), run.err());
    assertEquals(saysHowToRetry, run.err().contains(retryLine(sentId)), run.err());
    if (answer >= 400) {
      assertTrue(run.err().contains("HTTP " + answer + " "), run.err());
    }
  }

  @Test
  void anUnreachableGatewayGetsTheRetryLineToo() throws IOException {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    Run run =
        admin(
            closedPort,
            "adjust",
            "--lane",
            "app",
            "--brand",
            "b1",
            "--usd",
            "-1",
            "--window",
            "2026-11-29",
            "--scope",
            "grant",
            "--reason",
            "goodwill",
            "--id",
            "goodwill-7");

    assertEquals(2, run.exit(), run.err());
    assertTrue(run.err().contains("cannot reach the gateway at"), run.err());
    assertTrue(run.err().contains(retryLine("goodwill-7")), run.err());
  }

  /** Each row: a write verb with its arguments. */
  @ParameterizedTest(name = "{0} sends GATEWAY_ADMIN_TOKEN, never GATEWAY_TOKEN")
  @ValueSource(
      strings = {
        "credit --brand b1 --usd 1 --window 2026-11-29 --scope grant --reason r",
        "adjust --lane free --usd 1 --window 2026-11 --scope refund --reason r",
        "settle r-1 --usd 1 --reason r",
        "void r-1 --reason r"
      })
  void writeVerbsSendTheAdminTokenFromTheEnvironment(String verb) {
    Run run =
        withEnv(
            server.getAddress().getPort(),
            Map.of("GATEWAY_ADMIN_TOKEN", "env-admin-token", "GATEWAY_TOKEN", "env-caller-token"),
            verb.split(" "));

    assertEquals(0, run.exit(), run.err());
    assertEquals("Bearer env-admin-token", requests.get(0).authorization());
  }

  @Test
  void theAdminTokenFlagOverridesTheEnvironment() {
    Run run =
        withEnv(
            server.getAddress().getPort(),
            Map.of("GATEWAY_ADMIN_TOKEN", "env-admin-token"),
            credit("--admin-token", "flag-admin-token"));

    assertEquals(0, run.exit(), run.err());
    assertEquals("Bearer flag-admin-token", requests.get(0).authorization());
  }

  @ParameterizedTest(
      name =
          "GATEWAY_ADMIN_TOKEN [{0}] with only the caller token set: one clear line, nothing sent")
  @ValueSource(strings = {"", "   "})
  void withoutAnAdminTokenAWriteSaysSoInOneLineAndSendsNothing(String adminToken) {
    Run run =
        withEnv(
            server.getAddress().getPort(),
            Map.of("GATEWAY_TOKEN", "env-caller-token", "GATEWAY_ADMIN_TOKEN", adminToken),
            credit());

    assertEquals(2, run.exit(), run.err());
    assertEquals(
        "gateway-admin: no admin token: set GATEWAY_ADMIN_TOKEN (the operator's token, not GATEWAY_TOKEN) "
            + "or pass --admin-token",
        run.err()
            .lines()
            .filter(l -> l.startsWith("gateway-admin:"))
            .findFirst()
            .orElseThrow(() -> new AssertionError(run.err())));
    assertTrue(requests.isEmpty(), requests::toString);
  }

  @Test
  void creditSendsTheWindowAndScopeItNames() {
    Run run = admin(credit());

    assertEquals(0, run.exit(), run.err());
    assertEquals("2026-11-29", requests.get(0).body().get("window").textValue());
    assertEquals("refund", requests.get(0).body().get("scope").textValue());
  }

  @ParameterizedTest(name = "{0} without --window or --scope is a usage error and sends nothing")
  @ValueSource(
      strings = {
        "credit --brand b1 --usd 1 --scope grant --reason r",
        "credit --brand b1 --usd 1 --window 2026-11-29 --reason r",
        "adjust --lane free --usd 1 --scope refund --reason r"
      })
  void anAdjustmentMustNameItsWindowAndScope(String verb) {
    Run run = admin(verb.split(" "));

    assertEquals(2, run.exit(), run.err());
    assertTrue(requests.isEmpty(), requests::toString);
  }

  @ParameterizedTest
  @ValueSource(strings = {"credit", "adjust"})
  void helpDocumentsTheId(String verb) {
    Run run = admin(verb, "--help");
    assertEquals(0, run.exit(), run.err());
    assertTrue(run.out().contains("--id=ID"), run.out());
    assertTrue(run.out().contains("at most once"), run.out());
  }
}
