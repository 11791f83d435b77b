package dev.spendgateway.upstream.sse;

/**
 * Memory bounds of the SSE decoder, so a malformed or hostile stream cannot make the tap hold
 * unbounded bytes. Lines or events over a bound are skipped (counted as malformed), never fatal:
 * the tap must not break the stream the client is reading.
 *
 * @param maxLineBytes longest line kept (config {@code providers.max-sse-line-bytes})
 * @param maxEventBytes largest event, all its data lines together ({@code
 *     providers.max-sse-event-bytes})
 */
public record SseLimits(int maxLineBytes, int maxEventBytes) {

  public SseLimits {
    if (maxLineBytes <= 0 || maxEventBytes <= 0) {
      throw new IllegalArgumentException("SSE limits must be positive");
    }
  }
}
