package dev.spendgateway.upstream.translate;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.policy.cost.UsageParsers;
import dev.spendgateway.policy.cost.UsageReport;
import dev.spendgateway.upstream.sse.SseDecoder;
import dev.spendgateway.upstream.sse.SseEvent;
import dev.spendgateway.upstream.sse.SseLimits;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.NotUsed;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.util.ByteString;

/**
 * Re-emits one Anthropic Messages SSE stream as OpenAI {@code chat.completion.chunk} SSE. Stateful
 * and per request: make a fresh instance (or a fresh {@link #flow}) for every stream, like Envoy AI
 * Gateway's translators. Not thread-safe; a stream is processed in order by one stage.
 *
 * <p>Event mapping ({@code type} read from the event's data, falling back to the SSE event name):
 *
 * <ul>
 *   <li>{@code message_start} → the first chunk, {@code delta: {role: "assistant", content: ""}};
 *       its usage (input and cache counts) is kept.
 *   <li>{@code content_block_start} with non-empty text, and {@code content_block_delta} of type
 *       {@code text_delta} → a chunk with {@code delta.content}. Thinking, signature, citation and
 *       tool-input deltas are dropped (no place for them in OpenAI chat chunks).
 *   <li>{@code message_delta} → a chunk with empty delta and the mapped {@code finish_reason}
 *       ({@link FinishReasons}); its cumulative usage is kept.
 *   <li>{@code message_stop} → the usage chunk ({@code choices: []}, {@code usage} as in {@link
 *       MessagesToChat}), then {@code [DONE]}. The usage chunk is only for a caller that asked for
 *       it ({@code stream_options.include_usage}), as OpenAI itself would send it; a caller that
 *       did not ask reads {@code choices[0]} of every chunk. When Anthropic reported no readable
 *       usage the usage chunk is left out rather than faked as zero.
 *   <li>{@code ping}, {@code content_block_stop} and unknown event types → nothing.
 *   <li>{@code error} (e.g. {@code overloaded_error} mid-stream), unreadable data, an oversized
 *       line, or the upstream ending / failing before {@code message_stop} → one {@code
 *       {"error":{…}}} payload and no {@code [DONE]}: the client sees the stream was cut, never a
 *       silent truncation.
 * </ul>
 *
 * <p>Output strings are SSE {@code data:} payloads without the framing; {@link #frame} adds it.
 */
public final class AnthropicSseToChatChunks {
  /** The last payload of a complete OpenAI stream. */
  public static final String DONE = "[DONE]";

  /** Default bound on one SSE line; Anthropic text deltas are a few hundred bytes. */
  public static final int DEFAULT_MAX_LINE_BYTES = 1 << 20;

  /** Bound on one event (all its data lines): a misbehaving upstream must not exhaust memory. */
  static final int MAX_EVENT_BYTES = 8 << 20;

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final String model;
  private final long created;
  private final boolean usageChunk;
  private String id = MessagesToChat.chatId("");
  private boolean started;
  private boolean finishSent;
  private boolean finished;
  private boolean failed;
  private String stopReason;
  private JsonNode startUsage;
  private JsonNode deltaUsage;

  /**
   * @param model the model name the chunks report (the profile name, or the answering model)
   * @param createdEpochSeconds the chunks' {@code created} (the router's clock)
   */
  public AnthropicSseToChatChunks(String model, long createdEpochSeconds) {
    this(model, createdEpochSeconds, true);
  }

  /**
   * @param usageChunk whether the caller asked for the usage-only chunk at the end of the stream
   */
  public AnthropicSseToChatChunks(String model, long createdEpochSeconds, boolean usageChunk) {
    this.model = model;
    this.created = createdEpochSeconds;
    this.usageChunk = usageChunk;
  }

