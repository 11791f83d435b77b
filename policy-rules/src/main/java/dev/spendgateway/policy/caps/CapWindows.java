package dev.spendgateway.policy.caps;

import java.time.Instant;
import java.time.LocalDate;

/**
 * UTC window keys: the day ({@code 2026-11-30}) and month ({@code 2026-11}) an instant falls in,
 * and the single key of lifetime caps. Spend counts in the window of the instant it was reserved.
 */
public final class CapWindows {
  /** The window key of caps that never roll over (the preview lifetime cap). */
  public static final String LIFETIME = "lifetime";

  private CapWindows() {}

  /**
   * The last day asked for, with its keys. The ledger asks for the day of every reservation it
   * decides or replays, nearly always the same day: handing out the same strings skips formatting a
   * date and lets the cap keys built on them reuse the strings' cached hash codes. Immutable and
   * published whole, so any thread sees a consistent day or computes its own.
   */
  private record Day(long epochDay, String dayKey, String monthKey) {
    static Day of(long epochDay) {
      String day = LocalDate.ofEpochDay(epochDay).toString();
      return new Day(epochDay, day, day.substring(0, 7));
    }
  }

  private static volatile Day lastDay = Day.of(0);

  public static String dayKey(Instant at) {
    return dayOf(at).dayKey();
  }

  /** {@code yyyy-MM}: the first seven characters of the ISO day. */
  public static String monthKey(Instant at) {
    return dayOf(at).monthKey();
  }

  private static Day dayOf(Instant at) {
    // The UTC day, as LocalDate.ofInstant(at, UTC) computes it.
    long epochDay = Math.floorDiv(at.getEpochSecond(), 86_400L);
    Day day = lastDay;
    if (day.epochDay() != epochDay) {
      day = Day.of(epochDay);
      lastDay = day;
    }
    return day;
  }

  /** The window of {@code cap} that {@code at} falls in. */
  public static String windowOf(CapName cap, Instant at) {
    return switch (cap) {
      case GLOBAL_DAILY, FREE_DAILY, TRIAL_DAILY, BRAND_DAILY -> dayKey(at);
      case GLOBAL_MONTHLY, BRAND_MONTHLY -> monthKey(at);
      case PREVIEW_LIFETIME -> LIFETIME;
    };
  }
}
