package dev.spendgateway.edge.metrics;

import dev.spendgateway.edge.call.CallMetrics;
import dev.spendgateway.edge.ops.SpendBreakdown;
import dev.spendgateway.policy.cost.TokenUsage;
import dev.spendgateway.upstream.client.RateLimitHeaders;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link CallMetrics} on Micrometer. Series (Prometheus names): {@code
 * gateway_upstream_responses_total{provider,model,profile,status}}, {@code
 * gateway_upstream_failures_total{provider,model,profile,cause}}, {@code
 * gateway_upstream_latency_seconds{provider,model,profile}} (histogram), {@code
 * gateway_upstream_ttfb_seconds{provider,model,profile}} (histogram), {@code
 * gateway_overhead_seconds{route}} (histogram), {@code gateway_open_streams{provider}}, {@code
 * gateway_edge_settled_above_reserve_total} / {@code _usd_total{provider,model}}, {@code
 * gateway_model_lifecycle_alarms_total{model,lifecycle}}, {@code
 * gateway_overload_refusals_total{kind}}, {@code gateway_data_class_calls_total{class,outcome}},
 * {@code gateway_upstream_too_many_requests_total{provider,model,profile,kind}} (kind {@code quota}
 * or {@code rate_limit}), {@code gateway_upstream_ratelimit_remaining{provider,resource}} and
 * {@code gateway_upstream_ratelimit_limit{provider,resource}} (from the providers' {@code
 * x-ratelimit-*} / {@code anthropic-ratelimit-*} headers, last answer wins), {@code
 * gateway_tokens_total{provider,model,profile,kind}} (kind {@code input}, {@code output}, {@code
 * cache_read}, {@code cache_write}) and {@code gateway_spend_usd_total{provider,model,profile,tag}}
 * ({@code tag}: the call's workflow tag when listed in {@code gateway.spend-tags.metric-tags}, else
 * {@code other}, or {@code none} without one; see {@link SpendTagLabels}). Every per-attempt series
 * carries {@code profile}: the routing profile, empty on the provider routes (a Prometheus registry
 * needs one set of label names per metric, so the label is always there).
 */