  /**
   * Translates one upstream event.
   *
   * @param eventType the SSE {@code event:} name (may be null; the data's {@code type} wins)
   * @param data the SSE {@code data:} text (one JSON object)
   * @return the payloads to send, in order; empty for events with no client-visible effect and for
   *     anything after the stream finished
   */
  public List<String> onEvent(String eventType, String data) {
    if (finished) {
      return List.of();
    }
    JsonNode event;
    try {
      event = MAPPER.readTree(data);
    } catch (JsonProcessingException e) {
      return fail("upstream_unreadable", "the upstream sent an unreadable event");
    }
    if (event == null || !event.isObject()) {
      return fail("upstream_unreadable", "the upstream sent an unreadable event");
    }
    String type = event.path("type").asText(eventType == null ? "" : eventType);
    List<String> out = new ArrayList<>();
    switch (type) {
      case "message_start" -> onMessageStart(event.path("message"), out);
      case "content_block_start" -> {
        JsonNode block = event.path("content_block");
        if ("text".equals(block.path("type").asText())) {
          text(block.path("text").asText(""), out);
        }
      }
      case "content_block_delta" -> {
        JsonNode delta = event.path("delta");
        if ("text_delta".equals(delta.path("type").asText())) {
          text(delta.path("text").asText(""), out);
        }
      }
      case "message_delta" -> onMessageDelta(event, out);
      case "message_stop" -> onMessageStop(out);
      case "error" -> {
        JsonNode error = event.path("error");
        return fail(
            error.path("type").asText("upstream_error"),
            error.path("message").asText("the upstream reported an error"));
      }
      default -> {} // ping, content_block_stop, and event types newer than this class
    }
    return out;
  }

  /** The upstream bytes ended. Returns nothing after a complete stream, otherwise the cut error. */
  public List<String> onUpstreamEnd() {
    if (finished) {
      return List.of();
    }
    return fail("upstream_cut", "the upstream stream ended before the answer was complete");
  }

  /** The upstream failed (connection reset, timeout): the cut error, unless already finished. */
  public List<String> onUpstreamFailure() {
    if (finished) {
      return List.of();
    }
    return fail("upstream_cut", "the upstream connection failed before the answer was complete");
  }

  /** True once {@code [DONE]} or an error payload was produced. */
  public boolean isFinished() {
    return finished;
  }

  /** True when the stream ended with {@code [DONE]}, false when cut or not yet ended. */
  public boolean isComplete() {
    return finished && finishSent && !failed;
  }

  /** What Anthropic reported so far ({@code message_start} + last {@code message_delta}). */
  public UsageReport usage() {
    return UsageParsers.anthropicStream(startUsage, deltaUsage);
  }

  /** One SSE frame: {@code data: <payload>\n\n}. */
  public static ByteString frame(String payload) {
    return ByteString.fromString("data: " + payload + "\n\n", StandardCharsets.UTF_8);
  }

  /** {@link #flow(String, long, int)} with {@link #DEFAULT_MAX_LINE_BYTES}. */
  public static Flow<ByteString, ByteString, NotUsed> flow(String model, long createdEpochSeconds) {
    return flow(model, createdEpochSeconds, DEFAULT_MAX_LINE_BYTES);
  }

  /**
   * The translator as a stream stage: Anthropic SSE bytes in (any chunking) → OpenAI SSE frames
   * out. Each materialization gets its own parser and translator. An upstream failure does not fail
   * this stage: it becomes the cut error frame and a normal completion, so the client's connection
   * ends with a readable error event. (Settling the reservation is the counting branch's job.)
   */
  public static Flow<ByteString, ByteString, NotUsed> flow(
      String model, long createdEpochSeconds, int maxLineBytes) {
    return flow(model, createdEpochSeconds, maxLineBytes, true);
  }

  /**
   * {@link #flow(String, long, int)} with {@link #DEFAULT_MAX_LINE_BYTES}, sending the usage-only
   * chunk only when {@code usageChunk} (the caller asked for it).
   */
  public static Flow<ByteString, ByteString, NotUsed> flow(
      String model, long createdEpochSeconds, boolean usageChunk) {
    return flow(model, createdEpochSeconds, DEFAULT_MAX_LINE_BYTES, usageChunk);
  }

  private static Flow<ByteString, ByteString, NotUsed> flow(
      String model, long createdEpochSeconds, int maxLineBytes, boolean usageChunk) {
    return Flow.of(ByteString.class)
        .<Input>map(Input.Bytes::new)
        .recover(Throwable.class, Input.Failed::new)
        .statefulMap(
            () ->
                new StreamState(
                    new SseDecoder(new SseLimits(maxLineBytes, MAX_EVENT_BYTES)),
                    new AnthropicSseToChatChunks(model, createdEpochSeconds, usageChunk)),
            (state, input) -> Pair.create(state, state.on(input)),
            state -> java.util.Optional.of(state.onEnd()))
        .mapConcat(frames -> frames);
  }

