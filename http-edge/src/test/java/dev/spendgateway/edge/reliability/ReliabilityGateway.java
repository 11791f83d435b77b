package dev.spendgateway.edge.reliability;

import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.sim.SimConfig;
import dev.spendgateway.sim.Usage;
import java.util.Map;

/**
 * The reliability suite's {@link TestGateway}: {@code reliability/reliability-test.conf} (a short
 * response-start timeout and its own fake secrets, repeated here so a test can check they never
 * leak), and a simulator billing {@link #USAGE} by default.
 */
final class ReliabilityGateway {
  /** As set in {@code reliability/reliability-test.conf}. */
  static final String TOKEN = "gw-rel-token-5Tz81";

  static final String OPENAI_KEY = "sk-openai-rel-key-Q7n2";
  static final String ANTHROPIC_KEY = "sk-ant-rel-key-J9d4";

  /**
   * What the simulator bills by default: odd numbers, so a wrong price or rounding shows, and small
   * enough to stay under the worst case of the suite's short bodies (so "actual" and "worst case"
   * differ in every row).
   */
  static final Usage USAGE = new Usage(11, 57, 0, 0, 1);

  private static final TestGateway.Suite SUITE =
      new TestGateway.Suite(
          "reliability/reliability-test.conf", "rel", SimConfig.defaults().withUsage(USAGE));

  private ReliabilityGateway() {}

  static TestGateway start(String name) throws Exception {
    return TestGateway.start(SUITE, name);
  }

  /** {@code overrides} win over everything, e.g. a provider base URL nobody listens on. */
  static TestGateway start(String name, Map<String, Object> overrides) throws Exception {
    return TestGateway.start(SUITE, name, overrides);
  }

  /** The same, reaching the simulator over HTTP/2 (h2c): {@code providers.<p>.http2} on. */
  static TestGateway startOverH2c(String name) throws Exception {
    return TestGateway.startOverH2c(SUITE, name, Map.of());
  }
}
