package dev.spendgateway.operator;

import dev.spendgateway.ledger.AdjustmentScope;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.ReservationExpired;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerEvents.ReservationRefused;
import dev.spendgateway.ledger.LedgerEvents.ReservationSettled;
import dev.spendgateway.ledger.LedgerEvents.ReservationVoided;
import dev.spendgateway.ledger.LedgerEvents.SpendAdjusted;
import dev.spendgateway.ledger.LedgerEvents.WindowZoneChanged;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.WindowCalendar;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * What was spent, grouped: one pass over the journal's facts, in journal order. A reservation
 * belongs to the day it was reserved on, as the ledger counts it in that day's windows, and its
 * close (settle, void, expiry) is counted with it, whenever the close came. Days are those of the
 * journal's own zone history (each {@code WindowZoneChanged} fact it holds, UTC before the first):
 * the day a reservation is reported on is the day window the ledger booked it in, also across a
 * change of {@code ledger.window-zone}. Given one zone instead, every day is that zone's. Per
 * group: {@code calls} (reservations made), {@code settled_usd} (real cost of the settled ones,
 * plus operator refunds), {@code voided} (closed at $0), {@code expired_usd} (kept at their worst
 * case), {@code refused} (refused by a cap). {@code tag}, {@code model} and {@code provider} are
 * those journaled with the reservation or refusal (empty when it has none: an untagged call, a
 * reservation written before models and providers were journaled, a ledger API caller that named
 * none, a refund).
 *
 * <p>{@code settled_usd + expired_usd} over all groups is what the company spent in the period: the
 * spend {@code replay} shows for the company-wide caps. A refund adjustment moves those caps, so it
 * is in {@code settled_usd} (its own call-less row, dated by the window it names); a grant gives
 * one brand room under its own caps and changes nothing the providers billed, so it is not.
 *
 * <p>Memory: one entry per reservation of the period still open at the point read (closes remove
 * them), plus one per group.
 */
final class SpendReport {
  /** A grouping key; the report's {@code --by} values. */
  enum Key {
    DAY,
    MONTH,
    BRAND,
    LANE,
    MODEL,
    PROVIDER,
    TAG;

    String wireName() {
      return name().toLowerCase(Locale.ROOT);
    }

    static Key parse(String name) {
      for (Key k : values()) {
        if (k.wireName().equals(name.trim())) {
          return k;
        }
      }
      throw new IllegalArgumentException(
          "--by: unknown key '" + name + "' (day, month, brand, lane, model, provider, tag)");
    }
  }

  /** One group's totals, in micro-dollars and counts. */
  static final class Totals {
    long calls;
    long settledMicros;
    long voided;
    long expiredMicros;
    long refused;

    void add(Totals o) {
      calls += o.calls;
      settledMicros += o.settledMicros;
      voided += o.voided;
      expiredMicros += o.expiredMicros;
      refused += o.refused;
    }
  }

  static final List<String> COLUMNS =
      List.of("calls", "settled_usd", "voided", "expired_usd", "refused");

  private final List<Key> by;
  private final ZoneId zone;
  private final boolean followsJournal;
  private WindowCalendar calendar;
  private final LocalDate from;
  private final LocalDate to;

  /** The period's first and last day keys: day keys ({@code 2026-12-05}) sort as dates. */
  private final String fromKey;

  private final String toKey;
  private final Map<String, List<String>> openGroups = new HashMap<>();
  private final Map<List<String>, Totals> groups = new TreeMap<>(SpendReport::compareGroups);

  /**
   * Every day in one zone.
   *
   * @param from first day of the period, in {@code zone}, inclusive
   * @param to last day of the period, in {@code zone}, inclusive
   */
  SpendReport(List<Key> by, ZoneId zone, LocalDate from, LocalDate to) {
    this(by, zone, from, to, false);
  }

  /**
   * @param zone the zone the report names; the days' zone too unless {@code followsJournal}
   * @param followsJournal count each fact in the zone the journal's zone history says the ledger
   *     counted it in (UTC until its first {@code WindowZoneChanged})
   */
  SpendReport(List<Key> by, ZoneId zone, LocalDate from, LocalDate to, boolean followsJournal) {
    this.by = List.copyOf(by);
    this.zone = zone;
    this.followsJournal = followsJournal;
    this.calendar = followsJournal ? WindowCalendar.UTC : WindowCalendar.of(zone);
    this.from = from;
    this.to = to;
    this.fromKey = from.toString();
    this.toKey = to.toString();
  }

