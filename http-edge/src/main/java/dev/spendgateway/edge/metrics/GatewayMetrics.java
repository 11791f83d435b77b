package dev.spendgateway.edge.metrics;

import dev.spendgateway.edge.call.CallMetrics;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerObserver;
import dev.spendgateway.ledger.cluster.LedgerStandby;
import dev.spendgateway.policy.catalog.ModelCatalog;
import dev.spendgateway.upstream.failover.AdmissionPools;
import dev.spendgateway.upstream.failover.ModelCircuits;
import dev.spendgateway.upstream.failover.ProviderBreakers;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * The gateway's one Prometheus registry and what feeds it: the ledger observer (durable writes),
 * the call metrics (provider routes and router), the media job metrics, and the gauges read at
 * scrape time (ledger usage, open media jobs, admission pools, breakers, model circuits, catalog
 * lifecycle). Built in two steps because the ledger observer is needed before the ledger exists and
 * the usage gauges need the ledger.
 */
public final class GatewayMetrics {
  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final MicrometerLedgerObserver ledgerObserver = new MicrometerLedgerObserver(registry);
  private final MicrometerCallMetrics calls = new MicrometerCallMetrics(registry);
  private volatile LedgerUsageGauges usage;
  private volatile FailoverGauges failover;
  private volatile MicrometerMediaMetrics media;

  public PrometheusMeterRegistry registry() {
    return registry;
  }

  /** Pass to {@code Ledger.spawn}. */
  public LedgerObserver ledgerObserver() {
    return ledgerObserver;
  }

  /** Pass to the provider routes and the router. */
  public CallMetrics calls() {
    return calls;
  }

  /** The workflow tags the spend metric names; any other tag counts as {@code other}. */
  public GatewayMetrics withSpendTags(SpendTagLabels labels) {
    calls.tagLabels(labels);
    return this;
  }

  /** Tells {@code breakdown} (the operations screen's) what each call was closed at. */
  public GatewayMetrics withSpendBreakdown(dev.spendgateway.edge.ops.SpendBreakdown breakdown) {
    calls.breakdown(breakdown);
    return this;
  }

  /** Spend, reserved and remaining per cap window from the running ledger, read at each scrape. */
  public GatewayMetrics withLedger(LedgerClient ledger) {
    return withLedger(ledger, 0);
  }

  /** As above, with per-subject series for the {@code subjectSeries} biggest spenders (0: none). */
  public GatewayMetrics withLedger(LedgerClient ledger, int subjectSeries) {
    this.usage = new LedgerUsageGauges(ledger, registry, subjectSeries);
    return this;
  }

  /**
   * Media jobs: the open ones and what they hold (from {@code ledger} at each scrape), what this
   * node settled them at, and the 429s; the returned listener goes to the media routes.
   */
  public MicrometerMediaMetrics withMedia(LedgerClient ledger) {
    MicrometerMediaMetrics m = new MicrometerMediaMetrics(registry, ledger);
    this.media = m;
    return m;
  }

  /**
   * A cluster node's warm standby of the ledger ({@code gateway.cluster.standby}): whether it
   * follows the journal now, and the journal row it has folded to. On the node holding the ledger
   * both are 0; on every other node {@code following} 0 for longer than a start means a take-over
   * by that node would replay the books (its log says why).
   */
  public GatewayMetrics withStandby(LedgerStandby standby) {
    Gauge.builder("gateway.ledger.standby.following", standby, s -> s.following() ? 1 : 0)
        .description("1 while this node's warm standby of the ledger follows the journal")
        .register(registry);
    Gauge.builder("gateway.ledger.standby.row", standby, LedgerStandby::position)
        .description("Journal row this node's warm standby has folded to (0: none runs)")
        .register(registry);
    return this;
  }

  /**
   * Queue depth/age, circuit states and model lifecycle gauges; each source optional. With the
   * failover router: {@code withFailover(Optional.of(router::laneStats),
   * Optional.of(router.breakers()), Optional.of(router.modelCircuits()), Optional.of(catalog))}.
   */
  public GatewayMetrics withFailover(
      Optional<Supplier<List<AdmissionPools.LaneStats>>> lanes,
      Optional<ProviderBreakers> breakers,
      Optional<ModelCircuits> circuits,
      Optional<ModelCatalog> catalog) {
    this.failover = new FailoverGauges(registry, lanes, breakers, circuits, catalog);
    return this;
  }

  /** As above, reading the pools' own {@link AdmissionPools#stats()}. */
  public GatewayMetrics withFailover(
      AdmissionPools pools,
      ProviderBreakers breakers,
      ModelCircuits circuits,
      ModelCatalog catalog) {
    return withFailover(
        Optional.of(pools::stats),
        Optional.of(breakers),
        Optional.of(circuits),
        Optional.of(catalog));
  }

  /** Refreshes the scrape-time gauges, then renders the Prometheus text format. */
  public CompletionStage<String> scrape() {
    FailoverGauges f = failover;
    if (f != null) {
      f.refresh();
    }
    LedgerUsageGauges u = usage;
    CompletionStage<Void> refreshed =
        u == null ? CompletableFuture.completedFuture(null) : u.refresh();
    MicrometerMediaMetrics m = media;
    CompletionStage<Void> mediaRefreshed =
        m == null ? CompletableFuture.completedFuture(null) : m.refresh();
    return refreshed.thenCombine(mediaRefreshed, (a, b) -> b).thenApply(done -> registry.scrape());
  }
}
