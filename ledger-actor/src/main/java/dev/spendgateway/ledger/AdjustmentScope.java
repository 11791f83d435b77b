package dev.spendgateway.ledger;

import java.util.Optional;

/**
 * Which caps an operator adjustment moves. The difference is whose money it is: a grant is the
 * company giving one brand (or preview) room under its own caps, while the provider's bill — and so
 * the lane pools and the company-wide caps — is unchanged; a refund is the provider giving money
 * back (or a missed bill being charged), which changes what the company spent, so it moves every
 * cap of the lane.
 */
public enum AdjustmentScope {
  /** Only the subject's own caps (brand daily/monthly, preview lifetime). */
  GRANT("grant"),
  /** Every cap of the lane: the subject's own, the lane's pool and the global caps. */
  REFUND("refund");

  private final String wireName;

  AdjustmentScope(String wireName) {
    this.wireName = wireName;
  }

  public String wireName() {
    return wireName;
  }

  public static Optional<AdjustmentScope> fromWireName(String name) {
    for (AdjustmentScope s : values()) {
      if (s.wireName.equals(name)) {
        return Optional.of(s);
      }
    }
    return Optional.empty();
  }
}
