package dev.spendgateway.policy.caps;

import dev.spendgateway.policy.access.Lane;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Pure cap rules. {@link #capsFor} lists, in checking order, the caps a reservation on a lane is
 * held against; {@link #firstFailing} picks the first of them that cannot take the amount.
 *
 * <p>Order: the global caps first (they protect the company), then the lane's pool, then the
 * subject's own caps. The trial lane never touches a brand cap and the app lane never touches the
 * trial pool, so unpaid use cannot spend a paid brand's budget.
 */
public final class CapCheck {
  private CapCheck() {}

  /** A cap key together with its limit for one reservation. */
  public record Applicable(CapKey key, long limitMicros) {}

  /** The first cap that refuses, with the headroom it had left (never below zero). */
  public record Failure(CapKey key, long limitMicros, long headroomMicros) {}

  /**
   * The caps a reservation is held against, in checking order.
   *
   * @param subject brand id (app) or preview id (trial); ignored for free
   * @param brandDailyMicros brand daily cap from the request (app lane only)
   * @param brandMonthlyMicros brand monthly cap from the request (app lane only)
   */
  public static List<Applicable> capsFor(
      Lane lane,
      String subject,
      long brandDailyMicros,
      long brandMonthlyMicros,
      Instant reservedAt,
      CapLimits limits) {
    return capsFor(
        lane,
        subject,
        brandDailyMicros,
        brandMonthlyMicros,
        reservedAt,
        WindowCalendar.UTC,
        limits);
  }

  /**
   * As above, in the windows {@code calendar} counts {@code reservedAt} in (the ledger's calendar:
   * {@code ledger.window-zone} and the zones it had before).
   */
  public static List<Applicable> capsFor(
      Lane lane,
      String subject,
      long brandDailyMicros,
      long brandMonthlyMicros,
      Instant reservedAt,
      WindowCalendar calendar,
      CapLimits limits) {
    return capsIn(
        lane,
        subject,
        brandDailyMicros,
        brandMonthlyMicros,
        calendar.dayKey(reservedAt),
        calendar.monthKey(reservedAt),
        limits);
  }

  /**
   * The caps a reservation is held against in the day window {@code day} ({@code 2026-12-05}) and
   * the month window {@code month} ({@code 2026-12}), in checking order.
   */
  public static List<Applicable> capsIn(
      Lane lane,
      String subject,
      long brandDailyMicros,
      long brandMonthlyMicros,
      String day,
      String month,
      CapLimits limits) {
    List<Applicable> caps = new ArrayList<>(4);
    caps.add(
        new Applicable(new CapKey(CapName.GLOBAL_DAILY, null, day), limits.globalDailyMicros()));
    caps.add(
        new Applicable(
            new CapKey(CapName.GLOBAL_MONTHLY, null, month), limits.globalMonthlyMicros()));
    switch (lane) {
      case FREE ->
          caps.add(
              new Applicable(new CapKey(CapName.FREE_DAILY, null, day), limits.freeDailyMicros()));
      case TRIAL -> {
        caps.add(
            new Applicable(new CapKey(CapName.TRIAL_DAILY, null, day), limits.trialDailyMicros()));
        caps.add(
            new Applicable(
                new CapKey(CapName.PREVIEW_LIFETIME, subject, CapWindows.LIFETIME),
                limits.previewLifetimeMicros()));
      }
      case APP -> {
        caps.add(new Applicable(new CapKey(CapName.BRAND_DAILY, subject, day), brandDailyMicros));
        caps.add(
            new Applicable(new CapKey(CapName.BRAND_MONTHLY, subject, month), brandMonthlyMicros));
      }
    }
    return caps;
  }

  /**
   * The keys a reservation's spend is counted under (the windows of {@link #capsFor}, limits
   * aside): what a settle, void, expiry or adjustment moves.
   */
  public static List<CapKey> keysFor(Lane lane, String subject, Instant reservedAt) {
    return keysFor(lane, subject, reservedAt, WindowCalendar.UTC);
  }

  /** As above, in the windows {@code calendar} counts {@code reservedAt} in. */
  public static List<CapKey> keysFor(
      Lane lane, String subject, Instant reservedAt, WindowCalendar calendar) {
    return keysIn(lane, subject, calendar.dayKey(reservedAt), calendar.monthKey(reservedAt));
  }

  /**
   * The keys of {@link #capsIn}: a reservation's caps in the windows {@code day} and {@code month}.
   */
  public static List<CapKey> keysIn(Lane lane, String subject, String day, String month) {
    // Called for every reservation the ledger makes, closes or replays: a loop, not a stream.
    List<Applicable> caps = capsIn(lane, subject, 0, 0, day, month, NO_LIMITS);
    CapKey[] keys = new CapKey[caps.size()];
    for (int i = 0; i < keys.length; i++) {
      keys[i] = caps.get(i).key();
    }
    return List.of(keys);
  }

  private static final CapLimits NO_LIMITS = new CapLimits(0, 0, 0, 0, 0);

  /**
   * The first cap in {@code caps} whose headroom is below {@code amountMicros}, or empty when all
   * admit it.
   *
   * @param spent the totals per cap key ({@link Spend#NONE} for a key never used)
   */
  public static Optional<Failure> firstFailing(
      List<Applicable> caps, long amountMicros, Function<CapKey, Spend> spent) {
    for (Applicable cap : caps) {
      Spend s = spent.apply(cap.key());
      CapUse use = new CapUse(cap.key(), cap.limitMicros(), s.settledMicros(), s.reservedMicros());
      if (!use.admits(amountMicros)) {
        return Optional.of(
            new Failure(cap.key(), cap.limitMicros(), Math.max(0, use.headroomMicros())));
      }
    }
    return Optional.empty();
  }
}
