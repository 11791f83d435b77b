package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.spendgateway.ledger.AdjustmentBounds.BelowZero;
import dev.spendgateway.ledger.AdjustmentBounds.TooLarge;
import dev.spendgateway.ledger.AdjustmentBounds.Verdict;
import dev.spendgateway.ledger.AdjustmentBounds.Within;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapName;
import dev.spendgateway.policy.caps.Spend;
import dev.spendgateway.policy.money.Micros;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The bounds of one operator adjustment, one row per rule; settled spend as in {@link #SPENT}. */
class AdjustmentBoundsTest {
  private static final Instant AT = Instant.parse("2026-11-30T10:00:00Z");
  private static final long MAX = usd("1000");

  /** Global 5 today and 20 this month; free 1; brand b1 2 today, 3 this month; preview p1 0.40. */
  private static final Map<CapKey, Spend> SPENT =
      Map.of(
          new CapKey(CapName.GLOBAL_DAILY, null, "2026-11-30"), new Spend(usd("5"), usd("1")),
          new CapKey(CapName.GLOBAL_MONTHLY, null, "2026-11"), new Spend(usd("20"), 0),
          new CapKey(CapName.FREE_DAILY, null, "2026-11-30"), new Spend(usd("1"), 0),
          new CapKey(CapName.BRAND_DAILY, "b1", "2026-11-30"), new Spend(usd("2"), 0),
          new CapKey(CapName.BRAND_MONTHLY, "b1", "2026-11"), new Spend(usd("3"), 0),
          new CapKey(CapName.PREVIEW_LIFETIME, "p1", "lifetime"), new Spend(usd("0.40"), 0));

  private static long usd(String amount) {
    return Micros.ofUsdExact(new BigDecimal(amount));
  }

  @ParameterizedTest(name = "{0} {1} on {2}/{3}: {4} {5}")
  @CsvSource(
      delimiter = '|',
      nullValues = "-",
      textBlock =
          """
      a charge of           | 0.10        | app   | b9 | within    | -
      a charge at the limit of | 1000     | free  | -  | within    | -
      a charge above the limit of | 1000.000001 | free | - | too large | -
      a credit above the limit of | -1000.000001 | app | b1 | too large | -
      a credit of a million | -1000000    | free  | -  | too large | -
      a credit of all b1's day spend | -2 | app   | b1 | within    | -
      a credit past b1's day spend | -2.000001 | app | b1 | below zero | brand_daily
      a credit of a brand with no spend | -0.01 | app | b9 | below zero | brand_daily
      a credit past the free pool | -1.50 | free  | -  | below zero | free_daily
      a credit past the global day | -6  | trial | p1 | below zero | global_daily
      a credit past the trial pool | -0.50   | trial | p1 | below zero | trial_daily
      """)
  void decides(
      String what, String deltaUsd, String lane, String subject, String verdict, String cap) {
    Verdict v =
        AdjustmentBounds.check(
            Lane.fromWireName(lane).orElseThrow(),
            subject,
            usd(deltaUsd),
            AT,
            MAX,
            k -> SPENT.getOrDefault(k, Spend.NONE));
    switch (verdict) {
      case "within" -> assertEquals(new Within(), v);
      case "too large" -> assertEquals(new TooLarge(usd(deltaUsd), MAX), v);
      case "below zero" -> assertEquals(cap, ((BelowZero) v).key().cap().wireName());
      default -> throw new AssertionError(verdict);
    }
  }
}
