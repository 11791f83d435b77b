package dev.spendgateway.edge.e2e;

import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.sim.SimConfig;
import dev.spendgateway.sim.Usage;

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

  static TestGateway start(String name) throws Exception {
    return TestGateway.start(SUITE, name);
  }

  static TestGateway start(String name, java.util.Map<String, Object> overrides) throws Exception {
    return TestGateway.start(SUITE, name, overrides);
  }
}
