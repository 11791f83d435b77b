package dev.spendgateway.policy.catalog;

/** An upstream AI provider the gateway can call. */
public enum Provider {
  OPENAI("openai"),
  ANTHROPIC("anthropic");

  private final String wireName;

  Provider(String wireName) {
    this.wireName = wireName;
  }

  /** The lower-case name used in URLs, headers, logs and config. */
  public String wireName() {
    return wireName;
  }

  public static Provider fromWireName(String name) {
    for (Provider p : values()) {
      if (p.wireName.equals(name)) {
        return p;
      }
    }
    throw new IllegalArgumentException("unknown provider: " + name);
  }
}
