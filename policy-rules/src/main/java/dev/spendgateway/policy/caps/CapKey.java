package dev.spendgateway.policy.caps;

import java.util.Objects;

/**
 * One cap in one window: {@code (global_daily, null, 2026-11-30)}, {@code (brand_monthly, b1,
 * 2026-11)}, {@code (preview_lifetime, p7, lifetime)}. The key the ledger totals spend under.
 */
public record CapKey(CapName cap, String subject, String window) {
  public CapKey {
    Objects.requireNonNull(cap, "cap");
    Objects.requireNonNull(window, "window");
    if (cap.perSubject() != (subject != null)) {
      throw new IllegalArgumentException(
          cap.wireName() + " subject must be " + (cap.perSubject() ? "set" : "null"));
    }
  }
}
