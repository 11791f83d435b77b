package dev.spendgateway.policy.caps;

import java.util.Optional;

/** The caps the ledger enforces, with the wire names `/usage` and refusals use. */
public enum CapName {
  GLOBAL_DAILY("global_daily"),
  GLOBAL_MONTHLY("global_monthly"),
  FREE_DAILY("free_daily"),
  TRIAL_DAILY("trial_daily"),
  PREVIEW_LIFETIME("preview_lifetime"),
  BRAND_DAILY("brand_daily"),
  BRAND_MONTHLY("brand_monthly");

  private final String wireName;

  CapName(String wireName) {
    this.wireName = wireName;
  }

  public String wireName() {
    return wireName;
  }

  /** Whether this cap is kept per brand or preview id (its `subject`). */
  public boolean perSubject() {
    return this == PREVIEW_LIFETIME || this == BRAND_DAILY || this == BRAND_MONTHLY;
  }

  public static Optional<CapName> fromWireName(String name) {
    for (CapName c : values()) {
      if (c.wireName.equals(name)) {
        return Optional.of(c);
      }
    }
    return Optional.empty();
  }
}