public final class MicrometerCallMetrics implements CallMetrics {
  private static final Duration[] LATENCY_BUCKETS = {
    Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50),
        Duration.ofMillis(100),
    Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1), Duration.ofMillis(2500),
        Duration.ofSeconds(5),
    Duration.ofSeconds(10), Duration.ofSeconds(30), Duration.ofSeconds(60), Duration.ofSeconds(120)
  };
  private static final Duration[] OVERHEAD_BUCKETS = {
    Duration.ofNanos(250_000), Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(5),
        Duration.ofMillis(10),
    Duration.ofMillis(25), Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofMillis(250),
        Duration.ofSeconds(1)
  };

  private final MeterRegistry registry;
  private final Map<String, AtomicInteger> openStreams = new ConcurrentHashMap<>();

  /**
   * Meters of the per-call hot path, each metric's by its tag values. Building and registering a
   * meter on every call (builder, tag sorting, registry lookup) showed up in the gateway's CPU
   * profile, and so did a key list made per call to find it: a {@link MeterTable} builds each meter
   * once and finds it again without allocating.
   */
  private final MeterTable<Counter> responses;

  private final MeterTable<Counter> failures;
  private final MeterTable<Timer> latency;
  private final MeterTable<Timer> ttfb;
  private final MeterTable<Timer> overhead;
  private final MeterTable<Counter> overload;
  private final MeterTable<Counter> dataClasses;
  private final MeterTable<Counter> tooManyRequests;
  private final MeterTable<AtomicLong> rateLimitRemaining;
  private final MeterTable<AtomicLong> rateLimitLimit;
  private final MeterTable<Counter> tokens;
  private final MeterTable<Counter> spend;
  private volatile SpendTagLabels tagLabels = SpendTagLabels.NONE_LISTED;
  private volatile SpendBreakdown breakdown;

  /** Status codes as tag values, made once (0..999). */
  private static final String[] STATUS_TAGS = new String[1000];

  static {
    for (int i = 0; i < STATUS_TAGS.length; i++) {
      STATUS_TAGS[i] = Integer.toString(i);
    }
  }

  /**
   * Every kind of overload refusal (the gateway's open-calls limit, a provider's connections all
   * busy, Pekko's pool queue full): a closed set, so each series is there at 0 from the start and
   * an alert's rate sees 0 rather than "no data".
   */
  private static final java.util.List<String> OVERLOAD_KINDS =
      java.util.List.of("open_calls", "body_memory", "upstream_busy", "pool_overflow");

  public MicrometerCallMetrics(MeterRegistry registry) {
    this.registry = registry;
    responses =
        counters(
            "gateway.upstream.responses",
            "Upstream HTTP answers by status, every attempt",
            "provider",
            "model",
            "profile",
            "status");
    failures =
        counters(
            "gateway.upstream.failures",
            "Upstream attempts without an HTTP answer",
            "provider",
            "model",
            "profile",
            "cause");
    latency =
        timers(
            "gateway.upstream.latency",
            "Upstream request to last response byte",
            LATENCY_BUCKETS,
            "provider",
            "model",
            "profile");
    ttfb =
        timers(
            "gateway.upstream.ttfb",
            "Upstream request to first response byte",
            LATENCY_BUCKETS,
            "provider",
            "model",
            "profile");
    overhead =
        timers(
            "gateway.overhead",
            "Time a call spends in the gateway itself (total minus upstream)",
            OVERHEAD_BUCKETS,
            "route");
    overload =
        counters(
            "gateway.overload.refusals",
            "Calls answered 503 at once because the node was at a capacity limit, by kind",
            "kind");
    dataClasses =
        counters(
            "gateway.data.class.calls",
            "Calls by data class and what the class allowed",
            "class",
            "outcome");
    tooManyRequests =
        counters(
            "gateway.upstream.too.many.requests",
            "Upstream 429s by kind: quota (billing, not retried) or rate_limit",
            "provider",
            "model",
            "profile",
            "kind");
    rateLimitRemaining = rateLimitGauges("remaining");
    rateLimitLimit = rateLimitGauges("limit");
    tokens =
        counters(
            "gateway.tokens",
            "Tokens the providers reported, per provider, model and routing profile",
            "provider",
            "model",
            "profile",
            "kind");
    spend =
        counters(
            "gateway.spend.usd",
            "What the ledger closed attempts at, per provider, model, routing profile and listed"
                + " workflow tag",
            "provider",
            "model",
            "profile",
            "tag");
    OVERLOAD_KINDS.forEach(overload::get);
  }

  @Override
  public void upstreamStatus(String provider, String model, String profile, int status) {
    String tag = status >= 0 && status < STATUS_TAGS.length ? STATUS_TAGS[status] : "" + status;
    responses.get(provider, model, profile, tag).increment();
  }

  @Override
  public void upstreamFailure(String provider, String model, String profile, String cause) {
    failures.get(provider, model, profile, cause).increment();
  }

  @Override
  public void upstreamLatency(String provider, String model, String profile, Duration latency) {
    this.latency.get(provider, model, profile).record(latency);
  }

  @Override
  public void timeToFirstByte(String provider, String model, String profile, Duration ttfb) {
    this.ttfb.get(provider, model, profile).record(ttfb);
  }

  @Override
  public void gatewayOverhead(String route, Duration overhead) {
    this.overhead.get(route).record(overhead);
  }

  @Override
  public void streamOpened(String provider) {
    streams(provider).incrementAndGet();
  }

  @Override
  public void streamClosed(String provider) {
    streams(provider).decrementAndGet();
  }

  private AtomicInteger streams(String provider) {
    return openStreams.computeIfAbsent(
        provider,
        p -> {
          AtomicInteger count = new AtomicInteger();
          Gauge.builder("gateway.open.streams", count, AtomicInteger::get)
              .description("Streams flowing to callers now")
              .tag("provider", p)
              .register(registry);
          return count;
        });
  }

  @Override
  public void settledAboveReserve(String provider, String model, long overMicros) {
    Counter.builder("gateway.edge.settled.above.reserve")
        .description("Calls settled above their reservation")
        .tags("provider", provider, "model", model)
        .register(registry)
        .increment();
    DistributionSummary.builder("gateway.edge.settled.above.reserve.usd")
        .baseUnit("usd")
        .description("By how much calls were settled above their reservation")
        .tags("provider", provider, "model", model)
        .register(registry)
        .record(overMicros / 1_000_000.0);
  }

  @Override
  public void modelLifecycleAlarm(String model, String lifecycle) {
    Counter.builder("gateway.model.lifecycle.alarms")
        .description("Requests for deprecated, retired or gone models")
        .tags("model", model, "lifecycle", lifecycle)
        .register(registry)
        .increment();
  }

  @Override
  public void overloadRefused(String kind) {
    overload.get(kind).increment();
  }

  @Override
  public void dataClass(String dataClass, String outcome) {
    dataClasses.get(dataClass, outcome).increment();
  }

  @Override
  public void upstreamTooManyRequests(String provider, String model, String profile, String kind) {
    tooManyRequests.get(provider, model, profile, kind).increment();
  }

  @Override
  public void upstreamRateLimits(String provider, RateLimitHeaders.Reading reading) {
    reading
        .remaining()
        .forEach((resource, n) -> rateLimitGauge("remaining", provider, resource).set(n));
    reading.limit().forEach((resource, n) -> rateLimitGauge("limit", provider, resource).set(n));
  }

  private AtomicLong rateLimitGauge(String side, String provider, String resource) {
    return (side.equals("remaining") ? rateLimitRemaining : rateLimitLimit).get(provider, resource);
  }

  private MeterTable<AtomicLong> rateLimitGauges(String side) {
    return new MeterTable<>(
        tags -> {
          AtomicLong value = new AtomicLong();
          Gauge.builder("gateway.upstream.ratelimit." + side, value, AtomicLong::get)
              .description("The provider's rate-limit header: " + side + " in its current window")
              .tags("provider", tags[0], "resource", tags[1])
              .register(registry);
          return value;
        });
  }

  @Override
  public void tokensUsed(String provider, String model, String profile, TokenUsage usage) {
    tokens(provider, model, profile, "input", usage.inputTokens());
    tokens(provider, model, profile, "output", usage.outputTokens());
    tokens(provider, model, profile, "cache_read", usage.cacheReadTokens());
    tokens(provider, model, profile, "cache_write", usage.cacheWriteTokens());
  }

  private void tokens(String provider, String model, String profile, String kind, long n) {
    if (n > 0) {
      tokens.get(provider, model, profile, kind).increment(n);
    }
  }

  @Override
  public void spent(
      String provider, String model, String profile, Optional<String> tag, long micros) {
    // Micro-dollars summed as a double: exact up to 2^53 micros ($9 billion), far beyond any cap.
    spend.get(provider, model, profile, tagLabels.labelOf(tag)).increment(micros / 1_000_000.0);
    SpendBreakdown screen = breakdown;
    if (screen != null) {
      screen.spent(model, tag, micros);
    }
  }

  /** The operations screen's spend by model and tag, fed the same amounts as the counter. */
  public void breakdown(SpendBreakdown breakdown) {
    this.breakdown = breakdown;
  }

  /** Which workflow tags the spend metric names ({@code gateway.spend-tags.metric-tags}). */
  public void tagLabels(SpendTagLabels labels) {
    this.tagLabels = labels;
  }

  /** Counters named {@code name}, one per set of values of {@code tagNames}. */
  private MeterTable<Counter> counters(String name, String description, String... tagNames) {
    return new MeterTable<>(
        values ->
            Counter.builder(name)
                .description(description)
                .tags(tagsOf(tagNames, values))
                .register(registry));
  }

  /** Histogram timers named {@code name}, one per set of values of {@code tagNames}. */
  private MeterTable<Timer> timers(
      String name, String description, Duration[] buckets, String... tagNames) {
    return new MeterTable<>(
        values ->
            Timer.builder(name)
                .description(description)
                .tags(tagsOf(tagNames, values))
                .serviceLevelObjectives(buckets)
                .register(registry));
  }

  /** {@code name1, value1, name2, value2, ...} as Micrometer's {@code tags(String...)} takes. */
  private static String[] tagsOf(String[] names, String[] values) {
    String[] pairs = new String[names.length * 2];
    for (int i = 0; i < names.length; i++) {
      pairs[2 * i] = names[i];
      pairs[2 * i + 1] = values[i];
    }
    return pairs;
  }
}