  List<Key> by() {
    return by;
  }

  /** Folds one fact of the journal, in journal order. */
  void add(Event fact) {
    if (fact instanceof ReservationMade e) {
      String day = calendar.dayKey(e.at());
      if (inPeriod(day)) {
        List<String> group = group(day, e.lane(), e.subject(), e.tag(), e.model(), e.provider());
        openGroups.put(e.id(), group);
        totals(group).calls++;
      }
    } else if (fact instanceof ReservationRefused e) {
      String day = calendar.dayKey(e.at());
      if (inPeriod(day)) {
        totals(group(day, e.lane(), e.subject(), e.tag(), e.model(), e.provider())).refused++;
      }
    } else if (fact instanceof ReservationSettled e) {
      List<String> group = openGroups.remove(e.id());
      if (group != null) {
        totals(group).settledMicros += e.actualMicros();
      }
    } else if (fact instanceof ReservationVoided e) {
      List<String> group = openGroups.remove(e.id());
      if (group != null) {
        totals(group).voided++;
      }
    } else if (fact instanceof ReservationExpired e) {
      List<String> group = openGroups.remove(e.id());
      if (group != null) {
        totals(group).expiredMicros += e.reservedMicros();
      }
    } else if (fact instanceof SpendAdjusted e && e.scope() == AdjustmentScope.REFUND) {
      String day = adjustedDay(e);
      if (inPeriod(day)) {
        // A refund is no workflow's call: it has no tag, model or provider.
        totals(group(day, e.lane(), e.subject(), null, null, null)).settledMicros +=
            e.deltaMicros();
      }
    } else if (fact instanceof WindowZoneChanged e && followsJournal) {
      calendar = calendar.withZoneFrom(e.from(), ZoneId.of(e.zone()));
    }
  }

  /**
   * The zone the report names: the one given, or the journal's latest ({@code UTC} for a journal
   * that never changed zone).
   */
  String zoneName() {
    if (!followsJournal) {
      return zone.getId();
    }
    ZoneId now = calendar.currentZone();
    return WindowCalendar.sameZone(now, ZoneOffset.UTC) ? "UTC" : now.getId();
  }

  /** The day an adjustment is dated: the day window it names, or the first day of its month. */
  private String adjustedDay(SpendAdjusted e) {
    String window = e.window();
    if (window != null && window.length() == 10) {
      return window;
    }
    if (window != null && window.length() == 7) {
      return window + "-01";
    }
    return calendar.dayKey(e.at());
  }

  private boolean inPeriod(String day) {
    return day.compareTo(fromKey) >= 0 && day.compareTo(toKey) <= 0;
  }

  private List<String> group(
      String day, Lane lane, String subject, String tag, String model, String provider) {
    List<String> values = new ArrayList<>(by.size());
    for (Key k : by) {
      values.add(
          switch (k) {
            case DAY -> day;
            case MONTH -> day.substring(0, 7);
            case BRAND -> subject == null ? "" : subject;
            case LANE -> lane.wireName();
            case TAG -> tag == null ? "" : tag;
            // Journaled with each reservation since models and providers were; older ones have
            // none.
            case MODEL -> model == null ? "" : model;
            case PROVIDER -> provider == null ? "" : provider;
          });
    }
    return List.copyOf(values);
  }

  private Totals totals(List<String> group) {
    return groups.computeIfAbsent(group, g -> new Totals());
  }

  /** The groups in key order, each with its totals. */
  Map<List<String>, Totals> groups() {
    return groups;
  }

  Totals total() {
    Totals all = new Totals();
    groups.values().forEach(all::add);
    return all;
  }

  private static int compareGroups(List<String> a, List<String> b) {
    for (int i = 0; i < a.size(); i++) {
      int c = a.get(i).compareTo(b.get(i));
      if (c != 0) {
        return c;
      }
    }
    return 0;
  }

  /** Micro-dollars as USD with all six decimals: totals add up to the micro-dollar. */
  static String usd(long micros) {
    return BigDecimal.valueOf(micros, 6).toPlainString();
  }

  static List<String> columns(Totals t) {
    return List.of(
        Long.toString(t.calls),
        usd(t.settledMicros),
        Long.toString(t.voided),
        usd(t.expiredMicros),
        Long.toString(t.refused));
  }

