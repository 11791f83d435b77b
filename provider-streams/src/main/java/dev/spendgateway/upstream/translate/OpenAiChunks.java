package dev.spendgateway.upstream.translate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.upstream.sse.SseDecoder;
import dev.spendgateway.upstream.sse.SseEvent;
import dev.spendgateway.upstream.sse.SseLimits;
import dev.spendgateway.upstream.stream.UsageChunkFilter;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.NotUsed;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.util.ByteString;

/**
 * The OpenAI side of a routed stream: re-frames OpenAI {@code chat.completion.chunk} events with
 * {@code model} set to the profile name (so an answer from either provider looks the same) and,
 * when the upstream fails or ends before {@code [DONE]}, ends the client's stream with one {@code
 * {"error":{"type":"upstream_cut",…}}} event — the same contract as {@link
 * AnthropicSseToChatChunks#flow}. Fresh state per materialization.
 */
public final class OpenAiChunks {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private OpenAiChunks() {}

  public static Flow<ByteString, ByteString, NotUsed> flow(String model, SseLimits limits) {
    return reframed(model, limits);
  }

  /**
   * {@link #flow(String, SseLimits)} without the usage-only chunk unless the caller asked for it:
   * the gateway asks OpenAI for usage on every stream to count it, not to show it.
   */
  public static Flow<ByteString, ByteString, NotUsed> flow(
      String model, SseLimits limits, boolean usageChunk) {
    return UsageChunkFilter.forCaller(usageChunk, limits).via(reframed(model, limits));
  }

  private static Flow<ByteString, ByteString, NotUsed> reframed(String model, SseLimits limits) {
    return Flow.of(ByteString.class)
        .<Input>map(Input.Bytes::new)
        .recover(Throwable.class, Input.Failed::new)
        .statefulMap(
            () -> new State(new SseDecoder(limits), model),
            (state, input) -> Pair.create(state, state.on(input)),
            state -> Optional.of(state.onEnd()))
        .mapConcat(frames -> frames);
  }

  /** What reaches the stateful stage: bytes, or the news that the upstream failed. */
  private sealed interface Input {
    record Bytes(ByteString bytes) implements Input {}

    record Failed() implements Input {}
  }

  /** The error event that ends a cut stream (no {@code [DONE]} follows). */
  static String cutError(String message) {
    ObjectNode root = MAPPER.createObjectNode();
    ObjectNode error = root.putObject("error");
    error.put("message", message);
    error.put("type", "upstream_cut");
    error.putNull("param");
    error.putNull("code");
    return root.toString();
  }

  /** A provider chunk, read leniently; empty when it is not a JSON object (passed on as it is). */
  private static Optional<ObjectNode> parseObject(String data) {
    try {
      JsonNode node = MAPPER.readTree(data);
      return node instanceof ObjectNode o ? Optional.of(o) : Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  private static final class State {
    private final SseDecoder decoder;
    private final String model;
    private boolean finished;

    State(SseDecoder decoder, String model) {
      this.decoder = decoder;
      this.model = model;
    }

    List<ByteString> on(Input input) {
      if (finished) {
        return List.of();
      }
      if (input instanceof Input.Bytes b) {
        return frames(decoder.feed(b.bytes()));
      }
      finished = true;
      return List.of(
          AnthropicSseToChatChunks.frame(
              cutError("the upstream connection failed before the answer was complete")));
    }

    List<ByteString> onEnd() {
      if (finished) {
        return List.of();
      }
      List<ByteString> out = new ArrayList<>(frames(decoder.finish()));
      if (!finished) {
        finished = true;
        out.add(
            AnthropicSseToChatChunks.frame(
                cutError("the upstream stream ended before the answer was complete")));
      }
      return out;
    }

    private List<ByteString> frames(List<SseEvent> events) {
      List<ByteString> out = new ArrayList<>(events.size());
      for (SseEvent event : events) {
        if (finished) {
          break;
        }
        out.add(AnthropicSseToChatChunks.frame(rewrite(event.data())));
      }
      return out;
    }

    /** Sets {@code model}; {@code [DONE]} and an in-stream error end the stream. */
    private String rewrite(String data) {
      if (AnthropicSseToChatChunks.DONE.equals(data.trim())) {
        finished = true;
        return AnthropicSseToChatChunks.DONE;
      }
      Optional<ObjectNode> chunk = parseObject(data);
      if (chunk.isEmpty()) {
        return data;
      }
      if (chunk.get().has("error")) {
        finished = true;
        return data;
      }
      if (chunk.get().has("model")) {
        chunk.get().put("model", model);
      }
      return chunk.get().toString();
    }
  }
}
