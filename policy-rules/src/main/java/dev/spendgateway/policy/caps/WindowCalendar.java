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

  private WindowCalendar(List<Period> periods) {
    this.periods = List.copyOf(periods);
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
    return LocalDate.ofInstant(at, zoneAt(at)).toString();
  }

  /** The month window of {@code at}: {@code 2026-12}. */
  public String monthKey(Instant at) {
    return dayKey(at).substring(0, 7);
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
   * already the current zone, this calendar unchanged.
   */
  public WindowCalendar changedTo(ZoneId zone, Instant now) {
    if (currentZone().equals(zone)) {
      return this;
    }
    Instant from = endOfDay(now);
    List<Period> next = new ArrayList<>();
    for (Period p : periods) {
      if (p.from().isBefore(from)) {
        next.add(p);
      }
    }
    next.add(new Period(from, zone));
    return new WindowCalendar(next);
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
