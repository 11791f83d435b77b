package dev.spendgateway.edge.capacity;

import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.sim.SimConfig;
import dev.spendgateway.sim.Usage;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.Map;

/**
 * The capacity suite's {@link TestGateway}: the shipped configuration ({@code e2e-test.conf} over
 * {@code application.conf}, so the limits under test are the shipped ones unless a test scales one
 * down), and a simulator billing a tiny usage so hundreds of calls stay far inside every cap.
 */
final class CapacityGateway {
  static final String TOKEN = "gw-e2e-token-7Q2x9";

  /** What the simulator bills each call. */
  static final Usage USAGE = new Usage(20, 10, 0, 0, 0);

  /** gpt-6.1-sol at $2 / $10 per million: 20 × 2 + 10 × 10 = 140 micro-dollars. */
  static final BigDecimal OPENAI_CALL_USD = new BigDecimal("0.000140");

  /** claude-opus-5-5 at $4 / $20 per million: 20 × 4 + 10 × 20 = 280 micro-dollars. */
  static final BigDecimal ANTHROPIC_CALL_USD = new BigDecimal("0.000280");

  private static final TestGateway.Suite SUITE =
      new TestGateway.Suite("e2e-test.conf", "capacity", SimConfig.defaults().withUsage(USAGE));

  private CapacityGateway() {}

  static TestGateway start(String name, Map<String, Object> overrides) throws Exception {
    return TestGateway.start(SUITE, name, overrides);
  }

  static String chatStream() {
    return "{\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":32,\"stream\":true,"
        + "\"messages\":[{\"role\":\"user\",\"content\":\"Write a long answer.\"}]}";
  }

  static String messagesStream() {
    return "{\"model\":\"claude-opus-5-5\",\"max_tokens\":32,\"stream\":true,"
        + "\"messages\":[{\"role\":\"user\",\"content\":\"Write a long answer.\"}]}";
  }

  /**
   * Until the simulator has {@code streams} streams waiting at their hold, at most 45 s. Held, not
   * merely open: a stream counted open may not have reached its hold yet, and a release then would
   * miss it and leave it silent for the hold's whole maximum.
   */
  static void awaitHeldUpstream(TestGateway gw, int streams) {
    Eventually.until(
        streams + " streams are held upstream at once",
        Duration.ofSeconds(45),
        () -> "held " + gw.sim.heldStreams() + ", open " + gw.sim.openStreams(),
        seen -> gw.sim.heldStreams() >= streams);
  }
}
