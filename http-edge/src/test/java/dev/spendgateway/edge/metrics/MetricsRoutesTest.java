package dev.spendgateway.edge.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.edge.GatewayRoutes;
import dev.spendgateway.edge.auth.GatewayAuth;
import dev.spendgateway.edge.call.CallMetrics;
import dev.spendgateway.edge.ledger.LedgerRoutes;
import dev.spendgateway.edge.testkit.RouteTestKit;
import dev.spendgateway.ledger.Ledger;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.policy.caps.CapWindows;
import dev.spendgateway.policy.catalog.ModelCatalog;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.AdmissionPools;
import dev.spendgateway.upstream.failover.ModelCircuits;
import dev.spendgateway.upstream.failover.Pool;
import dev.spendgateway.upstream.failover.ProviderBreakers;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.testkit.TestRoute;
import org.apache.pekko.http.javadsl.testkit.TestRouteResult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * {@code GET /metrics} behind the token, against a real ledger (in-memory H2) wired with the
 * Micrometer observer: the body parses as Prometheus text and the key series move after a few
 * ledger calls and call-metrics reports. The routes run in memory through Pekko HTTP's route
 * testkit: nothing here is about the connection.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MetricsRoutesTest {
  private static final String TOKEN = "metrics-test-token";
  private ActorSystem<Void> system;
  private TestRoute routes;
  private GatewayMetrics metrics;
  private LedgerClient client;

  @BeforeAll
  void start() throws Exception {
    Config config =
        ConfigFactory.parseResources(MetricsRoutesTest.class, "metrics-routes-test.conf")
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    system = ActorSystem.create(Behaviors.empty(), "metrics-routes-test", config);
    LedgerSettings settings = LedgerSettings.fromConfig(config);
    metrics = new GatewayMetrics();
    client =
        LedgerClient.of(
            system,
            Ledger.spawn(system, settings, Clock.systemUTC(), metrics.ledgerObserver()),
            settings);
    client.awaitReady().toCompletableFuture().get(30, TimeUnit.SECONDS);
    ModelCatalog catalog = ModelCatalog.fromMap(Map.of());
    metrics
        .withLedger(client)
        .withFailover(Optional.empty(), Optional.empty(), Optional.empty(), Optional.of(catalog));
    var route =
        GatewayRoutes.compose(
            new GatewayAuth(TOKEN),
            List.of(),
            List.of(),
            List.of(
                new LedgerRoutes(client, new ObjectMapper(), 20, Duration.ofSeconds(30)).route(),
                new MetricsRoutes(metrics).route()));
    routes = new RouteTestKit(system).testRoute(route);
  }

  @AfterAll
  void stop() throws Exception {
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  /** A route's answer: status, content type and body. */
  private record Answer(int status, String contentType, String body) {}

  private Answer send(String method, String path, String body, boolean withToken) {
    HttpRequest request =
        HttpRequest.create(path)
            .withMethod(HttpMethods.lookup(method).orElseThrow())
            .withEntity(
                HttpEntities.create(ContentTypes.APPLICATION_JSON, body == null ? "" : body));
    if (withToken) {
      request = request.addHeader(RawHeader.create("authorization", "Bearer " + TOKEN));
    }
    TestRouteResult answered = routes.run(request);
    return new Answer(
        answered.response().status().intValue(),
        answered.response().entity().getContentType().toString(),
        answered.entityString());
  }

  private Map<String, Double> scrape() throws Exception {
    Answer response = send("GET", "/metrics", null, true);
    assertEquals(200, response.status());
    assertEquals("text/plain; version=0.0.4; charset=UTF-8", response.contentType());
    return PrometheusText.parse(response.body());
  }

  private static double value(Map<String, Double> samples, String key) {
    return samples.getOrDefault(key, 0.0);
  }

  private void reserve(String id, String amount) throws Exception {
    send(
        "POST",
        "/ledger/reservations",
        "{\"id\":\""
            + id
            + "\",\"lane\":\"app\",\"brand\":\"m1\",\"amountUsd\":"
            + amount
            + ",\"brandDailyUsd\":1,\"brandMonthlyUsd\":10}",
        true);
  }

  @Test
  void needsTheToken() throws Exception {
    assertEquals(401, send("GET", "/metrics", null, false).status());
  }

  @Test
  void parsesAsPrometheusTextAndTheLedgerSeriesMove() throws Exception {
    Map<String, Double> before = scrape();
    assertTrue(before.containsKey("gateway_ledger_recovery_seconds"), before.keySet().toString());
    // Load-shedding counters exist at 0 before anything was shed, so an alert never sees "no data".
    assertEquals(0.0, value(before, "gateway_ledger_dropped_past_deadline_total"));
    assertEquals(0.0, value(before, "gateway_ledger_shed_total"));

    // A provider call's reservation, settled above its reserve as only the provider routes may.
    String providerCall = dev.spendgateway.ledger.Reservation.Owner.newGatewayId();
    client
        .reserve(
            new dev.spendgateway.ledger.ReserveRequest(
                providerCall,
                dev.spendgateway.policy.access.Lane.APP,
                "m1",
                300_000,
                1_000_000,
                10_000_000))
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
    reserve("m-2", "0.20");
    reserve("m-3", "0.10");
    reserve("m-big", "0.90"); // refused: brand daily cap of $1
    client
        .settle(providerCall, 350_000)
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS); // above its reserve
    send("POST", "/ledger/reservations/m-2/settle", "{\"actualUsd\":0.05}", true);
    send("POST", "/ledger/reservations/m-3/void", null, true);

    Map<String, Double> after = scrape();
    assertEquals(
        3.0,
        value(after, "gateway_ledger_reservations_total{lane=\"app\"}")
            - value(before, "gateway_ledger_reservations_total{lane=\"app\"}"));
    assertEquals(
        1.0, value(after, "gateway_ledger_refusals_total{cap=\"brand_daily\",lane=\"app\"}"));
    assertEquals(
        2.0, value(after, "gateway_ledger_closes_total{by=\"caller\",status=\"settled\"}"));
    assertEquals(1.0, value(after, "gateway_ledger_closes_total{by=\"caller\",status=\"voided\"}"));
    assertEquals(1.0, value(after, "gateway_ledger_settled_above_reserve_total{lane=\"app\"}"));
    assertEquals(
        0.05, value(after, "gateway_ledger_settled_above_reserve_usd_total{lane=\"app\"}"), 1e-9);
    assertTrue(value(after, "gateway_ledger_journal_batch_events_count") >= 1);
    assertTrue(value(after, "gateway_ledger_journal_write_seconds_count") >= 1);
    assertTrue(after.containsKey("gateway_ledger_journal_write_seconds_bucket{le=\"+Inf\"}"));

    String today = CapWindows.dayKey(Instant.now());
    String m1Daily = "{cap=\"brand_daily\",subject=\"m1\",window=\"" + today + "\"}";
    // Per-brand series are off by default (every brand would be a label value for ever)...
    assertFalse(after.containsKey("gateway_cap_spent_usd" + m1Daily), after.keySet().toString());
    // ...and on for the biggest spenders when asked for.
    Map<String, Double> top =
        PrometheusText.parse(
            new GatewayMetrics()
                .withLedger(client, 5)
                .scrape()
                .toCompletableFuture()
                .get(10, java.util.concurrent.TimeUnit.SECONDS));
    assertEquals(0.40, value(top, "gateway_cap_spent_usd" + m1Daily), 1e-9);
    assertEquals(0.60, value(top, "gateway_cap_remaining_usd" + m1Daily), 1e-9);
    assertEquals(
        40.0,
        value(
            after,
            "gateway_cap_limit_usd{cap=\"global_daily\",subject=\"\",window=\"" + today + "\"}"),
        1e-9);
    assertEquals(0.0, value(after, "gateway_ledger_open_reservations"));
    // The windows' dates are UTC's here (ledger.window-zone's default), and the series says so.
    assertEquals(1.0, value(after, "gateway_ledger_window_zone{zone=\"UTC\"}"), 1e-9);
  }

  @Test
  void aClusterNodesStandbyIsAGaugeAtZeroUntilItFollowsTheJournal() throws Exception {
    // No standby runs in this process (it is not a cluster node): both gauges read 0.
    Map<String, Double> scraped =
        PrometheusText.parse(
            new GatewayMetrics()
                .withStandby(
                    dev.spendgateway.ledger.cluster.LedgerStandby.get(
                        org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(system)))
                .scrape()
                .toCompletableFuture()
                .get(10, TimeUnit.SECONDS));
    assertEquals(0.0, value(scraped, "gateway_ledger_standby_following"));
    assertEquals(0.0, value(scraped, "gateway_ledger_standby_row"));
  }

  @Test
  void callMetricsShowUpByProviderAndModel() throws Exception {
    CallMetrics calls = metrics.calls();
    calls.upstreamStatus("openai", "gpt-4o-mini", "", 200);
    calls.upstreamStatus("openai", "gpt-4o-mini", "", 429);
    calls.upstreamStatus("openai", "gpt-4o-mini", "", 429);
    calls.upstreamStatus("openai", "gpt-4o-mini", "fast-summary", 429);
    calls.upstreamLatency("openai", "gpt-4o-mini", "", Duration.ofMillis(300));
    calls.timeToFirstByte("openai", "gpt-4o-mini", "", Duration.ofMillis(80));
    calls.gatewayOverhead("chat", Duration.ofMillis(2));
    calls.streamOpened("anthropic");
    calls.streamOpened("anthropic");
    calls.streamClosed("anthropic");
    calls.modelLifecycleAlarm("claude-2", "retired");

    Map<String, Double> s = scrape();
    assertEquals(
        2.0,
        value(
            s,
            "gateway_upstream_responses_total{model=\"gpt-4o-mini\",profile=\"\",provider=\"openai\",status=\"429\"}"));
    assertEquals(
        1.0,
        value(
            s,
            "gateway_upstream_responses_total{model=\"gpt-4o-mini\",profile=\"fast-summary\",provider=\"openai\",status=\"429\"}"));
    assertEquals(
        1.0,
        value(
            s,
            "gateway_upstream_latency_seconds_count{model=\"gpt-4o-mini\",profile=\"\",provider=\"openai\"}"));
    assertEquals(
        1.0,
        value(
            s,
            "gateway_upstream_ttfb_seconds_bucket{le=\"0.1\",model=\"gpt-4o-mini\",profile=\"\",provider=\"openai\"}"));
    assertEquals(1.0, value(s, "gateway_overhead_seconds_count{route=\"chat\"}"));
    assertEquals(1.0, value(s, "gateway_open_streams{provider=\"anthropic\"}"));
    assertEquals(
        1.0,
        value(s, "gateway_model_lifecycle_alarms_total{lifecycle=\"retired\",model=\"claude-2\"}"));
  }

  @Test
  void queueCircuitAndModelGaugesAreReadAtScrapeTime() throws Exception {
    var limits =
        new AdmissionPools.PoolLimits(4, Map.of(Provider.OPENAI, 1, Provider.ANTHROPIC, 1));
    AdmissionPools pools =
        new AdmissionPools(
            new AdmissionPools.Settings(
                Map.of(Pool.INTERACTIVE, limits, Pool.BATCH, limits),
                Duration.ofSeconds(1),
                Duration.ofSeconds(10)),
            System::nanoTime);
    ProviderBreakers breakers =
        new ProviderBreakers(
            org.apache.pekko.actor.typed.javadsl.Adapter.toClassic(system).scheduler(),
            new ProviderBreakers.Settings(
                1, Duration.ofSeconds(10), Duration.ofMinutes(1), Duration.ofMinutes(5)),
            (provider, state) -> {});
    ModelCircuits circuits = new ModelCircuits(Optional.empty(), System::nanoTime, model -> {});
    ModelCatalog catalog =
        ModelCatalog.fromMap(
            ConfigFactory.parseResources("models-metrics-test.conf")
                .resolve()
                .getConfig("models")
                .root()
                .unwrapped());
    GatewayMetrics own = new GatewayMetrics().withFailover(pools, breakers, circuits, catalog);

    var held =
        pools
            .admit(Pool.INTERACTIVE, Provider.OPENAI)
            .toCompletableFuture()
            .get(1, TimeUnit.SECONDS);
    pools.admit(Pool.INTERACTIVE, Provider.OPENAI); // waits behind the held slot
    breakers.onFailure(Provider.ANTHROPIC); // max-failures 1: opens
    circuits.onModelGone("gpt-old");

    Map<String, Double> s =
        PrometheusText.parse(own.scrape().toCompletableFuture().get(5, TimeUnit.SECONDS));
    assertEquals(1.0, value(s, "gateway_pool_in_flight{pool=\"interactive\",provider=\"openai\"}"));
    assertEquals(1.0, value(s, "gateway_queue_depth{pool=\"interactive\",provider=\"openai\"}"));
    assertTrue(
        s.containsKey(
            "gateway_queue_oldest_wait_seconds{pool=\"interactive\",provider=\"openai\"}"));
    assertEquals(2.0, value(s, "gateway_circuit_state{provider=\"anthropic\"}"));
    assertEquals(0.0, value(s, "gateway_circuit_state{provider=\"openai\"}"));
    assertEquals(1.0, value(s, "gateway_model_circuit_open{model=\"gpt-old\"}"));
    assertEquals(
        1.0,
        value(
            s,
            "gateway_model_lifecycle{lifecycle=\"retired\",model=\"old-model\",provider=\"openai\"}"));
    held.close();
  }

  @Test
  void routerEventsAreCountedUnderTheRoutersSeriesNames() throws Exception {
    MicrometerRouterListener listener =
        new MicrometerRouterListener(metrics.registry(), metrics.calls());
    listener.attempt(Provider.OPENAI, "default-chat", "ok");
    listener.failover("default-chat", Provider.ANTHROPIC);
    listener.poolFull(Pool.BATCH, Provider.OPENAI, "default-chat");
    listener.modelRetired("gpt-gone");
    listener.modelDeprecated("default-chat", "gpt-6-sol", Optional.of(90L));

    Map<String, Double> s = scrape();
    assertEquals(
        1.0,
        value(
            s,
            "gateway_router_attempts_total{outcome=\"ok\",profile=\"default-chat\",provider=\"openai\"}"));
    assertEquals(
        1.0, value(s, "gateway_router_failovers_total{profile=\"default-chat\",to=\"anthropic\"}"));
    assertEquals(
        1.0,
        value(
            s,
            "gateway_router_pool_full_total{pool=\"batch\",profile=\"default-chat\",provider=\"openai\"}"));
    assertEquals(1.0, value(s, "gateway_model_retired_total{model=\"gpt-gone\"}"));
    assertEquals(
        1.0,
        value(s, "gateway_model_lifecycle_alarms_total{lifecycle=\"gone\",model=\"gpt-gone\"}"));
    assertEquals(
        90.0,
        value(
            s, "gateway_model_end_of_support_days{model=\"gpt-6-sol\",profile=\"default-chat\"}"));
  }

  @Test
  void theParserRejectsWhatPrometheusWouldReject() {
    assertFalse(PrometheusText.parse("a_total 1\n").isEmpty());
    for (String bad : List.of("a b\n", "a{x=1} 2\n", "1a 2\n", "a{x=\"1\" 2\n")) {
      try {
        PrometheusText.parse(bad);
        throw new AssertionError("accepted " + bad);
      } catch (IllegalArgumentException expected) {
        // rejected, as it should be
      }
    }
  }
}
