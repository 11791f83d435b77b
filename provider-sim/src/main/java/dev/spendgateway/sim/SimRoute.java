package dev.spendgateway.sim;

import java.util.Locale;

/**
 * The provider endpoints the simulator serves; faults are scripted and calls recorded per route.
 */
public enum SimRoute {
  OPENAI_CHAT("openai.chat", Provider.OPENAI, "/v1/chat/completions"),
  OPENAI_RESPONSES("openai.responses", Provider.OPENAI, "/v1/responses"),
  OPENAI_TRANSCRIPTIONS("openai.transcriptions", Provider.OPENAI, "/v1/audio/transcriptions"),
  ANTHROPIC_MESSAGES("anthropic.messages", Provider.ANTHROPIC, "/v1/messages"),
  /** Submitting a video job; the media provider speaks OpenAI's Videos API. */
  MEDIA_CREATE("media.create", Provider.OPENAI, "/v1/videos"),
  /** Polling, downloading and deleting a video job. */
  MEDIA_RETRIEVE("media.retrieve", Provider.OPENAI, "/v1/videos/{id}");

  /** Which wire dialect (error shape, request-id header) a route speaks. */
  public enum Provider {
    OPENAI,
    ANTHROPIC
  }

  private final String wireName;
  private final Provider provider;
  private final String path;

  SimRoute(String wireName, Provider provider, String path) {
    this.wireName = wireName;
    this.provider = provider;
    this.path = path;
  }

  /** The name used by the HTTP scripting API, e.g. {@code "openai.chat"}. */
  public String wireName() {
    return wireName;
  }

  public Provider provider() {
    return provider;
  }

  /** The request path, e.g. {@code /v1/chat/completions}. */
  public String path() {
    return path;
  }

  /** Accepts the wire name ({@code openai.chat}) or the enum name ({@code OPENAI_CHAT}). */
  public static SimRoute parse(String name) {
    for (SimRoute r : values()) {
      if (r.wireName.equalsIgnoreCase(name) || r.name().equalsIgnoreCase(name)) {
        return r;
      }
    }
    throw new IllegalArgumentException(
        "unknown route '"
            + name
            + "'; expected one of openai.chat, openai.responses,"
            + " openai.transcriptions, anthropic.messages, media.create, media.retrieve");
  }

  @Override
  public String toString() {
    return wireName.toLowerCase(Locale.ROOT);
  }
}
