package dev.spendgateway.policy.catalog;

/** What a model does, which decides the route that may call it and how it is priced. */
public enum ModelKind {
  /** Text generation (Messages, Chat Completions, Responses); priced per token. */
  CHAT("chat"),
  /** Speech to text; priced per minute of audio. */
  TRANSCRIPTION("transcription");

  private final String wireName;

  ModelKind(String wireName) {
    this.wireName = wireName;
  }

  public String wireName() {
    return wireName;
  }

  public static ModelKind fromWireName(String name) {
    for (ModelKind k : values()) {
      if (k.wireName.equals(name)) {
        return k;
      }
    }
    throw new IllegalArgumentException("unknown model kind: " + name);
  }
}
