package dev.spendgateway.policy.access;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.spendgateway.policy.access.BrandBudgets.BrandBudget;
import dev.spendgateway.policy.money.Micros;
import java.math.BigDecimal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class BrandBudgetsTest {

  @ParameterizedTest(name = "package ${0} + add-ons ${1} -> ${2}/month, ${3}/day")
  @CsvSource({
    // package, add-ons, monthly, daily
    "199,       0,       19.9,    9.95", // half of the month
    "199,       50,      24.9,    12.45", // add-ons count toward the month
    "100,       0,       10,      5",
    "60,        0,       6,       3", // half is exactly the $3 floor
    "49,        0,       4.9,     3", // half is below $3: raised to $3
    "20,        0,       2,       2", // the floor never exceeds the month
    "0,         0,       0,       0", // nothing paid, nothing to spend
    "0,         30,      3,       3", // add-ons alone
    "0.05,      0,       0.005,   0.005",
    "0.000005,  0,       0,       0", // fractions of a micro round down: never above what was paid
  })
  void monthlyIsTenPercentAndDailyIsHalfWithinBounds(
      BigDecimal packageUsd, BigDecimal addOnsUsd, BigDecimal monthlyUsd, BigDecimal dailyUsd) {
    BrandBudget b =
        BrandBudgets.forPackage(Micros.ofUsdExact(packageUsd), Micros.ofUsdExact(addOnsUsd));
    assertEquals(Micros.ofUsdExact(monthlyUsd), b.monthlyMicros());
    assertEquals(Micros.ofUsdExact(dailyUsd), b.dailyMicros());
  }

  @Test
  void thePreviewBudgetIsSixtyCents() {
    assertEquals(Micros.ofUsdExact(new BigDecimal("0.60")), BrandBudgets.PREVIEW_LIFETIME_MICROS);
  }

  @Test
  void negativeAmountsAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> BrandBudgets.forPackage(-1, 0));
    assertThrows(IllegalArgumentException.class, () -> BrandBudgets.forPackage(0, -1));
  }
}
