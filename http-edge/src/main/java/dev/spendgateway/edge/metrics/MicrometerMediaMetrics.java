package dev.spendgateway.edge.metrics;

import dev.spendgateway.edge.media.MediaListener;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol.OpenMediaJob;
import dev.spendgateway.policy.money.Micros;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Media jobs on {@code /metrics}: {@code gateway_media_open_jobs} and {@code
 * gateway_media_reserved_usd} (unfinished media jobs and the worst case they hold, read from the
 * ledger at each scrape, so exact across restarts and nodes), {@code
 * gateway_media_spend_usd_total{model,outcome}} (what this node settled media jobs at: {@code
 * completed} at their billed seconds, {@code failed} at $0) and {@code
 * gateway_media_rate_limited_total{by}} (submits answered 429, by the gateway's own job limit or by
 * the provider). The two gauges and both kinds of 429 are served at 0 from the start, so an alert
 * sees 0 rather than "no data".
 */
public final class MicrometerMediaMetrics implements MediaListener {
  private final LedgerClient ledger;
  private final AtomicInteger openJobs = new AtomicInteger();
  private final AtomicLong reservedMicros = new AtomicLong();
  private final AtomicLong spentMicros = new AtomicLong();
  private final MeterTable<Counter> spend;
  private final MeterTable<Counter> rateLimited;

  MicrometerMediaMetrics(MeterRegistry registry, LedgerClient ledger) {
    this.ledger = ledger;
    Gauge.builder("gateway.media.open.jobs", openJobs, AtomicInteger::get)
        .description("Unfinished media jobs (open media reservations), from the ledger")
        .register(registry);
    Gauge.builder("gateway.media.reserved.usd", reservedMicros, m -> usd(m.get()))
        .description("Worst case held by the unfinished media jobs")
        .register(registry);
    this.spend =
        new MeterTable<>(
            v ->
                Counter.builder("gateway.media.spend.usd")
                    .description("What this node settled media jobs at, per model and outcome")
                    .tags("model", v[0], "outcome", v[1])
                    .register(registry));
    this.rateLimited =
        new MeterTable<>(
            v ->
                Counter.builder("gateway.media.rate.limited")
                    .description("Media submits answered 429, by the gateway or the provider")
                    .tags("by", v[0])
                    .register(registry));
    rateLimited.get("gateway");
    rateLimited.get("provider");
  }

  @Override
  public void jobClosed(String model, String outcome, long micros) {
    spentMicros.addAndGet(micros);
    spend.get(model == null ? "" : model, outcome).increment(usd(micros));
  }

  @Override
  public void rateLimited(String by) {
    rateLimited.get(by).increment();
  }

  /** What this node settled media jobs at since it started, exact (for the ops screen). */
  public long spentMicros() {
    return spentMicros.get();
  }

  /** Reads the open media jobs from the ledger into the gauges; completes also on failure. */
  CompletionStage<Void> refresh() {
    return ledger
        .openMediaJobs()
        .handle(
            (open, failure) -> {
              if (failure == null) {
                update(open.jobs());
              }
              return null;
            });
  }

  void update(List<OpenMediaJob> jobs) {
    long held = 0;
    for (OpenMediaJob j : jobs) {
      held += j.amountMicros();
    }
    openJobs.set(jobs.size());
    reservedMicros.set(held);
  }

  private static double usd(long micros) {
    return Micros.toUsd(micros).doubleValue();
  }
}
