package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Which configurations the gateway refuses because a timer on a provider call's path is shorter
 * than what it must cover. Each row changes the shipped configuration by one or two keys.
 */
class TimeoutBudgetTest {

  /** The shipped conf with {@code overrides} ({@code key=value} pairs separated by {@code ;}). */
  private static Config shippedWith(String overrides) {
    Map<String, String> values =
        overrides.isBlank()
            ? Map.of()
            : Arrays.stream(overrides.split(";"))
                .map(kv -> kv.split("=", 2))
                .collect(Collectors.toMap(kv -> kv[0].trim(), kv -> kv[1].trim()));
    return ConfigFactory.parseMap(values).withFallback(ConfigFactory.load()).resolve();
  }

  private static TimeoutBudget budget(String overrides) {
    return TimeoutBudget.fromConfig(shippedWith(overrides)).orElseThrow();
  }

  @ParameterizedTest(name = "[{0}] → {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      ''                                                                   | starts
      pekko.http.server.idle-timeout=60s                                   | pekko.http.server.idle-timeout (60s) is shorter than providers.openai.response-start-timeout (600s)
      pekko.http.server.idle-timeout=605s                                  | pekko.http.server.idle-timeout (605s) is shorter than providers.openai.idle-timeout (610s)
      pekko.http.server.idle-timeout=infinite                              | starts
      providers.anthropic.idle-timeout=1300s                               | pekko.http.server.idle-timeout (1260s) is shorter than providers.anthropic.idle-timeout (1300s)
      pekko.http.server.request-timeout=10m                                | pekko.http.server.request-timeout (600s) must be longer than providers.openai.response-start-timeout (600s)
      pekko.http.server.request-timeout=infinite                           | starts
      providers.max-call-duration=5m                                       | providers.max-call-duration (300s) is shorter than providers.openai.response-start-timeout (600s)
      ledger.reservation-timeout=14m                                       | ledger.reservation-timeout (840s) must be >= providers.max-call-duration (780s) + providers.drain-timeout (30s) + 60s
      providers.max-call-duration=14m                                      | ledger.reservation-timeout (900s) must be >= providers.max-call-duration (840s)
      providers.drain-timeout=2m                                           | ledger.reservation-timeout (900s) must be >= providers.max-call-duration (780s) + providers.drain-timeout (120s)
      ledger.reservation-timeout=20m;providers.max-call-duration=18m       | starts
      pekko.http.server.parsing.max-content-length=25m                     | pekko.http.server.parsing.max-content-length (26214400 bytes) must be >= policy.transcription-max-file-bytes (26214400) + 65536
      pekko.http.server.parsing.max-content-length=26280000                | starts
      policy.transcription-max-file-bytes=40000000                         | pekko.http.server.parsing.max-content-length (31457280 bytes) must be >= policy.transcription-max-file-bytes (40000000)
      failover.breaker.call-timeout=60s                                    | starts
      pekko.http.server.idle-timeout=6200ms;pekko.http.server.request-timeout=6600ms;providers.openai.response-start-timeout=6s;providers.openai.idle-timeout=6100ms;providers.anthropic.response-start-timeout=6s;providers.anthropic.idle-timeout=6100ms | starts
      """)
  void aTimerShorterThanWhatItCoversIsRefusedByName(String overrides, String expected) {
    List<String> refusals = budget(overrides).refusals();
    if (expected.equals("starts")) {
      assertEquals(List.of(), refusals);
    } else {
      assertTrue(refusals.stream().anyMatch(r -> r.startsWith(expected)), refusals.toString());
    }
  }

  @Test
  void aShortBreakerIsRaisedNotRefused() {
    TimeoutBudget budget = budget("failover.breaker.call-timeout=60s");
    assertEquals(List.of(), budget.refusals());
    assertEquals(2, budget.raised().size(), budget.raised().toString());
    assertTrue(
        budget
            .raised()
            .get(0)
            .startsWith(
                "failover.breaker.call-timeout (60s) is shorter than providers.openai.response-start-timeout (600s)"));
    assertEquals(
        List.of(), budget("").raised(), "the shipped breaker covers the shipped response start");
  }

  /**
   * A routed call may start its last attempt as late as its budget allows (batch: 10 min) and that
   * attempt may then take its whole response start; the caller's connection must stay open that
   * long. The old shipped idle-timeout (620s) covered one provider call only.
   */
  @ParameterizedTest(name = "[{0}] → {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      ''                                                              | no warning
      pekko.http.server.idle-timeout=620s                             | pekko.http.server.idle-timeout (620s) is shorter than providers.openai.response-start-timeout (600s) + the longest failover.budgets.*.total-time and failover.rate-limits.max-wait (605s)
      failover.budgets.batch.total-time=30m                           | pekko.http.server.idle-timeout (1260s) is shorter than providers.openai.response-start-timeout (600s) + the longest failover.budgets.*.total-time and failover.rate-limits.max-wait (1805s)
      pekko.http.server.idle-timeout=infinite                         | no warning
      """)
  void anIdleTimeoutShorterThanARoutedChainIsWarned(String overrides, String expected) {
    List<String> warnings = budget(overrides).warnings();
    if (expected.equals("no warning")) {
      assertEquals(List.of(), warnings);
    } else {
      assertEquals(1, warnings.size(), warnings.toString());
      assertTrue(warnings.get(0).startsWith(expected), warnings.toString());
    }
  }

  @Test
  void theStartupCheckRefusesWithEveryBrokenRuleOnOneLine() {
    GatewaySettings settings =
        GatewaySettings.fromConfig(
            shippedWith(
                "gateway.token=t-1;pekko.http.server.idle-timeout=60s;ledger.reservation-timeout=10m"));
    String problem = settings.startupProblem(false).orElseThrow();
    assertTrue(
        problem.startsWith("timeouts on a provider call's path do not fit together: "), problem);
    assertTrue(problem.contains("pekko.http.server.idle-timeout (60s)"), problem);
    assertTrue(problem.contains("ledger.reservation-timeout (600s)"), problem);
    assertTrue(!problem.contains("\n"), "one line");
  }

  @Test
  void theShippedConfigurationStarts() {
    GatewaySettings shipped = GatewaySettings.fromConfig(shippedWith("gateway.token=t-1"));
    assertTrue(shipped.timeouts().isPresent(), "the whole config: the call path is checked");
    assertEquals(Optional.empty(), shipped.startupProblem(false));
    assertEquals(List.of(), shipped.startupWarnings());
  }

  @Test
  void aConfigOfTheEdgeAloneHasNoCallPathToCheck() {
    Config edgeOnly = ConfigFactory.parseResources("http.conf").resolve();
    assertEquals(Optional.empty(), TimeoutBudget.fromConfig(edgeOnly));
  }
}
