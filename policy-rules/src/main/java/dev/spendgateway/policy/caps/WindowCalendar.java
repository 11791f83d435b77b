package dev.spendgateway.policy.caps;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The calendar cap windows are counted in: a day and a month are calendar days and months in a zone
 * (the company's, {@code ledger.window-zone}), so a DST day lasts 23 or 25 hours. The zone can
 * change over the life of a journal; each change takes effect at a day boundary of the zone it
 * replaces, so a window that already began keeps the zone it began in and no past window is
 * reassigned: the calendar is a list of periods, each with the instant its zone starts.
 *
 * <p>Pure and immutable: {@link #dayKey}/{@link #monthKey} give the same keys for the same instant
 * whatever the current zone is, which is what lets a replay of old facts land in the windows they
 * were counted in.
 */
public final class WindowCalendar {
  /** One zone and the instant from which it counts. */
  public record Period(Instant from, ZoneId zone) {
    public Period {
      Objects.requireNonNull(from, "from");
      Objects.requireNonNull(zone, "zone");
    }
  }

  /** UTC from the beginning: every journal written before zones could be chosen. */
  public static final WindowCalendar UTC =
      new WindowCalendar(List.of(new Period(Instant.MIN, ZoneOffset.UTC)));

  private final List<Period> periods;

  /**
   * The last day asked for, with its keys and the instants it holds. The ledger asks for the day of
   * every reservation it decides, closes or replays, nearly always the same day: handing out the
   * same strings skips finding the zone's day and formatting a date, and lets the cap keys built on
   * them reuse the strings' cached hash codes (as {@link CapWindows} does for UTC). Immutable and
   * published whole, so any thread sees a consistent day or computes its own; not part of the
   * calendar's value.
   */
  private record Day(long fromSecond, long untilSecond, String dayKey, String monthKey) {
    boolean holds(Instant at) {
      long s = at.getEpochSecond();
      return s >= fromSecond && s < untilSecond;
    }
  }

  private volatile Day lastDay = new Day(0, 0, "", "");

  private WindowCalendar(List<Period> periods) {
    this.periods = List.copyOf(periods);
    if (this.periods.isEmpty() || !this.periods.get(0).from().equals(Instant.MIN)) {
      throw new IllegalArgumentException("a calendar's first period starts at Instant.MIN");
    }
  }

  /** One zone from the beginning (a journal that never changed zone). */
  public static WindowCalendar of(ZoneId zone) {
    return new WindowCalendar(List.of(new Period(Instant.MIN, zone)));
  }

  /** The periods, oldest first (the first starts at {@link Instant#MIN}). */
  public List<Period> periods() {
    return periods;
  }

  /** The zone counting now, after every change already scheduled. */
  public ZoneId currentZone() {
    return periods.get(periods.size() - 1).zone();
  }

  /**
   * A calendar of these periods, as a snapshot holds them (oldest first, the first from {@link
   * Instant#MIN}).
   */
  public static WindowCalendar ofPeriods(List<Period> periods) {
    return new WindowCalendar(periods);
  }

  /** The zone {@code at} is counted in. */
  public ZoneId zoneAt(Instant at) {
    for (int i = periods.size() - 1; i > 0; i--) {
      if (!at.isBefore(periods.get(i).from())) {
        return periods.get(i).zone();
      }
    }
    return periods.get(0).zone();
  }

  /** The day window of {@code at}: {@code 2026-12-05}. */
  public String dayKey(Instant at) {
    return day(at).dayKey();
  }

  /** The month window of {@code at}: {@code 2026-12}. */
  public String monthKey(Instant at) {
    return day(at).monthKey();
  }

  /** The window of {@code cap} that {@code at} falls in. */
  public String windowOf(CapName cap, Instant at) {
    return switch (cap) {
      case GLOBAL_DAILY, FREE_DAILY, TRIAL_DAILY, BRAND_DAILY -> dayKey(at);
      case GLOBAL_MONTHLY, BRAND_MONTHLY -> monthKey(at);
      case PREVIEW_LIFETIME -> CapWindows.LIFETIME;
    };
  }

  private Day day(Instant at) {
    Day day = lastDay;
    if (!day.holds(at)) {
      day = dayHolding(at);
      lastDay = day;
    }
    return day;
  }

  /**
   * The day of {@code at} with the span of instants that share its key: the zone's day, cut to the
   * period {@code at} is in (a period may begin or end inside one of its zone's days).
   */
  private Day dayHolding(Instant at) {
    int i = periods.size() - 1;
    while (i > 0 && at.isBefore(periods.get(i).from())) {
      i--;
    }
    ZoneId zone = periods.get(i).zone();
    LocalDate date = LocalDate.ofInstant(at, zone);
    long from = date.atStartOfDay(zone).toEpochSecond();
    long until = date.plusDays(1).atStartOfDay(zone).toEpochSecond();
    if (i > 0) {
      from = Math.max(from, periods.get(i).from().getEpochSecond());
    }
    if (i < periods.size() - 1) {
      until = Math.min(until, periods.get(i + 1).from().getEpochSecond());
    }
    String key = date.toString();
    return new Day(from, until, key, key.substring(0, 7));
  }

  /** The day (in its zone) that {@code at} falls in. */
  public LocalDate dayOf(Instant at) {
    return LocalDate.ofInstant(at, zoneAt(at));
  }

  /** When the day window holding {@code at} began, in the zone counting it. */
  public Instant startOfDay(Instant at) {
    return dayOf(at).atStartOfDay(zoneAt(at)).toInstant();
  }

  /** When the day window holding {@code at} ends: the next midnight of its zone. */
  public Instant endOfDay(Instant at) {
    ZoneId zone = zoneAt(at);
    return dayOf(at).plusDays(1).atStartOfDay(zone).toInstant();
  }

  /** How long the day window holding {@code at} lasts (23 or 25 hours on a DST change). */
  public Duration lengthOfDay(Instant at) {
    return Duration.between(startOfDay(at), endOfDay(at));
  }

  /**
   * This calendar with {@code zone} counting from the end of the day that holds {@code now}: the
   * current day window ends as it began, the next one is the new zone's. When {@code zone} is
   * already the current zone (see {@link #sameZone}), this calendar unchanged.
   */
  public WindowCalendar changedTo(ZoneId zone, Instant now) {
    if (sameZone(currentZone(), zone)) {
      return this;
    }
    return withZoneFrom(endOfDay(now), zone);
  }

  /**
   * This calendar with {@code zone} counting from {@code from}: a change already decided (by {@link
   * #changedTo}) applied as it was journaled. Periods that would start at or after {@code from} are
   * replaced.
   */
  public WindowCalendar withZoneFrom(Instant from, ZoneId zone) {
    List<Period> next = new ArrayList<>();
    for (Period p : periods) {
      if (p.from().isBefore(from)) {
        next.add(p);
      }
    }
    next.add(new Period(from, zone));
    return new WindowCalendar(next);
  }

  /**
   * Whether two zone ids count the same days: {@code UTC}, {@code Etc/UTC} and {@link
   * ZoneOffset#UTC} are one zone, so a journal's UTC and a configured {@code UTC} are no change.
   */
  public static boolean sameZone(ZoneId a, ZoneId b) {
    return a.equals(b) || a.normalized().equals(b.normalized());
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof WindowCalendar c && c.periods.equals(periods);
  }

  @Override
  public int hashCode() {
    return periods.hashCode();
  }

  @Override
  public String toString() {
    return "WindowCalendar" + periods;
  }
}
