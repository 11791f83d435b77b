package dev.spendgateway.policy.caps;

import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;

/**
 * UTC window keys: the day ({@code 2026-11-30}) and month ({@code 2026-11}) an instant falls in,
 * and the single key of lifetime caps. Spend counts in the window of the instant it was reserved.
 */
public final class CapWindows {
  /** The window key of caps that never roll over (the preview lifetime cap). */
  public static final String LIFETIME = "lifetime";

  private CapWindows() {}

  public static String dayKey(Instant at) {
    return LocalDate.ofInstant(at, ZoneOffset.UTC).toString();
  }

  /**
   * {@code yyyy-MM}: the first seven characters of the ISO day (on the ledger's hot path, so no
   * format()).
   */
  public static String monthKey(Instant at) {
    return dayKey(at).substring(0, 7);
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
