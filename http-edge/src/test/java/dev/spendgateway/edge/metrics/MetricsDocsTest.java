package dev.spendgateway.edge.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.sim.SimConfig;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The metric names the operator docs tell people to alert on are the names {@code /metrics} serves,
 * right after a start (before any call): an alert written from the docs must never watch a series
 * that does not exist. And every ledger counter is there at 0 from the start, so a rate sees 0, not
 * "no data".
 */
class MetricsDocsTest {
  private static final TestGateway.Suite SUITE =
      new TestGateway.Suite("e2e-test.conf", "metrics-docs", SimConfig.defaults());
  private static final String TOKEN = "gw-e2e-token-7Q2x9";

  /** Series that appear only with their first event, with the reason the docs give. */
  static final Set<String> AT_FIRST_EVENT =
      Set.of(
          // labelled by provider, model and status or cause: the combinations are open-ended
          "gateway_upstream_responses_total",
          "gateway_upstream_failures_total",
          "gateway_upstream_latency_seconds",
          "gateway_upstream_ttfb_seconds",
          "gateway_overhead_seconds",
          "gateway_open_streams",
          "gateway_edge_settled_above_reserve_total",
          "gateway_model_lifecycle_alarms_total",
          "gateway_model_circuit_open",
          "gateway_model_retired_total",
          "gateway_router_attempts_total",
          "gateway_router_failovers_total",
          "gateway_router_pool_full_total",
          "gateway_rate_limited_total",
          // labelled by provider, model, profile, kind or data class: open-ended too
          "gateway_tokens_total",
          "gateway_spend_usd_total",
          "gateway_upstream_too_many_requests_total",
          "gateway_upstream_ratelimit_limit",
          "gateway_upstream_ratelimit_remaining",
          "gateway_data_class_calls_total",
          // labelled by media model and outcome: appears with the first media job closed
          "gateway_media_spend_usd_total",
          // one per model in use (named by a profile or requested since start)
          "gateway_model_end_of_support_days");

  /**
   * Series served by cluster nodes only (this test's gateway is one process); ClusterProcessIT
   * reads them from a cluster node.
   */
  static final Set<String> CLUSTER_ONLY =
      Set.of("gateway_ledger_standby_following", "gateway_ledger_standby_row");

  private static TestGateway gateway;
  private static String metrics;

  @BeforeAll
  static void start() throws Exception {
    gateway = TestGateway.start(SUITE, "metrics-docs");
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
  void everyMetricTheDocsNameIsServedOrDocumentedAsAppearingLater() throws Exception {
    Set<String> served = families(metrics);
    Path root = Path.of("..").toAbsolutePath().normalize();
    Set<String> missing = new TreeSet<>();
    for (String doc : List.of("README.md", "docs/OPERATIONS.md", "docs/ROUTER.md")) {
      Matcher m =
          Pattern.compile("`(gateway_[a-z0-9_]+)")
              .matcher(Files.readString(root.resolve(doc), StandardCharsets.UTF_8));
      while (m.find()) {
        if (m.group(1).endsWith("_")) {
          continue; // a family prefix (gateway_ledger_*), not a name
        }
        String name = m.group(1).replaceAll("_(bucket|count|sum|max)$", "");
        if (!served.contains(name)
            && !AT_FIRST_EVENT.contains(name)
            && !CLUSTER_ONLY.contains(name)) {
          missing.add(doc + ": " + name);
        }
      }
    }
    assertEquals(Set.of(), missing, "named in the docs but not served; served: " + served);
    for (String clusterOnly : CLUSTER_ONLY) {
      assertTrue(!served.contains(clusterOnly), clusterOnly + " served by a single process");
    }
  }

  @Test
  void everyOverloadKindIsPresentAtZeroFromTheStart() {
    for (String kind : List.of("open_calls", "upstream_busy", "pool_overflow")) {
      String series = "gateway_overload_refusals_total{kind=\"" + kind + "\"} 0.0";
      assertTrue(metrics.lines().anyMatch(series::equals), series + "; served: " + metrics);
    }
  }

  @Test
  void theLedgerCountersArePresentAtZeroFromTheStart() {
    Set<String> samples =
        metrics
            .lines()
            .filter(l -> l.startsWith("gateway_ledger_") && !l.startsWith("#"))
            .map(l -> l.substring(0, l.lastIndexOf(' ')))
            .collect(Collectors.toSet());
    for (String series :
        List.of(
            "gateway_ledger_reservations_total{lane=\"app\"}",
            "gateway_ledger_reservations_total{lane=\"trial\"}",
            "gateway_ledger_refusals_total{cap=\"global_daily\",lane=\"free\"}",
            "gateway_ledger_refusals_total{cap=\"preview_lifetime\",lane=\"trial\"}",
            "gateway_ledger_refusals_total{cap=\"brand_monthly\",lane=\"app\"}",
            "gateway_ledger_closes_total{by=\"timeout\",status=\"expired\"}",
            "gateway_ledger_closes_total{by=\"operator\",status=\"voided\"}",
            "gateway_ledger_adjustments_total{lane=\"free\"}",
            "gateway_ledger_settled_above_reserve_total{lane=\"app\"}",
            "gateway_ledger_shed_total",
            "gateway_ledger_snapshots_total{outcome=\"written\"}",
            "gateway_ledger_snapshots_total{outcome=\"skipped\"}",
            "gateway_ledger_snapshots_total{outcome=\"failed\"}",
            "gateway_ledger_dropped_past_deadline_total")) {
      assertTrue(samples.contains(series), series + " at 0 from the start; served: " + samples);
    }
  }

  /** The metric families of a Prometheus text body (its {@code # TYPE} lines). */
  static Set<String> families(String body) {
    return body.lines()
        .filter(l -> l.startsWith("# TYPE "))
        .map(l -> l.split(" ")[2])
        .collect(Collectors.toSet());
  }
}
