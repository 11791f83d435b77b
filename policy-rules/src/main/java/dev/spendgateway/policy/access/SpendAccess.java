package dev.spendgateway.policy.access;

import dev.spendgateway.policy.access.BrandBudgets.BrandBudget;
import java.util.Objects;

/**
 * Who may spend, and from which pool. The gateway knows what a call may cost; this decides whether
 * the caller has a right to spend at all. A customer can never cost more than they paid; someone
 * without a plan costs next to nothing.
 */
public final class SpendAccess {
  /** The only purpose a free preview may spend on. */
  public static final String PREVIEW_PURPOSE = "preview";

  private SpendAccess() {}

  /** Why a caller may not spend. The wire names go into refusals and logs. */
  public enum DenialReason {
    /** A free preview asked for anything but the preview itself. */
    PREVIEW_ONLY("preview_only"),
    /** The package is chosen but not bought yet. */
    PENDING_PACKAGE("pending_package"),
    /** The package expired. */
    LAPSED("lapsed"),
    /** No plan we know of. */
    NO_PLAN("no_plan");

    private final String wireName;

    DenialReason(String wireName) {
      this.wireName = wireName;
    }

    public String wireName() {
      return wireName;
    }
  }

  /** The budget that comes with a grant; the caller sends it to the gateway as headers. */
  public sealed interface Budget {}

  /**
   * A paid brand's monthly and daily caps ({@code x-spend-brand-monthly-usd}, {@code -daily-usd}).
   */
  public record BrandCaps(BrandBudget budget) implements Budget {}

  /** A preview's lifetime cap ($0.60; enforced by the ledger per preview id). */
  public record PreviewCap(long lifetimeMicros) implements Budget {}

  /** The outcome of {@link #spendAccess}. */
  public sealed interface Decision {}

  /** Spend allowed on {@code lane}, within {@code budget}. */
  public record Granted(Lane lane, Budget budget) implements Decision {}

  /** Nothing may be spent. */
  public record Denied(DenialReason reason) implements Decision {}

  /**
   * Decides whether a call may spend.
   *
   * @param plan the plan behind the call
   * @param development whether the call comes from a developer's machine. It never widens access:
   *     development calls go to the live gateway and spend real money, so they get exactly the
   *     production answer. The flag is a parameter so the tables prove that for every state.
   * @param purpose what the spend is for; only {@value #PREVIEW_PURPOSE} is open to free previews
   */
  public static Decision spendAccess(PlanState plan, boolean development, String purpose) {
    Objects.requireNonNull(plan, "plan");
    if (plan instanceof PlanState.Active active) {
      return new Granted(
          Lane.APP,
          new BrandCaps(
              BrandBudgets.forPackage(
                  active.packagePriceMicros(), active.addOnsThisPeriodMicros())));
    }
    if (plan instanceof PlanState.FreePreview) {
      return PREVIEW_PURPOSE.equals(purpose)
          ? new Granted(Lane.TRIAL, new PreviewCap(BrandBudgets.PREVIEW_LIFETIME_MICROS))
          : new Denied(DenialReason.PREVIEW_ONLY);
    }
    if (plan instanceof PlanState.PendingPackage) {
      return new Denied(DenialReason.PENDING_PACKAGE);
    }
    if (plan instanceof PlanState.Lapsed) {
      return new Denied(DenialReason.LAPSED);
    }
    return new Denied(DenialReason.NO_PLAN);
  }
}
