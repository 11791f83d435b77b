package dev.spendgateway.ledger;

import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapCheck;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapWindows;
import dev.spendgateway.policy.caps.WindowCalendar;
import java.time.Instant;
import java.time.LocalDate;
import java.time.YearMonth;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Optional;

/**
 * The cap window an operator adjustment corrects, in the ledger's own window keys: a day ({@code
 * 2026-11-29}) or a month ({@code 2026-11}) of the ledger's calendar ({@code ledger.window-zone},
 * UTC by default; see {@link WindowCalendar}). Pure functions only.
 *
 * <p>An adjustment moves the caps whose window contains the one it names, and no other: a day's
 * correction moves that day, the month the day is in (the month's spend is the sum of its days) and
 * lifetime caps; a month's correction moves that month and lifetime caps, never a day. So a refund
 * for yesterday can never give today's daily caps room that today's spend did not free.
 */
public final class AdjustmentWindow {
  private AdjustmentWindow() {}

  /** Whether {@code window} is a day key ({@code yyyy-MM-dd}) or a month key ({@code yyyy-MM}). */
  public static boolean isValid(String window) {
    return start(window).isPresent();
  }

  /** Whether {@code window} begins after {@code now}'s UTC day: nothing was spent there yet. */
  public static boolean isInTheFuture(String window, Instant now) {
    return isInTheFuture(window, now, WindowCalendar.UTC);
  }

  /**
   * Whether {@code window} comes after {@code now}'s window of the same length in {@code calendar}:
   * nothing was spent there yet.
   */
  public static boolean isInTheFuture(String window, Instant now, WindowCalendar calendar) {
    if (!isValid(window)) {
      return false;
    }
    String current = window.length() == 10 ? calendar.dayKey(now) : calendar.monthKey(now);
    return window.compareTo(current) > 0;
  }

  /**
   * The cap keys an adjustment of {@code scope} on {@code window} moves (valid window assumed), in
   * the order the caps are checked.
   */
  public static List<CapKey> keys(Lane lane, String subject, String window, AdjustmentScope scope) {
    if (!isValid(window)) {
      throw new IllegalArgumentException("not a window: " + window);
    }
    boolean day = window.length() == 10;
    // The keys are the window's own name (and its month): the same in every zone.
    // For a month, its first day stands in for the day keys, which are then left out.
    String dayKey = day ? window : window + "-01";
    return CapCheck.keysIn(lane, subject, dayKey, window.substring(0, 7)).stream()
        .filter(k -> day || !isDayKey(k))
        .filter(k -> scope == AdjustmentScope.REFUND || k.cap().perSubject())
        .toList();
  }

  /**
   * Whether {@code key}'s window ended before {@code now}'s window of the same length: no reserve
   * is decided against it any more (lifetime windows never end).
   */
  public static boolean hasEnded(CapKey key, Instant now) {
    return hasEnded(key, now, WindowCalendar.UTC);
  }

  /** As above, with {@code now}'s windows in {@code calendar}. */
  public static boolean hasEnded(CapKey key, Instant now, WindowCalendar calendar) {
    if (key.window().equals(CapWindows.LIFETIME)) {
      return false;
    }
    String current = isDayKey(key) ? calendar.dayKey(now) : calendar.monthKey(now);
    return key.window().compareTo(current) < 0;
  }

  private static boolean isDayKey(CapKey key) {
    return key.window().length() == 10;
  }

  private static Optional<Instant> start(String window) {
    if (window == null) {
      return Optional.empty();
    }
    try {
      if (window.length() == 10) {
        return Optional.of(LocalDate.parse(window).atStartOfDay(ZoneOffset.UTC).toInstant());
      }
      if (window.length() == 7) {
        return Optional.of(
            YearMonth.parse(window).atDay(1).atStartOfDay(ZoneOffset.UTC).toInstant());
      }
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
    return Optional.empty();
  }
}
