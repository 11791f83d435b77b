package dev.spendgateway.sim;

import java.nio.charset.StandardCharsets;
import org.apache.pekko.util.ByteString;

/**
 * One server-sent event as it goes on the wire. Rendered by hand rather than with Pekko's
 * EventStreamMarshalling because the simulator must also produce broken streams byte for byte.
 *
 * @param event the {@code event:} line, or null for data-only events (OpenAI)
 * @param data the {@code data:} payload (one line)
 */
record SseEvent(String event, String data) {

  static SseEvent data(String data) {
    return new SseEvent(null, data);
  }

  static SseEvent named(String event, String data) {
    return new SseEvent(event, data);
  }

  ByteString toBytes() {
    String text =
        event == null ? "data: " + data + "\n\n" : "event: " + event + "\ndata: " + data + "\n\n";
    return ByteString.fromArrayUnsafe(text.getBytes(StandardCharsets.UTF_8));
  }
}
