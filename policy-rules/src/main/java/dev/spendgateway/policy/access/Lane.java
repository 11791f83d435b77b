package dev.spendgateway.policy.access;

import java.util.Optional;

/**
 * The spend lane a call is charged to (header {@code x-spend-lane}). Each lane has its own pool so
 * unpaid use can never spend a paid brand's budget.
 */
public enum Lane {
  /** A paid brand; capped by the brand's daily and monthly caps sent with the call. */
  APP("app"),
  /** A free preview; capped by the trial pool and a lifetime cap per preview id. */
  TRIAL("trial"),
  /** Public free tools; capped by the free pool. */
  FREE("free");

  private final String wireName;

  Lane(String wireName) {
    this.wireName = wireName;
  }

  public String wireName() {
    return wireName;
  }

  /** Whether calls on this lane must name a subject (brand id or preview id). */
  public boolean needsSubject() {
    return this != FREE;
  }

  public static Optional<Lane> fromWireName(String name) {
    for (Lane l : values()) {
      if (l.wireName.equals(name)) {
        return Optional.of(l);
      }
    }
    return Optional.empty();
  }
}
