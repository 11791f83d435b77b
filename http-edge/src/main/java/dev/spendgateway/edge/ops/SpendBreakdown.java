package dev.spendgateway.edge.ops;

import dev.spendgateway.policy.caps.WindowCalendar;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Spend by model and by workflow tag for today and this month (days and months of the window zone),
 * for the operations screen: a small in-memory sum fed by this node's settled calls, the same
 * amounts {@code gateway_spend_usd_total} counts.
 *
 * <p>Memory is bounded whatever the traffic or uptime: only the current day and the current month
 * are kept (a new day or month replaces the old one), and each holds at most {@code maxKeys} models
 * and {@code maxKeys} tags; a call whose model or tag would be one more counts under {@link
 * #OTHER}. A week of traffic costs what an hour does.
 *
 * <p>Not durable: it starts empty at every start ({@link #since} says when it began counting) and
 * counts this node's calls only. The ledger journals every reservation's model and tag, so {@code
 * gateway-admin report --by model} or {@code --by tag} is the complete and exact figure, across
 * nodes and restarts.
 */
public final class SpendBreakdown {
  /** The row for models or tags past the bound. */
  public static final String OTHER = "(other)";

  /** The row for calls without a tag. */
  public static final String UNTAGGED = "";

  private final Clock clock;
  private final WindowCalendar calendar;
  private final int maxKeys;
  private final Instant since;
  private volatile Window day;
  private volatile Window month;

  /** Calls and micro-dollars of one model or tag. */
  public record Row(String key, long calls, long micros) {}

  /** One window's sums: its key ({@code 2026-12-05} or {@code 2026-12}), by model and by tag. */
  public record View(String window, List<Row> byModel, List<Row> byTag) {}

  /** One window being counted. */
  private static final class Window {
    final String key;
    final Map<String, LongAdder[]> byModel = new ConcurrentHashMap<>();
    final Map<String, LongAdder[]> byTag = new ConcurrentHashMap<>();

    Window(String key) {
      this.key = key;
    }
  }

  /**
   * @param calendar the window zone's calendar (days and months as the caps count them)
   * @param maxKeys most models, and most tags, one window lists before the rest count as {@link
   *     #OTHER}
   */
  public SpendBreakdown(Clock clock, WindowCalendar calendar, int maxKeys) {
    if (maxKeys < 1) {
      throw new IllegalArgumentException("maxKeys must be >= 1");
    }
    this.clock = clock;
    this.calendar = calendar;
    this.maxKeys = maxKeys;
    this.since = clock.instant();
    this.day = new Window(calendar.dayKey(since));
    this.month = new Window(calendar.monthKey(since));
  }

  /** When this node began counting (its start): the sums hold nothing from before. */
  public Instant since() {
    return since;
  }

  /** One call closed at {@code micros} (settled cost, worst case kept, or 0), now. */
  public void spent(String model, Optional<String> tag, long micros) {
    Instant now = clock.instant();
    String tagKey = tag.orElse(UNTAGGED);
    for (Window w : List.of(current(now, true), current(now, false))) {
      add(w.byModel, model, micros);
      add(w.byTag, tagKey, micros);
    }
  }

  /** Today's sums (empty when nothing settled yet today). */
  public View today() {
    return view(current(clock.instant(), true));
  }

  /** This month's sums. */
  public View thisMonth() {
    return view(current(clock.instant(), false));
  }

  /** The window holding {@code now}: the kept one, or a fresh one replacing it. */
  private Window current(Instant now, boolean daily) {
    String key = daily ? calendar.dayKey(now) : calendar.monthKey(now);
    Window w = daily ? day : month;
    if (w.key.equals(key)) {
      return w;
    }
    synchronized (this) {
      w = daily ? day : month;
      if (!w.key.equals(key)) {
        w = new Window(key);
        if (daily) {
          day = w;
        } else {
          month = w;
        }
      }
      return w;
    }
  }

  private void add(Map<String, LongAdder[]> sums, String key, long micros) {
    LongAdder[] row = sums.get(key);
    if (row == null) {
      // Past the bound a new key counts as OTHER; concurrent first calls may pass it by a few.
      String kept = sums.size() < maxKeys ? key : OTHER;
      row = sums.computeIfAbsent(kept, k -> new LongAdder[] {new LongAdder(), new LongAdder()});
    }
    row[0].increment();
    row[1].add(micros);
  }

  private static View view(Window w) {
    return new View(w.key, rows(w.byModel), rows(w.byTag));
  }

  /** Biggest spend first, then by name. */
  private static List<Row> rows(Map<String, LongAdder[]> sums) {
    List<Row> rows = new ArrayList<>(sums.size());
    sums.forEach((k, v) -> rows.add(new Row(k, v[0].sum(), v[1].sum())));
    rows.sort(Comparator.comparingLong((Row r) -> -r.micros()).thenComparing(Row::key));
    return rows;
  }
}
