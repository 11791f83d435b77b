package dev.spendgateway.edge.ops;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol.CapUsage;
import dev.spendgateway.ledger.LedgerProtocol.OpenMediaJob;
import dev.spendgateway.ledger.LedgerProtocol.OpenMediaJobs;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import dev.spendgateway.policy.caps.CapName;
import dev.spendgateway.policy.catalog.ModelCatalog;
import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.money.Micros;
import dev.spendgateway.upstream.failover.AdmissionPools;
import dev.spendgateway.upstream.failover.ModelCircuits;
import dev.spendgateway.upstream.failover.ProviderBreakers;
import dev.spendgateway.upstream.failover.RoutingProfile;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * What {@code GET /ops/data} answers: the operations screen's numbers, computed from the ledger
 * (the same usage {@code /usage} reports) and from the gateway's own meters and failover state. One
 * JSON object:
 *
 * <ul>
 *   <li>{@code caps}: every cap window with (money as exact decimal strings) {@code limitUsd},
 *       {@code spentUsd}, {@code reservedUsd} (held by open reservations), {@code remainingUsd};
 *       brand caps for the top spenders only; {@code openReservations}; {@code zone}, the IANA zone
 *       whose dates the day and month windows are ({@code ledger.window-zone});
 *   <li>{@code spendPerHour}: the last 24 UTC hours, oldest first ({@code hour}, {@code usd});
 *       {@code spendSeriesComplete} false while the series is still being read back from the
 *       journal;
 *   <li>{@code spendBreakdown}: {@code today} and {@code month} (the window zone's), each with its
 *       {@code window} key and, biggest first, {@code byModel} ({@code model}, {@code calls},
 *       {@code usd}) and {@code byTag} ({@code tag}, empty for untagged calls); {@code since}: when
 *       this node began counting (see {@link SpendBreakdown}: this node's calls since its start);
 *   <li>{@code failures}: per provider and model, {@code attempts}, {@code failures} and {@code
 *       rate} over the failure window;
 *   <li>{@code pools}: per admission pool and provider, {@code depth}, {@code oldestWaitSeconds},
 *       {@code inFlight}, {@code limit};
 *   <li>{@code circuits}: each provider breaker's state; {@code openModels}: models whose 410
 *       circuit is open;
 *   <li>{@code media}: {@code openJobs} (unfinished media jobs), {@code reservedUsd} (the worst
 *       case they hold) and {@code settledUsd} (what this node settled media jobs at since start);
 *   <li>{@code alarms}: what needs an operator — an open or half-open provider breaker ({@code
 *       circuit_open}), a model the provider said is gone ({@code model_gone}), and each
 *       deprecated, retired or soon-ending catalog model in use (named by a profile, or requested
 *       since start) with its days to end of support ({@code lifecycle}).
 * </ul>
 */
public final class OpsData {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final LedgerClient ledger;
  private final int topBrands;
  private final SpendPerHour spend;
  private final FailureRates failures;
  private final Sources sources;
  private final ModelCatalog catalog;
  private final MeterRegistry registry;
  private final Clock clock;
  private final LongSupplier mediaSpentMicros;
  private volatile Optional<SpendBreakdown> breakdown = Optional.empty();

  /**
   * The failover router's state, each part absent when there is no router.
   *
   * @param lanes admission pools' depth, age and in-flight counts
   * @param breakers provider circuit breakers
   * @param circuits per-model 410 circuits
   * @param profiles the routing profiles (their models count as in use)
   */
  public record Sources(
      Optional<Supplier<List<AdmissionPools.LaneStats>>> lanes,
      Optional<ProviderBreakers> breakers,
      Optional<ModelCircuits> circuits,
      Supplier<Collection<RoutingProfile>> profiles) {}

  public OpsData(
      LedgerClient ledger,
      int topBrands,
      SpendPerHour spend,
      FailureRates failures,
      Sources sources,
      ModelCatalog catalog,
      MeterRegistry registry,
      Clock clock) {
    this(ledger, topBrands, spend, failures, sources, catalog, registry, clock, () -> 0);
  }

  /**
   * As above, with {@code mediaSpentMicros}: what this node settled media jobs at since it started
   * (the media meters' exact sum).
   */
  public OpsData(
      LedgerClient ledger,
      int topBrands,
      SpendPerHour spend,
      FailureRates failures,
      Sources sources,
      ModelCatalog catalog,
      MeterRegistry registry,
      Clock clock,
      LongSupplier mediaSpentMicros) {
    this.mediaSpentMicros = mediaSpentMicros;
    this.ledger = ledger;
    this.topBrands = topBrands;
    this.spend = spend;
    this.failures = failures;
    this.sources = sources;
    this.catalog = catalog;
    this.registry = registry;
    this.clock = clock;
  }

  /** Adds spend by model and by tag (this node's settles since its start) to the screen. */
  public OpsData withBreakdown(SpendBreakdown breakdown) {
    this.breakdown = Optional.of(breakdown);
    return this;
  }

  /** The screen's numbers now. */
  public CompletionStage<ObjectNode> read() {
    return ledger
        .usage(Optional.empty(), topBrands)
        .thenApply(this::withUsage)
        .thenCombine(
            ledger.openMediaJobs().handle((open, failure) -> open),
            (out, open) -> withMedia(out, open));
  }

  /**
   * The media jobs panel: unfinished jobs and the worst case they hold (the ledger's, so the same
   * on every node and after a restart; null when the ledger did not answer) and what this node
   * settled media jobs at since it started.
   */
  private ObjectNode withMedia(ObjectNode out, OpenMediaJobs open) {
    ObjectNode media = out.putObject("media");
    if (open == null) {
      media.putNull("openJobs");
      media.putNull("reservedUsd");
    } else {
      long held = 0;
      for (OpenMediaJob j : open.jobs()) {
        held += j.amountMicros();
      }
      media.put("openJobs", open.jobs().size());
      media.put("reservedUsd", usd(held));
    }
    media.put("settledUsd", usd(mediaSpentMicros.getAsLong()));
    return out;
  }

  /**
   * The caps as the ledger lists them, but the brands' (listed by name there) ordered by what each
   * brand used today (spent + held), the biggest first: the screen's "Top brands" are the biggest
   * spenders. Ties by name; a brand's daily cap before its monthly.
   */
  static List<CapUsage> brandsBySpend(List<CapUsage> caps) {
    Map<String, Long> usedToday = new java.util.HashMap<>();
    for (CapUsage c : caps) {
      if (c.cap() == CapName.BRAND_DAILY) {
        usedToday.merge(c.subject(), c.spentMicros() + c.reservedMicros(), Long::sum);
      }
    }
    Comparator<CapUsage> bySpend =
        Comparator.comparing((CapUsage c) -> -usedToday.getOrDefault(c.subject(), 0L))
            .thenComparing(CapUsage::subject)
            .thenComparing(CapUsage::cap);
    List<CapUsage> brands = caps.stream().filter(OpsData::isBrandCap).sorted(bySpend).toList();
    List<CapUsage> out = new java.util.ArrayList<>(caps.size());
    caps.stream().filter(c -> !isBrandCap(c)).forEach(out::add);
    out.addAll(brands);
    return out;
  }

  private static boolean isBrandCap(CapUsage c) {
    return c.cap() == CapName.BRAND_DAILY || c.cap() == CapName.BRAND_MONTHLY;
  }

  private ObjectNode withUsage(Usage usage) {
    Instant now = clock.instant();
    ObjectNode out = JSON.createObjectNode();
    out.put("generatedAt", now.toString());
    ArrayNode caps = out.putArray("caps");
    for (CapUsage c : brandsBySpend(usage.caps())) {
      ObjectNode row = caps.addObject();
      row.put("cap", c.cap().wireName());
      row.put("subject", c.subject());
      row.put("window", c.window());
      row.put("limitUsd", usd(c.limitMicros()));
      row.put("spentUsd", usd(c.spentMicros()));
      row.put("reservedUsd", usd(c.reservedMicros()));
      row.put("remainingUsd", usd(c.remainingMicros()));
    }
    out.put("openReservations", usage.openReservations());
    // The zone whose dates the windows above are (ledger.window-zone), for the screen to name.
    out.put("zone", usage.zone());
    ArrayNode series = out.putArray("spendPerHour");
    for (SpendPerHour.Hour h : spend.series()) {
      series.addObject().put("hour", h.start().toString()).put("usd", usd(h.micros()));
    }
    out.put("spendSeriesComplete", spend.isRebuilt());
    breakdown.ifPresent(b -> withBreakdown(out.putObject("spendBreakdown"), b));
    ArrayNode failing = out.putArray("failures");
    for (FailureRates.Rate r : failures.rates()) {
      failing
          .addObject()
          .put("provider", r.provider())
          .put("model", r.model())
          .put("attempts", r.attempts())
          .put("failures", r.failures())
          .put("rate", Math.round(r.ratio() * 10_000) / 10_000.0);
    }
    ArrayNode pools = out.putArray("pools");
    sources
        .lanes()
        .ifPresent(
            lanes -> {
              for (AdmissionPools.LaneStats s : lanes.get()) {
                pools
                    .addObject()
                    .put("pool", s.pool().wireName())
                    .put("provider", s.provider().wireName())
                    .put("depth", s.depth())
                    .put("oldestWaitSeconds", s.oldestWait().toMillis() / 1000.0)
                    .put("inFlight", s.inFlight())
                    .put("limit", s.limit());
              }
            });
    ArrayNode circuits = out.putArray("circuits");
    ArrayNode alarms = out.putArray("alarms");
    sources
        .breakers()
        .ifPresent(
            b -> {
              for (Provider p : Provider.values()) {
                ProviderBreakers.State state = b.state(p);
                circuits
                    .addObject()
                    .put("provider", p.wireName())
                    .put("state", state.name().toLowerCase(java.util.Locale.ROOT));
                if (state != ProviderBreakers.State.CLOSED) {
                  alarms
                      .addObject()
                      .put("kind", "circuit_open")
                      .put("subject", p.wireName())
                      .put("state", state.name().toLowerCase(java.util.Locale.ROOT))
                      .put(
                          "message",
                          "provider circuit breaker for "
                              + p.wireName()
                              + " is "
                              + state.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-')
                              + ": calls fail over or are refused");
                }
              }
            });
    ArrayNode open = out.putArray("openModels");
    sources
        .circuits()
        .ifPresent(
            c -> {
              for (String model : new TreeSet<>(c.openModels())) {
                open.add(model);
                alarms
                    .addObject()
                    .put("kind", "model_gone")
                    .put("subject", model)
                    .put("model", model)
                    .put(
                        "message",
                        "the provider answered 410 Gone for "
                            + model
                            + "; its circuit is open until the catalog is fixed");
              }
            });
    lifecycleAlarms(LocalDate.ofInstant(now, ZoneOffset.UTC), alarms);
    return out;
  }

  /** Today's and this month's spend by model and by tag, and since when this node counted. */
  private static void withBreakdown(ObjectNode out, SpendBreakdown b) {
    out.put("since", b.since().toString());
    breakdownView(out.putObject("today"), b.today());
    breakdownView(out.putObject("month"), b.thisMonth());
  }

  private static void breakdownView(ObjectNode out, SpendBreakdown.View v) {
    out.put("window", v.window());
    breakdownRows(out.putArray("byModel"), "model", v.byModel());
    breakdownRows(out.putArray("byTag"), "tag", v.byTag());
  }

  private static void breakdownRows(ArrayNode out, String key, List<SpendBreakdown.Row> rows) {
    for (SpendBreakdown.Row r : rows) {
      out.addObject().put(key, r.key()).put("calls", r.calls()).put("usd", usd(r.micros()));
    }
  }

  /**
   * Money as an exact decimal string: the page sums and shows it without passing through a binary
   * floating-point number.
   */
  private static String usd(long micros) {
    return Micros.toUsd(micros).toPlainString();
  }

  /**
   * Deprecated, retired or soon-ending models that are in use: named by a profile, or requested.
   */
  private void lifecycleAlarms(LocalDate today, ArrayNode alarms) {
    Map<String, Set<String>> profilesByModel = new TreeMap<>();
    for (RoutingProfile p : sources.profiles().get()) {
      profilesByModel.computeIfAbsent(p.primary().name(), k -> new TreeSet<>()).add(p.name());
      p.fallback()
          .ifPresent(
              f -> profilesByModel.computeIfAbsent(f.name(), k -> new TreeSet<>()).add(p.name()));
    }
    Map<String, Long> requested = new TreeMap<>();
    for (Counter c : registry.find("gateway.model.lifecycle.alarms").counters()) {
      requested.merge(String.valueOf(c.getId().getTag("model")), (long) c.count(), Long::sum);
    }
    for (ModelInfo m : catalog.all()) {
      String state =
          m.isRetiredOn(today)
              ? "retired"
              : m.isDeprecatedOn(today)
                  ? "deprecated"
                  : catalog.needsWarning(m, today) ? "ending" : null;
      Set<String> profiles = profilesByModel.getOrDefault(m.name(), Set.of());
      long calls = requested.getOrDefault(m.name(), 0L);
      if (state == null || (profiles.isEmpty() && calls == 0)) {
        continue;
      }
      ObjectNode a = alarms.addObject();
      a.put("kind", "lifecycle")
          .put("subject", m.name())
          .put("model", m.name())
          .put("provider", m.provider().wireName())
          .put("lifecycle", state);
      Optional<Long> days = m.daysOfSupportLeft(today);
      if (days.isPresent()) {
        a.put("daysLeft", days.get());
        a.put("endOfSupport", m.endOfSupport().toString());
      } else {
        a.putNull("daysLeft");
        a.putNull("endOfSupport");
      }
      a.put("requests", calls);
      ArrayNode by = a.putArray("profiles");
      profiles.forEach(by::add);
      a.put(
          "message",
          m.name()
              + " is "
              + state
              + days.map(
                      d ->
                          d >= 0
                              ? " (" + d + " days to end of support)"
                              : " (ended " + m.endOfSupport() + ")")
                  .orElse("")
              + (profiles.isEmpty() ? "" : "; used by " + String.join(", ", profiles))
              + (calls == 0
                  ? ""
                  : "; requested " + (calls == 1 ? "once" : calls + " times") + " since start"));
    }
  }
}
