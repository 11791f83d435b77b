package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The bad-configuration matrix: each row is one mistake an operator makes, and the gateway must
 * refuse it before anything starts or binds — the exit code, exactly one line on stderr, that line
 * naming the key (or the option) and its value, nothing on stdout, and never a token.
 */
class StartupMatrixTest {
  @TempDir static Path temp;

  /** A port some other program listens on. */
  private static ServerSocket busy;

  @BeforeAll
  static void occupyAPort() throws IOException {
    busy = new ServerSocket();
    busy.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
  }

  @AfterAll
  static void releaseThePort() throws IOException {
    busy.close();
  }

  /** What an operator set (as JAVA_OPTS -D keys would), the arguments, and what must come back. */
  record Row(
      String mistake,
      List<String> args,
      Map<String, Object> settings,
      int exit,
      List<String> lineMentions) {
    @Override
    public String toString() {
      return mistake;
    }
  }

  static Stream<Arguments> mistakes() throws IOException {
    Path aFile = Files.writeString(temp.resolve("a-file"), "not a directory");
    return Stream.of(
        row(
            "an unknown option",
            List.of("--demo", "--bogus"),
            Map.of(),
            2,
            "unknown option '--bogus'"),
        row(
            "the port as an option",
            List.of("--port", "9000"),
            Map.of(),
            2,
            "unknown option '--port'",
            "GATEWAY_PORT"),
        row("a stray argument", List.of("demo"), Map.of(), 2, "unknown argument 'demo'"),
        row(
            "no caller token",
            List.of(),
            Map.of("gateway.token", ""),
            2,
            "GATEWAY_TOKEN is not set"),
        row(
            "admin token equal to the caller token",
            List.of(),
            Map.of("gateway.admin-token", "tok-1"),
            2,
            "GATEWAY_ADMIN_TOKEN equals GATEWAY_TOKEN"),
        row(
            "a cap that is not a number",
            List.of(),
            Map.of("ledger.caps.global-daily-usd", "lots"),
            2,
            "ledger.caps.global-daily-usd",
            "\"lots\""),
        row(
            "a port that is not a number",
            List.of(),
            Map.of("gateway.port", "abc"),
            2,
            "gateway.port",
            "\"abc\""),
        row(
            "a duration that is not one",
            List.of(),
            Map.of("gateway.shutdown-drain", "soon"),
            2,
            "gateway.shutdown-drain",
            "soon"),
        row(
            "HTTP/2 with prior knowledge to an https provider",
            List.of(),
            Map.of("providers.openai.http2", "prior-knowledge"),
            2,
            "openai.http2",
            "prior-knowledge"),
        row(
            "an HTTP/2 mode that does not exist",
            List.of(),
            Map.of("providers.anthropic.http2", "h2"),
            2,
            "anthropic.http2",
            "'h2'"),
        row(
            "a profile's fallback missing from the catalog",
            List.of(),
            Map.of("profiles.fast-summary.fallback", "claude-nope"),
            2,
            "fast-summary",
            "claude-nope"),
        row(
            "a reservation that expires before its call ends",
            List.of(),
            Map.of("ledger.reservation-timeout", "2m"),
            2,
            "ledger.reservation-timeout"),
        row(
            "a ledger queue shorter than a batch",
            List.of(),
            Map.of("ledger.max-queued-commands", "1"),
            2,
            "ledger.max-queued-commands"),
        row(
            "a policy limit out of range",
            List.of(),
            Map.of("policy.max-messages", "-1"),
            2,
            "policy"),
        row(
            "a data dir that cannot be a directory",
            List.of(),
            Map.of("gateway.data-dir", aFile.resolve("data").toString()),
            2,
            "data dir",
            aFile.toString()),
        row(
            "a port another program holds",
            List.of(),
            Map.of("gateway.port", busy.getLocalPort()),
            2,
            "cannot listen on 127.0.0.1:" + busy.getLocalPort()),
        row(
            "an HTTP/2 port another program holds",
            List.of(),
            Map.of("gateway.http2-port", busy.getLocalPort()),
            2,
            "cannot listen on 127.0.0.1:" + busy.getLocalPort(),
            "gateway.http2-port"),
        row(
            "a host that does not exist",
            List.of(),
            Map.of("gateway.host", "no-such-host.invalid"),
            2,
            "no-such-host.invalid",
            "GATEWAY_HOST"),
        row(
            "an open-call limit that is not a number",
            List.of(),
            Map.of("gateway.max-open-calls", "abc"),
            2,
            "gateway.max-open-calls",
            "\"abc\"",
            "from settings",
            "fix it"),
        row(
            "an open-call limit below one (every provider call would get 503)",
            List.of(),
            Map.of("gateway.max-open-calls", -1),
            2,
            "gateway.max-open-calls must be a whole number from 1",
            "is -1",
            "from settings"),
        row(
            "a body-memory share over the whole heap",
            List.of(),
            Map.of("gateway.body-memory-share", 2),
            2,
            "gateway.body-memory-share must be > 0 and <= 1",
            "is 2",
            "from settings"),
        row(
            "a negative cap",
            List.of(),
            Map.of("ledger.caps.free-daily-usd", "-1"),
            2,
            "ledger.caps.free-daily-usd must not be negative",
            "\"-1\"",
            "from settings"),
        row(
            "an ops list of no brands",
            List.of(),
            Map.of("ops.top-brands", 0),
            2,
            "ops.top-brands",
            "is 0"),
        row(
            "a window zone that is not one",
            List.of(),
            Map.of("ledger.window-zone", "Europe/Berlni"),
            2,
            "ledger.window-zone must be an IANA zone id",
            "\"Europe/Berlni\""),
        row(
            "a zero failure window",
            List.of(),
            Map.of("ops.failure-window", "0s"),
            2,
            "ops.failure-window must be a duration longer than 0"),
        row(
            "the check finds the same",
            List.of("--check"),
            Map.of("ledger.caps.free-daily-usd", "three"),
            2,
            "ledger.caps.free-daily-usd"));
  }

