package dev.spendgateway.upstream.stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.upstream.sse.SseLimits;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.NotUsed;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.util.ByteString;

/**
 * Takes the usage-only chunk ({@code "choices": []} with a {@code usage} object) out of an OpenAI
 * chat completion stream and passes every other byte through unchanged.
 *
 * <p>The gateway always asks OpenAI for stream usage, because without it a streamed call could only
 * be billed at its worst case. A caller that did not ask for usage does not expect that extra
 * chunk: the usual {@code for chunk in stream: chunk.choices[0]} loop fails on it. Put this stage
 * on the client's side of the meter only, so the usage tap still reads the usage.
 *
 * <p>The stage splits the bytes into SSE events at blank lines ({@code \n}, {@code \r\n} or {@code
 * \r} line ends, events split across any number of TCP frames) and forwards each whole event byte
 * for byte, {@code data: [DONE]} included. It holds back at most one incomplete event. An event
 * longer than {@link SseLimits#maxEventBytes()} cannot be a usage chunk, so it is passed on as it
 * arrives. This is a fresh parser per stream: every materialization gets its own state.
 */
public final class UsageChunkFilter {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final ByteString USAGE_KEY = ByteString.fromString("\"usage\"");

  private final int maxEventBytes;

  /** The bytes of the event being read, until its blank line arrives. */
  private ByteString pending = ByteString.emptyByteString();

  /** The last byte ended a line (or nothing of this event was read yet). */
  private boolean atLineStart = true;

  /** The last byte was a CR: a LF right after it belongs to the same line end. */
  private boolean lastWasCr;

  /** A CR ended the event; a LF right after it is still part of it. */
  private boolean endsAfterCr;

  /** The current event outgrew the bound: its bytes go straight through. */
  private boolean oversized;

  private UsageChunkFilter(int maxEventBytes) {
    this.maxEventBytes = maxEventBytes;
  }

  /**
   * Whether the caller's own chat request asked for the usage chunk ({@code
   * stream_options.include_usage: true}). Read from the caller's body, before the gateway's policy
   * sets it on the copy that goes upstream.
   */
  public static boolean callerAskedForUsage(JsonNode callerRequest) {
    JsonNode asked = callerRequest.path("stream_options").path("include_usage");
    return asked.isBoolean() && asked.booleanValue();
  }

  /**
   * The client's side of a chat completion stream: unchanged when the caller asked for usage
   * itself, else without the usage-only chunk.
   */
  public static Flow<ByteString, ByteString, NotUsed> forCaller(
      boolean callerAskedForUsage, SseLimits limits) {
    return callerAskedForUsage ? Flow.of(ByteString.class) : flow(limits);
  }

  /** The filter as a stream stage; each materialization parses with fresh state. */
  public static Flow<ByteString, ByteString, NotUsed> flow(SseLimits limits) {
    return Flow.of(ByteString.class)
        .statefulMap(
            () -> new UsageChunkFilter(limits.maxEventBytes()),
            (filter, chunk) -> Pair.create(filter, filter.feed(chunk)),
            filter -> Optional.of(filter.finish()))
        .mapConcat(bytes -> bytes);
  }

  /**
   * True when the SSE event's data is a chat chunk with no choices and a usage object: the chunk
   * OpenAI adds at the end of a stream when {@code stream_options.include_usage} is set.
   */
  public static boolean isUsageOnlyChunk(ByteString event) {
    if (event.indexOfSlice(USAGE_KEY) < 0) {
      return false; // the cheap test: almost every chunk is a content chunk
    }
    StringBuilder data = new StringBuilder();
    for (String line : event.utf8String().split("\r\n|\r|\n")) {
      if (line.startsWith("data:")) {
        if (!data.isEmpty()) {
          data.append('\n');
        }
        data.append(line, line.startsWith("data: ") ? 6 : 5, line.length());
      }
    }
    try {
      JsonNode json = MAPPER.readTree(data.toString());
      return json instanceof ObjectNode chunk
          && chunk.path("choices").isArray()
          && chunk.path("choices").isEmpty()
          && chunk.path("usage").isObject();
    } catch (Exception notJson) {
      return false;
    }
  }

  List<ByteString> feed(ByteString chunk) {
    List<ByteString> out = new ArrayList<>(2);
    int from = 0;
    for (int i = 0; i < chunk.size(); i++) {
      byte b = chunk.apply(i);
      if (endsAfterCr) {
        endsAfterCr = false;
        int end = b == '\n' ? i + 1 : i;
        eventEnded(chunk.slice(from, end), out);
        from = end;
        if (b == '\n') {
          continue;
        }
      }
      if (b == '\n') {
        if (lastWasCr) {
          lastWasCr = false; // the LF of a CRLF: the line already ended at the CR
        } else if (atLineStart) {
          eventEnded(chunk.slice(from, i + 1), out);
          from = i + 1;
        } else {
          atLineStart = true;
        }
      } else if (b == '\r') {
        if (atLineStart) {
          endsAfterCr = true; // wait for the next byte: it may be this line end's LF
        }
        atLineStart = true;
        lastWasCr = true;
      } else {
        atLineStart = false;
        lastWasCr = false;
      }
    }
    held(chunk.slice(from, chunk.size()), out);
    return out;
  }

  /** The stream ended: whatever is held goes out (unless it is a finished usage chunk). */
  List<ByteString> finish() {
    List<ByteString> out = new ArrayList<>(1);
    if (endsAfterCr) {
      eventEnded(ByteString.emptyByteString(), out);
    } else if (!pending.isEmpty()) {
      out.add(pending);
      pending = ByteString.emptyByteString();
    }
    return out;
  }

  private void eventEnded(ByteString tail, List<ByteString> out) {
    ByteString event = pending.concat(tail);
    pending = ByteString.emptyByteString();
    atLineStart = true;
    lastWasCr = false;
    if (oversized) {
      oversized = false;
      add(tail, out);
    } else if (!isUsageOnlyChunk(event)) {
      add(event, out);
    }
  }

  private void held(ByteString rest, List<ByteString> out) {
    if (oversized) {
      add(rest, out);
      return;
    }
    pending = pending.concat(rest);
    if (pending.size() > maxEventBytes) {
      oversized = true;
      add(pending, out);
      pending = ByteString.emptyByteString();
    }
  }

  private static void add(ByteString bytes, List<ByteString> out) {
    if (!bytes.isEmpty()) {
      out.add(bytes);
    }
  }
}
