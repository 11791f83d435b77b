package dev.spendgateway.upstream.sse;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.util.ByteString;

/**
 * Incremental, bounded decoder of a {@code text/event-stream} body (WHATWG HTML "server-sent
 * events" parsing rules): lines end in LF, CR or CRLF (also split across chunks); a blank line
 * dispatches the event; lines starting with {@code :} are comments; {@code data:} lines are joined
 * with LF; a single space after the colon is dropped; unknown fields are ignored.
 *
 * <p>One instance per stream, driven by one stream stage (not thread-safe). Unlike Pekko's own
 * {@code EventStreamParser}, it bounds the <em>unterminated</em> line too (a newline-free body
 * cannot grow the buffer) and never fails: oversized lines/events are dropped and counted in {@link
 * #malformed()}.
 */
public final class SseDecoder {

  private static final byte CR = '\r';
  private static final byte LF = '\n';

  private final SseLimits limits;
  private ByteString pendingLine = ByteString.emptyByteString();
  private boolean skippingLine;
  private boolean lastByteWasCr;

  private String eventType;
  private final StringBuilder data = new StringBuilder();
  private boolean hasData;
  private int eventBytes;
  private boolean skippingEvent;
  private long malformed;

  public SseDecoder(SseLimits limits) {
    this.limits = limits;
  }

  /** Feeds the next chunk of the body; returns the events it completed (often none). */
  public List<SseEvent> feed(ByteString chunk) {
    List<SseEvent> out = new ArrayList<>(2);
    int lineStart = 0;
    int n = chunk.size();
    for (int i = 0; i < n; i++) {
      byte b = chunk.apply(i);
      if (b == LF && lastByteWasCr) {
        lastByteWasCr = false;
        lineStart = i + 1;
      } else if (b == LF || b == CR) {
        endLine(chunk.slice(lineStart, i), out);
        lastByteWasCr = b == CR;
        lineStart = i + 1;
      } else {
        lastByteWasCr = false;
      }
    }
    keepPartialLine(chunk.slice(lineStart, n));
    return out;
  }

  /**
   * The body ended. An event whose last line was terminated but lacked the closing blank line is
   * still dispatched (lenient: a provider that forgets the final blank line still gets its usage
   * counted); a half-received line is dropped.
   */
  public List<SseEvent> finish() {
    List<SseEvent> out = new ArrayList<>(1);
    dispatch(out);
    return out;
  }

  /** Lines or events dropped because they broke the bounds. */
  public long malformed() {
    return malformed;
  }

  private void keepPartialLine(ByteString tail) {
    if (skippingLine || tail.isEmpty()) {
      return;
    }
    if (pendingLine.size() + tail.size() > limits.maxLineBytes()) {
      pendingLine = ByteString.emptyByteString();
      skippingLine = true;
      malformed++;
    } else {
      pendingLine = pendingLine.concat(tail);
    }
  }

  private void endLine(ByteString lastPart, List<SseEvent> out) {
    if (skippingLine) {
      skippingLine = false;
      pendingLine = ByteString.emptyByteString();
      skippingEvent = true;
      return;
    }
    ByteString line = pendingLine.isEmpty() ? lastPart : pendingLine.concat(lastPart);
    pendingLine = ByteString.emptyByteString();
    if (line.size() > limits.maxLineBytes()) {
      malformed++;
      skippingEvent = true;
      return;
    }
    if (line.isEmpty()) {
      dispatch(out);
    } else {
      acceptField(line);
    }
  }

  private void acceptField(ByteString line) {
    if (skippingEvent || line.apply(0) == ':') {
      return;
    }
    String text = line.decodeString(StandardCharsets.UTF_8);
    int colon = text.indexOf(':');
    String field = colon < 0 ? text : text.substring(0, colon);
    String value = colon < 0 ? "" : stripOneSpace(text.substring(colon + 1));
    if (field.equals("data")) {
      appendData(value, line.size());
    } else if (field.equals("event")) {
      eventType = value;
    }
  }

  private void appendData(String value, int lineBytes) {
    eventBytes += lineBytes;
    if (eventBytes > limits.maxEventBytes()) {
      malformed++;
      skippingEvent = true;
      return;
    }
    if (hasData) {
      data.append('\n');
    }
    data.append(value);
    hasData = true;
  }

  private void dispatch(List<SseEvent> out) {
    if (hasData && !skippingEvent) {
      String type = eventType == null || eventType.isEmpty() ? SseEvent.DEFAULT_TYPE : eventType;
      out.add(new SseEvent(type, data.toString()));
    }
    eventType = null;
    data.setLength(0);
    hasData = false;
    eventBytes = 0;
    skippingEvent = false;
  }

  private static String stripOneSpace(String value) {
    return value.startsWith(" ") ? value.substring(1) : value;
  }
}
