package dev.spendgateway.policy.access;

/**
 * Model budgets derived from what a brand pays: a customer can never cost more than they paid, and
 * one afternoon of re-runs cannot use up the month.
 */
public final class BrandBudgets {
  /** The daily ceiling never drops below $3, so a small package can still do a day's real work. */
  public static final long MIN_DAILY_MICROS = 3_000_000L;

  /** A free preview may spend $0.60 over its whole life; it never resets. */
  public static final long PREVIEW_LIFETIME_MICROS = 600_000L;

  private static final long MONTHLY_SHARE_DIVISOR = 10L;

  private BrandBudgets() {}

  /**
   * A paid brand's model budget for the month and the day.
   *
   * @param monthlyMicros 10% of (package price + this period's add-ons), rounded down: the budget
   *     never exceeds the share paid for
   * @param dailyMicros half the monthly budget, at least $3, never above the monthly budget
   */
  public record BrandBudget(long monthlyMicros, long dailyMicros) {}

  public static BrandBudget forPackage(long packagePriceMicros, long addOnsThisPeriodMicros) {
    if (packagePriceMicros < 0 || addOnsThisPeriodMicros < 0) {
      throw new IllegalArgumentException("package price and add-ons cannot be negative");
    }
    long monthly =
        Math.addExact(packagePriceMicros, addOnsThisPeriodMicros) / MONTHLY_SHARE_DIVISOR;
    return new BrandBudget(monthly, dailyCeiling(monthly));
  }

  /** Half the monthly budget, raised to $3 when smaller, but never more than the month holds. */
  public static long dailyCeiling(long monthlyMicros) {
    return Math.min(Math.max(monthlyMicros / 2, MIN_DAILY_MICROS), monthlyMicros);
  }
}
