package dev.spendgateway.upstream.translate;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.util.ByteString;

/**
 * A minimal, bounded Server-Sent Events parser for the chunk translator: bytes in any chunking →
 * complete events ({@code event} + joined {@code data} lines). Lines end in LF, CRLF or CR; a blank
 * line dispatches the event; comments ({@code :ping}) and {@code id}/{@code retry} are ignored; an
 * event still open when the bytes end is dropped, as the SSE standard says. Kept private to this
 * package on purpose: it serves the translator only. Not thread-safe; one per stream.
 */
final class SseEventParser {
  /** One dispatched event; {@code event} is "message" when the stream named none. */
  record Event(String event, String data) {}

  /** Thrown when a line grows past the bound: a misbehaving upstream must not exhaust memory. */
  static final class LineTooLong extends RuntimeException {
    LineTooLong(int max) {
      super("SSE line longer than " + max + " bytes", null, false, false);
    }
  }

  private final int maxLineBytes;
  private final ByteArrayOutputStream line = new ByteArrayOutputStream();
  private boolean lastWasCr;
  private String eventType;
  private StringBuilder data;

  SseEventParser(int maxLineBytes) {
    this.maxLineBytes = maxLineBytes;
  }

  /** Feeds the next bytes; returns the events they complete (often none). */
  List<Event> feed(ByteString bytes) {
    List<Event> out = new ArrayList<>();
    for (int i = 0; i < bytes.length(); i++) {
      byte b = bytes.apply(i);
      if (b == '\n' && lastWasCr) {
        lastWasCr = false;
        continue; // the LF of a CRLF already ended the line
      }
      lastWasCr = b == '\r';
      if (b == '\n' || b == '\r') {
        endLine(out);
      } else {
        if (line.size() >= maxLineBytes) {
          throw new LineTooLong(maxLineBytes);
        }
        line.write(b);
      }
    }
    return out;
  }

  private void endLine(List<Event> out) {
    String text = line.toString(StandardCharsets.UTF_8);
    line.reset();
    if (text.isEmpty()) {
      if (data != null) {
        out.add(new Event(eventType == null ? "message" : eventType, data.toString()));
      }
      eventType = null;
      data = null;
      return;
    }
    if (text.startsWith(":")) {
      return;
    }
    int colon = text.indexOf(':');
    String field = colon < 0 ? text : text.substring(0, colon);
    String value = colon < 0 ? "" : text.substring(colon + 1);
    if (value.startsWith(" ")) {
      value = value.substring(1);
    }
    switch (field) {
      case "event" -> eventType = value;
      case "data" -> {
        if (data == null) {
          data = new StringBuilder(value);
        } else {
          data.append('\n').append(value);
        }
      }
      default -> {} // id, retry and unknown fields carry nothing the translator needs
    }
  }
}
