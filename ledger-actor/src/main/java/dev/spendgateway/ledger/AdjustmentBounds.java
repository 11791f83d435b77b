package dev.spendgateway.ledger;

import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapCheck;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.Spend;
import dev.spendgateway.policy.money.Micros;
import java.time.Instant;
import java.util.List;
import java.util.function.Function;

/**
 * The limits on one operator adjustment, decided before it is journaled. A credit that took a
 * window's settled spend below zero would give that window more headroom than its cap (one large
 * credit switches every cap it touches off), and one mistyped amount must not move the books by
 * millions; so both are refused with nothing written.
 */
public final class AdjustmentBounds {
  private AdjustmentBounds() {}

  /** What the bounds say about one adjustment. */
  public sealed interface Verdict {}

  /** Within bounds: the adjustment may be journaled. */
  public record Within() implements Verdict {}

  /** {@code |delta|} is above the per-adjustment limit ({@code ledger.max-adjustment-usd}). */
  public record TooLarge(long deltaMicros, long maxMicros) implements Verdict {
    public String message(String field) {
      return field
          + " must be at most "
          + Micros.toUsd(maxMicros).toPlainString()
          + " USD either way per adjustment (ledger.max-adjustment-usd); a larger correction is several";
    }
  }

  /** The adjustment would leave {@code key}'s settled spend below zero. */
  public record BelowZero(CapKey key, long settledMicros, long deltaMicros) implements Verdict {
    public String message() {
      return "this adjustment of "
          + Micros.toUsd(deltaMicros).toPlainString()
          + " USD would take "
          + key.cap().wireName()
          + (key.subject() == null ? "" : " of " + key.subject())
          + " (window "
          + key.window()
          + ") below zero: its settled spend is "
          + Micros.toUsd(settledMicros).toPlainString()
          + " USD, so at most that much can be credited there";
    }
  }

  private static final Within WITHIN = new Within();

  /**
   * Checks {@code deltaMicros} on every cap of {@code lane}/{@code subject} in the windows of
   * {@code at} (a refund on the day of {@code at}): first its size, then, window by window in cap
   * order, that settled spend stays at zero or above.
   *
   * @param settled the current totals per cap key ({@link Spend#NONE} for a key never used)
   */
  public static Verdict check(
      Lane lane,
      String subject,
      long deltaMicros,
      Instant at,
      long maxMicros,
      Function<CapKey, Spend> settled) {
    return check(CapCheck.keysFor(lane, subject, at), deltaMicros, maxMicros, settled);
  }

  /**
   * Checks {@code deltaMicros} on the cap windows {@code moved} (those the adjustment would
   * change): first its size, then, window by window in the given order, that settled spend stays at
   * zero or above.
   */
  public static Verdict check(
      List<CapKey> moved, long deltaMicros, long maxMicros, Function<CapKey, Spend> settled) {
    if (deltaMicros > maxMicros || deltaMicros < -maxMicros) {
      return new TooLarge(deltaMicros, maxMicros);
    }
    if (deltaMicros >= 0) {
      return WITHIN;
    }
    for (CapKey key : moved) {
      long spent = settled.apply(key).settledMicros();
      if (spent + deltaMicros < 0) {
        return new BelowZero(key, spent, deltaMicros);
      }
    }
    return WITHIN;
  }
}
