package dev.spendgateway.policy.access;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.spendgateway.policy.access.BrandBudgets.BrandBudget;
import dev.spendgateway.policy.access.PlanState.PaidKind;
import dev.spendgateway.policy.access.SpendAccess.BrandCaps;
import dev.spendgateway.policy.access.SpendAccess.Decision;
import dev.spendgateway.policy.access.SpendAccess.Denied;
import dev.spendgateway.policy.access.SpendAccess.Granted;
import dev.spendgateway.policy.access.SpendAccess.PreviewCap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SpendAccessTest {

  /**
   * Every plan state x purpose x development flag. Outcome is a lane ({@code app}, {@code trial})
   * or a denial reason. Development never changes the answer: dev machines spend real money too.
   */
  @ParameterizedTest(name = "{0} plan, development={1}, purpose={2} -> {3}")
  @CsvSource(
      nullValues = "none",
      value = {
        "paid,     false, generation, app",
        "paid,     true,  generation, app",
        "paid,     false, preview,    app",
        "paid,     false, none,       app",
        "internal, false, generation, app",
        "internal, true,  generation, app",
        "internal, false, preview,    app",
        "preview,  false, preview,    trial",
        "preview,  true,  preview,    trial",
        "preview,  false, generation, preview_only",
        "preview,  true,  generation, preview_only",
        "preview,  false, none,       preview_only",
        "preview,  false, Preview,    preview_only",
        "pending,  false, generation, pending_package",
        "pending,  true,  generation, pending_package",
        "pending,  false, preview,    pending_package",
        "lapsed,   false, generation, lapsed",
        "lapsed,   true,  generation, lapsed",
        "lapsed,   false, preview,    lapsed",
        "unknown,  false, generation, no_plan",
        "unknown,  true,  generation, no_plan",
        "unknown,  false, preview,    no_plan",
      })
  void decidesWhoMaySpendAndFromWhichPool(
      String state, boolean development, String purpose, String outcome) {
    Decision d = SpendAccess.spendAccess(plan(state), development, purpose);
    String actual = d instanceof Granted g ? g.lane().wireName() : ((Denied) d).reason().wireName();
    assertEquals(outcome, actual);
  }

  @Test
  void aPaidBrandIsGrantedItsBudgetFromWhatItPays() {
    Granted g =
        assertInstanceOf(
            Granted.class,
            SpendAccess.spendAccess(
                new PlanState.Active("pro", PaidKind.PAID, 199_000_000, 50_000_000), false, "x"));
    assertEquals(
        new BrandBudget(24_900_000, 12_450_000),
        assertInstanceOf(BrandCaps.class, g.budget()).budget());
  }

  @Test
  void aPreviewIsGrantedSixtyCentsForItsLifetime() {
    Granted g =
        assertInstanceOf(
            Granted.class,
            SpendAccess.spendAccess(new PlanState.FreePreview("p1"), false, "preview"));
    assertEquals(600_000, assertInstanceOf(PreviewCap.class, g.budget()).lifetimeMicros());
  }

  @Test
  void impossiblePlansAreRefused() {
    assertThrows(
        IllegalArgumentException.class, () -> new PlanState.Active("x", PaidKind.PAID, -1, 0));
    assertThrows(NullPointerException.class, () -> SpendAccess.spendAccess(null, false, "x"));
  }

  private static PlanState plan(String state) {
    return switch (state) {
      case "paid" -> new PlanState.Active("pro", PaidKind.PAID, 99_000_000, 0);
      case "internal" -> new PlanState.Active("house", PaidKind.INTERNAL, 500_000_000, 0);
      case "preview" -> new PlanState.FreePreview("preview-1");
      case "pending" -> new PlanState.PendingPackage("pro");
      case "lapsed" -> new PlanState.Lapsed("pro");
      default -> new PlanState.Unknown("nope");
    };
  }
}
