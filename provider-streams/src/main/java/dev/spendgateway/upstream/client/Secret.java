package dev.spendgateway.upstream.client;

import java.util.Optional;

/**
 * A credential that never prints itself: {@code toString} is redacted, so a key can't reach a log
 * through a record's generated {@code toString} or a debug print.
 */
public final class Secret {

  private final String value;

  private Secret(String value) {
    this.value = value;
  }

  /** Empty for a blank value (no key configured). */
  public static Optional<Secret> of(String value) {
    return value == null || value.isBlank() ? Optional.empty() : Optional.of(new Secret(value));
  }

  /** The credential itself; only for building the outgoing auth header. */
  public String reveal() {
    return value;
  }

  @Override
  public String toString() {
    return "Secret(***)";
  }
}
