package dev.spendgateway.upstream.failover;

import java.util.Locale;

/** Admission pool of a routed call: interactive callers never wait behind batch work. */
public enum Pool {
  INTERACTIVE("interactive"),
  BATCH("batch");

  private final String wireName;

  Pool(String wireName) {
    this.wireName = wireName;
  }

  /** The name used in {@code x-priority}, config and metrics. */
  public String wireName() {
    return wireName;
  }

  public static Pool fromWireName(String name) {
    for (Pool p : values()) {
      if (p.wireName.equals(name.toLowerCase(Locale.ROOT))) {
        return p;
      }
    }
    throw new IllegalArgumentException("unknown pool '" + name + "' (interactive or batch)");
  }
}
