package dev.spendgateway.upstream.sse;

/**
 * One dispatched server-sent event, as the usage tap sees it.
 *
 * @param type the {@code event:} field, or {@code "message"} when the event had none (the SSE
 *     default; OpenAI chat chunks carry no event name)
 * @param data the {@code data:} lines joined with {@code \n}
 */
public record SseEvent(String type, String data) {

  /** The SSE default event type. */
  public static final String DEFAULT_TYPE = "message";

  public static SseEvent data(String data) {
    return new SseEvent(DEFAULT_TYPE, data);
  }
}
