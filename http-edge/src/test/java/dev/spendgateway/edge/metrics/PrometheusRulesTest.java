package dev.spendgateway.edge.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.sim.SimConfig;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Prometheus alert rules shipped in {@code conf/prometheus/} pass their own {@code promtool
 * test rules} cases, and every metric they name is one the gateway's {@code /metrics} serves (right
 * after a start, or documented in {@link MetricsDocsTest} as appearing with its first event), with
 * the labels the rules group by: a renamed metric breaks this test, not an operator's alerting.
 *
 * <p>Needs {@code promtool} (Debian's {@code prometheus} package, which {@code bin/test} installs):
 * absent, the test fails saying so rather than passing without checking anything.
 */
class PrometheusRulesTest {
  private static final TestGateway.Suite SUITE =
      new TestGateway.Suite("e2e-test.conf", "prometheus-rules", SimConfig.defaults());
  private static final String TOKEN = "gw-e2e-token-7Q2x9";
  private static final Path RULES_DIR =
      Path.of("..").toAbsolutePath().normalize().resolve("conf/prometheus");
  private static final Path RULES = RULES_DIR.resolve("gateway-alerts.yml");

  private static TestGateway gateway;
  private static String metrics;

  @BeforeAll
  static void start() throws Exception {
    gateway = TestGateway.start(SUITE, "prometheus-rules");
    HttpResponse<String> r =
        gateway.send(gateway.get("/metrics").header("x-api-key", TOKEN).build());
    assertEquals(200, r.statusCode(), r.body());
    metrics = r.body();
  }

  @AfterAll
  static void stop() throws Exception {
    gateway.close();
  }

  @Test
  void theRulesPassTheirPromtoolTests() throws Exception {
    String promtool = promtool();
    run(List.of(promtool, "check", "rules", RULES.toString()));
    run(
        List.of(
            promtool, "test", "rules", RULES_DIR.resolve("gateway-alerts.test.yml").toString()));
  }

  @Test
  void everyMetricTheRulesNameIsOneTheGatewayServes() throws IOException {
    Set<String> served = MetricsDocsTest.families(metrics);
    Set<String> unknown = new TreeSet<>();
    for (String name : metricNames(Files.readString(RULES, StandardCharsets.UTF_8))) {
      if (!served.contains(name)
          && !MetricsDocsTest.AT_FIRST_EVENT.contains(name)
          && !MetricsDocsTest.CLUSTER_ONLY.contains(name)) {
        unknown.add(name);
      }
    }
    assertEquals(Set.of(), unknown, "named by the rules but not served; served: " + served);
  }

  @Test
  void theCapSeriesCarryTheLabelsTheRulesJoinOn() {
    // The budget rules divide spent by limit on (cap, subject, window): both must carry them.
    for (String family : List.of("gateway_cap_spent_usd", "gateway_cap_limit_usd")) {
      List<String> samples = metrics.lines().filter(l -> l.startsWith(family + "{")).toList();
      assertTrue(!samples.isEmpty(), family + " served at start; served: " + metrics);
      for (String sample : samples) {
        for (String label : List.of("cap=", "subject=", "window=")) {
          assertTrue(sample.contains(label), sample + " lacks " + label);
        }
      }
    }
  }

  /** The {@code gateway_*} metric names in the rules' expressions (recording-rule names aside). */
  private static Set<String> metricNames(String rules) {
    Set<String> names = new TreeSet<>();
    Matcher m = Pattern.compile("\\b(gateway_[a-z0-9_]+)").matcher(rules);
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }

  /** promtool on the PATH or where Debian's package puts it; a clear failure when absent. */
  private static String promtool() {
    List<Path> candidates = new ArrayList<>();
    candidates.add(Path.of("/usr/bin/promtool"));
    String path = System.getenv("PATH");
    if (path != null) {
      Stream.of(path.split(java.io.File.pathSeparator))
          .map(dir -> Path.of(dir, "promtool"))
          .forEach(candidates::add);
    }
    return candidates.stream()
        .filter(Files::isExecutable)
        .findFirst()
        .map(Path::toString)
        .orElseGet(
            () ->
                fail(
                    "promtool not found (on PATH or /usr/bin): install Debian's prometheus package"
                        + " (bin/test does: apt-get install -y prometheus)"));
  }

  private static void run(List<String> command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), String.join(" ", command) + " did not finish");
    assertEquals(0, p.exitValue(), String.join(" ", command) + ":\n" + out);
  }
}
