package dev.spendgateway.edge.metrics;

import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol.CapUsage;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToLongFunction;

/**
 * Spend against every current cap window, refreshed from {@link LedgerClient#usage} when {@code
 * /metrics} is scraped (the same numbers as {@code GET /usage}): {@code gateway_cap_limit_usd},
 * {@code gateway_cap_spent_usd}, {@code gateway_cap_reserved_usd}, {@code
 * gateway_cap_remaining_usd} with tags {@code cap}, {@code subject} (brand or preview id, empty for
 * global and pool caps; per-subject series only for the configured number of biggest spenders, none
 * by default), {@code window} (a date of {@code ledger.window-zone}); {@code
 * gateway_ledger_open_reservations}; and {@code gateway_ledger_window_zone{zone}} at 1, naming the
 * zone those dates are in. Windows that ended drop out at the next scrape.
 */
public final class LedgerUsageGauges {
  private final LedgerClient ledger;
  private final int subjectSeries;
  private final MultiGauge limit;
  private final MultiGauge spent;
  private final MultiGauge reserved;
  private final MultiGauge remaining;
  private final AtomicInteger open = new AtomicInteger();
  private final MultiGauge zone;

  public LedgerUsageGauges(LedgerClient ledger, MeterRegistry registry) {
    this(ledger, registry, 0);
  }

  /**
   * @param subjectSeries per-brand/preview series for at most this many subjects, the biggest
   *     spenders ({@code gateway.metrics-subject-series}); 0: global and pool caps only, so the
   *     number of series stays fixed however many brands and preview ids call
   */
  public LedgerUsageGauges(LedgerClient ledger, MeterRegistry registry, int subjectSeries) {
    this.ledger = ledger;
    this.subjectSeries = subjectSeries;
    this.limit = gauge(registry, "gateway.cap.limit", "Cap limit in its window");
    this.spent = gauge(registry, "gateway.cap.spent", "Settled spend in the cap window");
    this.reserved =
        gauge(
            registry,
            "gateway.cap.reserved",
            "Worst case held by open reservations in the cap window");
    this.remaining = gauge(registry, "gateway.cap.remaining", "limit - spent - reserved");
    Gauge.builder("gateway.ledger.open.reservations", open, AtomicInteger::get)
        .description("Open reservations")
        .register(registry);
    this.zone =
        MultiGauge.builder("gateway.ledger.window.zone")
            .description(
                "1, tagged with the zone the cap windows' dates are in (ledger.window-zone)")
            .register(registry);
  }

  private static MultiGauge gauge(MeterRegistry registry, String name, String description) {
    return MultiGauge.builder(name).baseUnit("usd").description(description).register(registry);
  }

  /**
   * Asks the ledger for its usage and updates the gauges; completes (also on failure) when done.
   */
  public CompletionStage<Void> refresh() {
    return ledger
        .usage(Optional.empty(), subjectSeries)
        .handle(
            (usage, failure) -> {
              if (failure == null) {
                update(usage);
              }
              return null;
            });
  }

  void update(Usage usage) {
    limit.register(rows(usage, CapUsage::limitMicros), true);
    spent.register(rows(usage, CapUsage::spentMicros), true);
    reserved.register(rows(usage, CapUsage::reservedMicros), true);
    remaining.register(rows(usage, CapUsage::remainingMicros), true);
    open.set(usage.openReservations());
    zone.register(List.of(MultiGauge.Row.of(Tags.of("zone", usage.zone()), 1.0)), true);
  }

  private static List<MultiGauge.Row<?>> rows(Usage usage, ToLongFunction<CapUsage> micros) {
    List<MultiGauge.Row<?>> rows = new ArrayList<>(usage.caps().size());
    for (CapUsage c : usage.caps()) {
      Tags tags =
          Tags.of(
              "cap",
              c.cap().wireName(),
              "subject",
              c.subject() == null ? "" : c.subject(),
              "window",
              c.window());
      rows.add(MultiGauge.Row.of(tags, micros.applyAsLong(c) / 1_000_000.0));
    }
    return rows;
  }
}