  /** CSV: a header row of the {@code --by} keys then the columns, one row per group. */
  String csv() {
    StringBuilder out = new StringBuilder();
    List<String> header = new ArrayList<>();
    by.forEach(k -> header.add(k.wireName()));
    header.addAll(COLUMNS);
    out.append(String.join(",", header)).append('\n');
    groups.forEach(
        (group, t) -> {
          List<String> row = new ArrayList<>();
          group.forEach(v -> row.add(csvField(v)));
          row.addAll(columns(t));
          out.append(String.join(",", row)).append('\n');
        });
    return out.toString();
  }

  private static String csvField(String v) {
    // Brand ids are free text from callers: quote anything a spreadsheet would split on.
    if (v.contains(",") || v.contains("\"") || v.contains("\n") || v.contains("\r")) {
      return "\"" + v.replace("\"", "\"\"") + "\"";
    }
    return v;
  }

  /** JSON: the period, zone and keys, one object per group, and the totals. */
  String json() {
    StringBuilder out = new StringBuilder();
    out.append("{\"zone\":")
        .append(quote(zoneName()))
        .append(",\"from\":")
        .append(quote(from.toString()))
        .append(",\"to\":")
        .append(quote(to.toString()))
        .append(",\"by\":[");
    for (int i = 0; i < by.size(); i++) {
      out.append(i == 0 ? "" : ",").append(quote(by.get(i).wireName()));
    }
    out.append("],\"groups\":[");
    boolean first = true;
    for (Map.Entry<List<String>, Totals> e : groups.entrySet()) {
      out.append(first ? "" : ",").append('{');
      for (int i = 0; i < by.size(); i++) {
        out.append(quote(by.get(i).wireName())).append(':').append(quote(e.getKey().get(i)));
        out.append(',');
      }
      out.append(totalsJson(e.getValue())).append('}');
      first = false;
    }
    out.append("],\"total\":{").append(totalsJson(total())).append("}}");
    return out.toString();
  }

  private static String totalsJson(Totals t) {
    return "\"calls\":"
        + t.calls
        + ",\"settled_usd\":"
        + usd(t.settledMicros)
        + ",\"voided\":"
        + t.voided
        + ",\"expired_usd\":"
        + usd(t.expiredMicros)
        + ",\"refused\":"
        + t.refused;
  }

  private static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        default -> {
          if (c < 0x20) {
            b.append(String.format("\\u%04x", (int) c));
          } else {
            b.append(c);
          }
        }
      }
    }
    return b.append('"').toString();
  }

  /** A table for people: the groups, then a total line. */
  String table() {
    List<String> header = new ArrayList<>();
    by.forEach(k -> header.add(k.wireName()));
    header.addAll(COLUMNS);
    List<List<String>> rows = new ArrayList<>();
    rows.add(header);
    groups.forEach(
        (group, t) -> {
          List<String> row = new ArrayList<>();
          group.forEach(v -> row.add(v.isEmpty() ? "-" : v));
          row.addAll(columns(t));
          rows.add(row);
        });
    List<String> totalRow = new ArrayList<>();
    for (int i = 0; i < by.size(); i++) {
      totalRow.add(i == 0 ? "total" : "");
    }
    totalRow.addAll(columns(total()));
    rows.add(totalRow);
    int[] widths = new int[header.size()];
    for (List<String> row : rows) {
      for (int i = 0; i < row.size(); i++) {
        widths[i] = Math.max(widths[i], row.get(i).length());
      }
    }
    StringBuilder out = new StringBuilder();
    out.append("period ")
        .append(from)
        .append(" .. ")
        .append(to)
        .append(" (")
        .append(zoneName())
        .append(
            calendar.periods().size() > 1 ? "; each day in the zone the ledger counted it in" : "")
        .append(")\n");
    for (List<String> row : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < row.size(); i++) {
        String v = row.get(i);
        // Keys left-aligned, numbers right-aligned.
        line.append(
            i < by.size()
                ? String.format("%-" + widths[i] + "s", v)
                : String.format("%" + widths[i] + "s", v));
        line.append(i == row.size() - 1 ? "" : "  ");
      }
      out.append(line.toString().stripTrailing()).append('\n');
    }
    return out.toString();
  }
}
