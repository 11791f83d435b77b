package dev.spendgateway.edge.metrics;

import dev.spendgateway.policy.catalog.ModelCatalog;
import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.AdmissionPools;
import dev.spendgateway.upstream.failover.ModelCircuits;
import dev.spendgateway.upstream.failover.ProviderBreakers;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Gauges read from the failover machinery and the model catalog when {@code /metrics} is scraped;
 * each source is optional (absent until the router is wired):
 *
 * <ul>
 *   <li>{@code gateway_queue_depth{pool,provider}}, {@code
 *       gateway_queue_oldest_wait_seconds{pool,provider}}, {@code
 *       gateway_pool_in_flight{pool,provider}}, {@code gateway_pool_limit{pool,provider}} from
 *       {@link AdmissionPools#stats()} (or the router's lane stats);
 *   <li>{@code gateway_circuit_state{provider}}: 0 closed, 1 half-open, 2 open, from {@link
 *       ProviderBreakers#state};
 *   <li>{@code gateway_model_circuit_open{model}} = 1 for each model whose circuit is open (the
 *       provider said it is gone), from {@link ModelCircuits#openModels()};
 *   <li>{@code gateway_model_lifecycle{model,provider,lifecycle}} = 1 for each catalog model that
 *       is deprecated (or active within {@code model-lifecycle.warning-days} of its end of support)
 *       or retired today (an alarm for operators).
 * </ul>
 */
public final class FailoverGauges {
  private final Optional<Supplier<List<AdmissionPools.LaneStats>>> lanes;
  private final Optional<ModelCircuits> circuits;
  private final Optional<ModelCatalog> catalog;
  private final Supplier<LocalDate> today;
  private final MultiGauge depth;
  private final MultiGauge oldestWait;
  private final MultiGauge inFlight;
  private final MultiGauge poolLimit;
  private final MultiGauge modelOpen;
  private final MultiGauge lifecycle;

  /**
   * @param lanes the admission pools' stats ({@code AdmissionPools::stats}, or the router's {@code
   *     laneStats}), read at each scrape
   */
  public FailoverGauges(
      MeterRegistry registry,
      Optional<Supplier<List<AdmissionPools.LaneStats>>> lanes,
      Optional<ProviderBreakers> breakers,
      Optional<ModelCircuits> circuits,
      Optional<ModelCatalog> catalog) {
    this.lanes = lanes;
    this.circuits = circuits;
    this.catalog = catalog;
    this.today = () -> LocalDate.now(ZoneOffset.UTC);
    this.depth =
        MultiGauge.builder("gateway.queue.depth")
            .description("Calls waiting for an admission slot")
            .register(registry);
    this.oldestWait =
        MultiGauge.builder("gateway.queue.oldest.wait")
            .baseUnit("seconds")
            .description("How long the oldest waiting call has waited")
            .register(registry);
    this.inFlight =
        MultiGauge.builder("gateway.pool.in.flight")
            .description("Upstream calls holding a slot")
            .register(registry);
    this.poolLimit =
        MultiGauge.builder("gateway.pool.limit")
            .description("Concurrency limit of the lane")
            .register(registry);
    this.modelOpen =
        MultiGauge.builder("gateway.model.circuit.open")
            .description("1 for each model whose circuit is open (provider says it is gone)")
            .register(registry);
    this.lifecycle =
        MultiGauge.builder("gateway.model.lifecycle")
            .description("1 for each catalog model deprecated or retired today")
            .register(registry);
    breakers.ifPresent(
        b -> {
          for (Provider p : Provider.values()) {
            Gauge.builder("gateway.circuit.state", b, br -> stateValue(br.state(p)))
                .description("Provider circuit breaker: 0 closed, 1 half-open, 2 open")
                .tag("provider", p.wireName())
                .register(registry);
          }
        });
  }

  private static double stateValue(ProviderBreakers.State state) {
    return switch (state) {
      case CLOSED -> 0;
      case HALF_OPEN -> 1;
      case OPEN -> 2;
    };
  }

  /** Re-reads every source; called before each scrape. */
  public void refresh() {
    lanes.ifPresent(
        p -> {
          List<MultiGauge.Row<?>> d = new ArrayList<>();
          List<MultiGauge.Row<?>> w = new ArrayList<>();
          List<MultiGauge.Row<?>> f = new ArrayList<>();
          List<MultiGauge.Row<?>> l = new ArrayList<>();
          for (AdmissionPools.LaneStats s : p.get()) {
            Tags tags = Tags.of("pool", s.pool().wireName(), "provider", s.provider().wireName());
            d.add(MultiGauge.Row.of(tags, s.depth()));
            w.add(MultiGauge.Row.of(tags, s.oldestWait().toNanos() / 1e9));
            f.add(MultiGauge.Row.of(tags, s.inFlight()));
            l.add(MultiGauge.Row.of(tags, s.limit()));
          }
          depth.register(d, true);
          oldestWait.register(w, true);
          inFlight.register(f, true);
          poolLimit.register(l, true);
        });
    circuits.ifPresent(
        c ->
            modelOpen.register(
                c.openModels().stream()
                    .<MultiGauge.Row<?>>map(m -> MultiGauge.Row.of(Tags.of("model", m), 1))
                    .toList(),
                true));
    catalog.ifPresent(
        c -> {
          LocalDate day = today.get();
          List<MultiGauge.Row<?>> rows = new ArrayList<>();
          for (ModelInfo m : c.all()) {
            // An active model near its end of support raises the same alarm as a deprecated one.
            String state =
                m.isRetiredOn(day) ? "retired" : c.needsWarning(m, day) ? "deprecated" : null;
            if (state != null) {
              rows.add(
                  MultiGauge.Row.of(
                      Tags.of(
                          "model",
                          m.name(),
                          "provider",
                          m.provider().wireName(),
                          "lifecycle",
                          state),
                      1));
            }
          }
          lifecycle.register(rows, true);
        });
  }
}
