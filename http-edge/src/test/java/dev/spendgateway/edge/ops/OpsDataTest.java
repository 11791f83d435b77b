package dev.spendgateway.edge.ops;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.spendgateway.ledger.LedgerProtocol.CapUsage;
import dev.spendgateway.policy.caps.CapName;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The screen's "Top brands" are the biggest spenders first, whatever their names. */
class OpsDataTest {
  private static CapUsage cap(CapName name, String subject, long spent, long reserved) {
    return new CapUsage(name, subject, "2026-12-05", 10_000_000, spent, reserved);
  }

  @Test
  void brandsAreListedByWhatTheyUsedTodayTheBiggestFirst() {
    // As the ledger lists them: global and pool caps, then the brands by name.
    List<CapUsage> ledgerOrder =
        List.of(
            cap(CapName.GLOBAL_DAILY, null, 900, 0),
            cap(CapName.BRAND_DAILY, "acme", 100, 0),
            cap(CapName.BRAND_MONTHLY, "acme", 5_000, 0),
            cap(CapName.BRAND_DAILY, "beta", 300, 200),
            cap(CapName.BRAND_MONTHLY, "beta", 500, 200),
            cap(CapName.BRAND_DAILY, "zeta", 400, 0),
            cap(CapName.BRAND_MONTHLY, "zeta", 400, 0));

    List<String> order =
        OpsData.brandsBySpend(ledgerOrder).stream()
            .map(c -> c.cap().name() + ":" + c.subject())
            .toList();

    assertEquals(
        List.of(
            "GLOBAL_DAILY:null",
            "BRAND_DAILY:beta", // 500 used today (300 spent + 200 held)
            "BRAND_MONTHLY:beta",
            "BRAND_DAILY:zeta", // 400
            "BRAND_MONTHLY:zeta",
            "BRAND_DAILY:acme", // 100 today, though the most this month
            "BRAND_MONTHLY:acme"),
        order);
  }
}
