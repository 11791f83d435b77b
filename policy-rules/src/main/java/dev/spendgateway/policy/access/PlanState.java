package dev.spendgateway.policy.access;

import java.util.Objects;

/**
 * What the web side knows about the plan behind a call. The plan belongs to the brand, not the
 * workspace: each brand comes with its own package and budget.
 */
public sealed interface PlanState {

  /** The plan id, as the web side stores it (for logs and messages). */
  String planId();

  /** Whether a paid plan is a customer's purchase or one of our own internal brands. */
  enum PaidKind {
    PAID,
    INTERNAL
  }

  /**
   * An active paid or internal package.
   *
   * @param packagePriceMicros what the package costs per period (internal plans carry a nominal
   *     price: the budget is derived from it the same way)
   * @param addOnsThisPeriodMicros add-ons bought in the current period
   */
  record Active(String planId, PaidKind kind, long packagePriceMicros, long addOnsThisPeriodMicros)
      implements PlanState {
    public Active {
      Objects.requireNonNull(planId, "planId");
      Objects.requireNonNull(kind, "kind");
      if (packagePriceMicros < 0 || addOnsThisPeriodMicros < 0) {
        throw new IllegalArgumentException("package price and add-ons cannot be negative");
      }
    }
  }

  /** A free preview: may only spend on the preview itself, from the trial pool. */
  record FreePreview(String planId) implements PlanState {}

  /** A brand whose package is chosen but not yet bought. */
  record PendingPackage(String planId) implements PlanState {}

  /** A package whose period ran out without renewal. */
  record Lapsed(String planId) implements PlanState {}

  /** A plan id the web side does not know (or none at all). */
  record Unknown(String planId) implements PlanState {}
}
