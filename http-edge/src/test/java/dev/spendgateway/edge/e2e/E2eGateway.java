package dev.spendgateway.edge.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.operator.GatewayAdmin;
import dev.spendgateway.sim.SimConfig;
import dev.spendgateway.sim.Usage;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

/**
 * The e2e suite's {@link TestGateway}: {@code e2e-test.conf} with its fake secrets (repeated here
 * so a test can check they never leak), and a simulator billing {@link #USAGE} by default.
 */
final class E2eGateway {
  /** As set in {@code e2e-test.conf}. */
  static final String TOKEN = "gw-e2e-token-7Q2x9";

  static final String OPENAI_KEY = "sk-openai-e2e-key-K4p8";
  static final String ANTHROPIC_KEY = "sk-ant-e2e-key-W3m6";

  /** What the simulator bills by default: odd numbers, so a wrong price or rounding shows. */
  static final Usage USAGE = new Usage(1234, 567, 0, 0, 0);

  private static final TestGateway.Suite SUITE =
      new TestGateway.Suite("e2e-test.conf", "e2e", SimConfig.defaults().withUsage(USAGE));

  private E2eGateway() {}

  /**
   * The smallest valid chat body for a provider route ({@code TestGateway.ANTHROPIC} or {@code
   * CHAT}) or, for any other path, the router (a profile name as the model).
   */
  static String smallChat(String path) {
    return switch (path) {
      case TestGateway.ANTHROPIC ->
          "{\"model\":\"claude-opus-5-5\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
      case TestGateway.CHAT ->
          "{\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
      default ->
          "{\"model\":\"fast-summary\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    };
  }

  /**
   * {@code gateway-admin report --by by --format csv} on {@code gw}'s journal while it runs, as an
   * operator runs it: the output's lines (the verb must succeed).
   */
  static List<String> reportCsv(TestGateway gw, String by) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int exit =
        GatewayAdmin.commandLine()
            .setOut(new PrintWriter(out))
            .setErr(new PrintWriter(err))
            .execute(
                "report", "--data-dir", gw.dataDir().toString(), "--by", by, "--format", "csv");
    assertEquals(0, exit, err.toString());
    return out.toString().lines().toList();
  }

  static TestGateway start(String name) throws Exception {
    return TestGateway.start(SUITE, name);
  }

  static TestGateway start(String name, java.util.Map<String, Object> overrides) throws Exception {
    return TestGateway.start(SUITE, name, overrides);
  }

  /** The same, reaching the simulator over HTTP/2 (h2c): {@code providers.<p>.http2} on. */
  static TestGateway startOverH2c(String name) throws Exception {
    return TestGateway.startOverH2c(SUITE, name, java.util.Map.of());
  }
}