  private void onMessageStart(JsonNode message, List<String> out) {
    if (message.path("id").isTextual()) {
      id = MessagesToChat.chatId(message.path("id").asText());
    }
    startUsage = message.get("usage");
    ensureStarted(out);
  }

  private void onMessageDelta(JsonNode event, List<String> out) {
    if (event.has("usage")) {
      deltaUsage = event.get("usage");
    }
    JsonNode reason = event.path("delta").path("stop_reason");
    if (reason.isTextual()) {
      stopReason = reason.asText();
      finishChunk(out);
    }
  }

  private void onMessageStop(List<String> out) {
    finishChunk(out);
    if (usageChunk && usage() instanceof UsageReport.Reported reported) {
      ObjectNode chunk = chunkEnvelope();
      chunk.putArray("choices");
      chunk.set("usage", MessagesToChat.usage(reported.usage()));
      out.add(chunk.toString());
    }
    out.add(DONE);
    finished = true;
  }

  private void ensureStarted(List<String> out) {
    if (started) {
      return;
    }
    started = true;
    ObjectNode delta = MAPPER.createObjectNode();
    delta.put("role", "assistant");
    delta.put("content", "");
    out.add(choiceChunk(delta, null));
  }

  private void text(String text, List<String> out) {
    ensureStarted(out);
    if (text.isEmpty()) {
      return;
    }
    ObjectNode delta = MAPPER.createObjectNode();
    delta.put("content", text);
    out.add(choiceChunk(delta, null));
  }

  private void finishChunk(List<String> out) {
    if (finishSent) {
      return;
    }
    ensureStarted(out);
    finishSent = true;
    String reason = FinishReasons.toOpenAi(stopReason);
    out.add(choiceChunk(MAPPER.createObjectNode(), reason == null ? "stop" : reason));
  }

  private String choiceChunk(ObjectNode delta, String finishReason) {
    ObjectNode chunk = chunkEnvelope();
    ObjectNode choice = chunk.putArray("choices").addObject();
    choice.put("index", 0);
    choice.set("delta", delta);
    choice.putNull("logprobs");
    choice.put("finish_reason", finishReason);
    return chunk.toString();
  }

  private ObjectNode chunkEnvelope() {
    ObjectNode chunk = MAPPER.createObjectNode();
    chunk.put("id", id);
    chunk.put("object", "chat.completion.chunk");
    chunk.put("created", created);
    chunk.put("model", model);
    return chunk;
  }

  private List<String> fail(String type, String message) {
    finished = true;
    failed = true;
    ObjectNode root = MAPPER.createObjectNode();
    ObjectNode error = root.putObject("error");
    error.put("message", message);
    error.put("type", type);
    error.putNull("param");
    error.putNull("code");
    return List.of(root.toString());
  }

  /** What reaches the stateful stage: bytes, or the news that the upstream failed. */
  private sealed interface Input {
    record Bytes(ByteString bytes) implements Input {}

    record Failed() implements Input {}
  }

  /** Decoder + translator of one materialized stream. */
  private static final class StreamState {
    private final SseDecoder parser;
    private final AnthropicSseToChatChunks translator;

    StreamState(SseDecoder parser, AnthropicSseToChatChunks translator) {
      this.parser = parser;
      this.translator = translator;
    }

    List<ByteString> on(Input input) {
      if (input instanceof Input.Bytes b) {
        return onBytes(b.bytes());
      }
      return frames(translator.onUpstreamFailure());
    }

    private List<ByteString> onBytes(ByteString bytes) {
      if (translator.isFinished()) {
        return List.of();
      }
      List<String> payloads = new ArrayList<>();
      long malformedBefore = parser.malformed();
      for (SseEvent event : parser.feed(bytes)) {
        payloads.addAll(translator.onEvent(event.type(), event.data()));
      }
      // The usage tap's decoder skips what breaks its bounds; a translation cannot skip a piece of
      // the answer, so it ends the caller's stream with an error event instead.
      if (parser.malformed() > malformedBefore && !translator.isFinished()) {
        payloads.addAll(
            translator.fail("upstream_unreadable", "the upstream sent an oversized event"));
      }
      return frames(payloads);
    }

    List<ByteString> onEnd() {
      return frames(translator.onUpstreamEnd());
    }

    private static List<ByteString> frames(List<String> payloads) {
      List<ByteString> out = new ArrayList<>(payloads.size());
      for (String p : payloads) {
        out.add(frame(p));
      }
      return out;
    }
  }
}