  private static Arguments row(
      String mistake,
      List<String> args,
      Map<String, Object> settings,
      int exit,
      String... mentions) {
    return Arguments.of(new Row(mistake, args, settings, exit, List.of(mentions)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("mistakes")
  void aMistakeIsOneLineAndANonZeroExit(Row row) {
    Map<String, Object> settings = valid();
    settings.putAll(row.settings());
    Result result = run(row.args(), settings);
    assertEquals(row.exit(), result.exit(), result.err());
    List<String> lines = result.err().lines().toList();
    assertEquals(1, lines.size(), "one line: " + result.err());
    String line = lines.get(0);
    assertTrue(line.startsWith("gateway: "), line);
    for (String mention : row.lineMentions()) {
      assertTrue(line.contains(mention), "names " + mention + ": " + line);
    }
    assertFalse(line.contains("tok-1"), "never a token: " + line);
    assertFalse(line.contains("Exception in thread"), line);
    assertEquals("", result.out());
  }

  /** --check and the start share one validation: a value one refuses, the other refuses alike. */
  @ParameterizedTest(name = "{0}")
  @MethodSource("mistakes")
  void theCheckRefusesWhatTheStartRefuses(Row row) {
    if (!row.args().isEmpty() || row.settings().isEmpty() || row.mistake().contains("token")) {
      return; // usage mistakes, and the token, which the check only mentions (below)
    }
    Map<String, Object> settings = valid();
    settings.putAll(row.settings());
    Result start = run(List.of(), settings);
    Result check = run(List.of("--check"), settings);
    assertEquals(start.exit(), check.exit(), check.err());
    assertEquals(start.err(), check.err());
  }

  /**
   * The check is about the configuration: it runs before the token is exported (OPERATIONS.md's
   * first steps) and says that the start needs it; the start still refuses without it.
   */
  @Test
  void theCheckWorksWithoutTheTokenAndSaysTheStartNeedsIt() {
    Map<String, Object> settings = valid();
    settings.put("gateway.token", "");
    Result check = run(List.of("--check"), settings);
    assertEquals(0, check.exit(), check.err());
    assertTrue(check.out().contains("gateway: configuration OK"), check.out());
    assertTrue(check.out().contains("GATEWAY_TOKEN is not set"), check.out());
    assertEquals(2, run(List.of(), settings).exit());
  }

  @Test
  void aValidConfigurationPassesTheCheck() throws IOException {
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    Map<String, Object> settings = valid();
    settings.put("gateway.port", port);
    Result result = run(List.of("--check"), settings);
    assertEquals(0, result.exit(), result.err());
    assertTrue(result.out().startsWith("gateway: configuration OK"), result.out());
    assertTrue(
        result.out().contains(temp.resolve("data").toString()),
        "names the absolute data dir: " + result.out());
  }

  @Test
  void aRetiredProfileModelIsReportedAtStartNotRefused() {
    Map<String, Object> settings = valid();
    settings.put(
        "profiles.fast-summary.primary", "gpt-4.1"); // lifecycle = retired in conf/models.conf
    Result result = run(List.of("--check"), settings);
    assertEquals(0, result.exit(), result.err());
    assertTrue(
        result
            .out()
            .contains(
                "gateway: warning: profile 'fast-summary' primary model 'gpt-4.1' is retired"),
        result.out());
  }

  @Test
  void aRelativeDataDirIsMadeAbsolute() {
    Map<String, Object> settings = valid();
    settings.put("gateway.data-dir", "relative/data");
    settings.put("gateway.port", 0);
    Result result = run(List.of("--check"), settings);
    assertEquals(0, result.exit(), result.err());
    String absolute = Path.of("relative/data").toAbsolutePath().toString();
    assertTrue(result.out().contains("data dir " + absolute), result.out());
  }

  @Test
  void helpAndVersionExitZero() {
    Result help = run(List.of("--help"), valid());
    assertEquals(0, help.exit());
    assertTrue(help.out().contains("--check") && help.out().contains("Exit codes"), help.out());
    Result version = run(List.of("--version"), valid());
    assertEquals(0, version.exit());
    assertTrue(version.out().startsWith("spend gateway "), version.out());
  }

  private static Map<String, Object> valid() {
    Map<String, Object> settings = new HashMap<>();
    settings.put("gateway.token", "tok-1");
    settings.put("gateway.data-dir", temp.resolve("data").toString());
    settings.put("gateway.port", 0);
    return settings;
  }

  record Result(int exit, String out, String err) {}

  private static Result run(List<String> args, Map<String, Object> settings) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int exit =
        GatewayMain.run(
            args.toArray(String[]::new),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8),
            settings);
    return new Result(
        exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }
}
