package dev.spendgateway.edge.metrics;

import dev.spendgateway.edge.call.CallMetrics;
import dev.spendgateway.edge.call.UsageTelemetry;
import dev.spendgateway.edge.router.RouterListener;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.Pool;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The failover router's {@link RouterListener} on Micrometer, under the series names the router
 * documents: {@code gateway_model_retired_total{model}} (a 410 opened the model's circuit; also
 * counted as a {@code gone} lifecycle alarm), {@code
 * gateway_model_end_of_support_days{profile,model}} (-1 when the date is unknown), {@code
 * gateway_router_attempts_total{provider,profile,outcome}}, {@code
 * gateway_router_failovers_total{profile,to}}, {@code
 * gateway_router_pool_full_total{pool,provider,profile}}, {@code
 * gateway_rate_limited_total{provider,profile}}, {@code
 * gateway_callers_gone_total{provider,wait,profile}}. {@code profile} is the routing profile, empty
 * for a provider-route call; its values are the profiles of {@code conf/profiles.conf}, so the
 * series stay few. The retired-model counter is the model's alone: its circuit holds for every
 * profile and route (the alarm line names the route and profile that hit it).
 */
public final class MicrometerRouterListener implements RouterListener {
  private final MeterRegistry registry;
  private final CallMetrics calls;
  private final Map<List<String>, Long> endOfSupportDays = new ConcurrentHashMap<>();
  private final MultiGauge endOfSupport;

  public MicrometerRouterListener(MeterRegistry registry, CallMetrics calls) {
    this.registry = registry;
    this.calls = calls;
    this.endOfSupport =
        MultiGauge.builder("gateway.model.end.of.support.days")
            .description("Days until a deprecated profile model's end of support (-1: unknown)")
            .register(registry);
    servedAtZero(UsageTelemetry.NO_PROFILE);
  }

  /**
   * Serves {@code gateway_callers_gone_total} at 0 for {@code profile} (two providers × four
   * waits), so a rate sees 0, not "no data"; the gateway calls it for each profile it routes.
   */
  public void servedAtZero(String profile) {
    for (Provider provider : Provider.values()) {
      for (String wait : List.of("queue", "pace", "before", "reserve")) {
        callersGone(provider, wait, profile);
      }
    }
  }

  @Override
  public void modelRetired(String model) {
    Counter.builder("gateway.model.retired")
        .description("Times a provider said a model is gone (410)")
        .tag("model", model)
        .register(registry)
        .increment();
    calls.modelLifecycleAlarm(model, "gone");
  }

  @Override
  public void modelDeprecated(String profile, String model, Optional<Long> daysLeft) {
    endOfSupportDays.put(List.of(profile, model), daysLeft.orElse(-1L));
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    endOfSupportDays.forEach(
        (k, days) ->
            rows.add(MultiGauge.Row.of(Tags.of("profile", k.get(0), "model", k.get(1)), days)));
    endOfSupport.register(rows, true);
  }

  @Override
  public void attempt(Provider provider, String profile, String outcome) {
    Counter.builder("gateway.router.attempts")
        .description("Upstream attempts of routed calls, by outcome")
        .tags("provider", provider.wireName(), "profile", profile, "outcome", outcome)
        .register(registry)
        .increment();
  }

  @Override
  public void failover(String profile, Provider to) {
    Counter.builder("gateway.router.failovers")
        .description("Routed calls that switched to their fallback")
        .tags("profile", profile, "to", to.wireName())
        .register(registry)
        .increment();
  }

  @Override
  public void poolFull(Pool pool, Provider provider, String profile) {
    Counter.builder("gateway.router.pool.full")
        .description("Calls refused at admission (queue full)")
        .tags("pool", pool.wireName(), "provider", provider.wireName(), "profile", profile)
        .register(registry)
        .increment();
  }

  @Override
  public void callerGone(Provider provider, String wait, String profile) {
    callersGone(provider, wait, profile).increment();
  }

  private Counter callersGone(Provider provider, String wait, String profile) {
    return Counter.builder("gateway.callers.gone")
        .description("Calls dropped unsent because the caller hung up while they waited")
        .tags("provider", provider.wireName(), "wait", wait, "profile", profile)
        .register(registry);
  }

  @Override
  public void rateLimited(Provider provider, String profile) {
    Counter.builder("gateway.rate.limited")
        .description("Calls refused by a provider's rate limit (429 with Retry-After)")
        .tags("provider", provider.wireName(), "profile", profile)
        .register(registry)
        .increment();
  }
}
