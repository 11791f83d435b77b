package dev.spendgateway.policy.catalog;

/**
 * Where a model is in its provider's lifecycle. The catalog tracks it so a retired model is refused
 * with a clear message by the gateway, never discovered through a burst of provider 410s.
 */
public enum Lifecycle {
  /** Served normally. */
  ACTIVE("active"),
  /** Still served, but every call carries a warning naming the end-of-support date. */
  DEPRECATED("deprecated"),
  /** No longer served by the provider; refused by policy before any spend is reserved. */
  RETIRED("retired");

  private final String wireName;

  Lifecycle(String wireName) {
    this.wireName = wireName;
  }

  public String wireName() {
    return wireName;
  }

  public static Lifecycle fromWireName(String name) {
    for (Lifecycle l : values()) {
      if (l.wireName.equals(name)) {
        return l;
      }
    }
    throw new IllegalArgumentException("unknown lifecycle: " + name);
  }
}
