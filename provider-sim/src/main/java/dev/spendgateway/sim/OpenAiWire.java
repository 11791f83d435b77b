package dev.spendgateway.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * OpenAI's JSON and SSE shapes (Chat Completions, Responses, Transcriptions, errors), written to
 * match what api.openai.com sends so the official SDK parses them unchanged.
 */
final class OpenAiWire {
  static final String REQUEST_ID_HEADER = "x-request-id";
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  private final ObjectMapper mapper;

  OpenAiWire(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  static String requestId() {
    return Ids.hex("req_", 32);
  }

  // ---------------- chat completions ----------------

  ObjectNode chatCompletion(String model, String text, Usage usage) {
    ObjectNode root = F.objectNode();
    root.put("id", Ids.base62("chatcmpl-", 29));
    root.put("object", "chat.completion");
    root.put("created", nowSeconds());
    root.put("model", model);
    ObjectNode choice = root.putArray("choices").addObject();
    choice.put("index", 0);
    ObjectNode message = choice.putObject("message");
    message.put("role", "assistant");
    message.put("content", text);
    message.putNull("refusal");
    message.putArray("annotations");
    choice.putNull("logprobs");
    choice.put("finish_reason", "stop");
    root.set("usage", chatUsage(usage));
    root.put("service_tier", "default");
    root.put("system_fingerprint", "fp_sim0000001");
    return root;
  }

  /**
   * The chunk stream: a role chunk, one chunk per word, a finish chunk, the usage chunk (empty
   * {@code choices}) when {@code stream_options.include_usage} was set, then {@code [DONE]}.
   */
  List<SseEvent> chatChunks(String model, String text, Usage usage, boolean includeUsage) {
    String id = Ids.base62("chatcmpl-", 29);
    long created = nowSeconds();
    List<SseEvent> events = new ArrayList<>();
    ObjectNode roleDelta =
        F.objectNode().put("role", "assistant").put("content", "").putNull("refusal");
    events.add(chunk(id, created, model, roleDelta, null, includeUsage));
    for (String piece : Words.split(text)) {
      events.add(
          chunk(id, created, model, F.objectNode().put("content", piece), null, includeUsage));
    }
    events.add(chunk(id, created, model, F.objectNode(), "stop", includeUsage));
    if (includeUsage) {
      ObjectNode last = chunkBase(id, created, model);
      last.putArray("choices");
      last.set("usage", chatUsage(usage));
      events.add(SseEvent.data(write(last)));
    }
    events.add(SseEvent.data("[DONE]"));
    return events;
  }

  private SseEvent chunk(
      String id,
      long created,
      String model,
      ObjectNode delta,
      String finishReason,
      boolean usageNull) {
    ObjectNode c = chunkBase(id, created, model);
    ObjectNode choice = c.putArray("choices").addObject();
    choice.put("index", 0);
    choice.set("delta", delta);
    choice.putNull("logprobs");
    if (finishReason == null) {
      choice.putNull("finish_reason");
    } else {
      choice.put("finish_reason", finishReason);
    }
    // With include_usage every chunk but the last carries "usage": null, as the API does.
    if (usageNull) {
      c.putNull("usage");
    }
    return SseEvent.data(write(c));
  }

  private static ObjectNode chunkBase(String id, long created, String model) {
    ObjectNode c = F.objectNode();
    c.put("id", id);
    c.put("object", "chat.completion.chunk");
    c.put("created", created);
    c.put("model", model);
    c.put("service_tier", "default");
    c.put("system_fingerprint", "fp_sim0000001");
    return c;
  }

  static ObjectNode chatUsage(Usage u) {
    ObjectNode usage = F.objectNode();
    usage.put("prompt_tokens", u.openAiPromptTokens());
    usage.put("completion_tokens", u.outputTokens());
    usage.put("total_tokens", u.openAiPromptTokens() + u.outputTokens());
    usage
        .putObject("prompt_tokens_details")
        .put("cached_tokens", u.cacheReadTokens())
        .put("audio_tokens", 0);
    usage
        .putObject("completion_tokens_details")
        .put("reasoning_tokens", 0)
        .put("audio_tokens", 0)
        .put("accepted_prediction_tokens", 0)
        .put("rejected_prediction_tokens", 0);
    return usage;
  }

  // ---------------- responses (web search) ----------------

  /** Ids shared by the JSON and streamed forms of one response. */
  record ResponseIds(String responseId, List<String> searchIds, String messageId, long createdAt) {
    static ResponseIds fresh(int searches) {
      List<String> ws = new ArrayList<>();
      for (int i = 0; i < searches; i++) {
        ws.add(Ids.hex("ws_", 48));
      }
      return new ResponseIds(Ids.hex("resp_", 48), ws, Ids.hex("msg_", 48), nowSeconds());
    }
  }

  ObjectNode response(ResponseIds ids, JsonNode request, String model, String text, Usage usage) {
    ObjectNode r = responseBase(ids, request, model, "completed");
    ArrayNode output = r.putArray("output");
    String query = searchQuery(request);
    for (String wsId : ids.searchIds()) {
      output.add(webSearchCall(wsId, "completed", query));
    }
    output.add(outputMessage(ids.messageId(), "completed", text));
    r.set("usage", responseUsage(usage));
    return r;
  }

  /** The Responses streaming event sequence, each with its {@code sequence_number}. */
  List<SseEvent> responseEvents(
      ResponseIds ids, JsonNode request, String model, String text, Usage usage) {
    List<ObjectNode> evs = new ArrayList<>();
    ObjectNode inProgress = responseBase(ids, request, model, "in_progress");
    inProgress.putArray("output");
    inProgress.putNull("usage");
    evs.add(F.objectNode().put("type", "response.created").set("response", inProgress.deepCopy()));
    evs.add(F.objectNode().put("type", "response.in_progress").set("response", inProgress));
    String query = searchQuery(request);
    int index = 0;
    for (String wsId : ids.searchIds()) {
      evs.add(
          itemEvent(
              "response.output_item.added", index, webSearchCall(wsId, "in_progress", query)));
      for (String phase : List.of("in_progress", "searching", "completed")) {
        evs.add(
            F.objectNode()
                .put("type", "response.web_search_call." + phase)
                .put("output_index", index)
                .put("item_id", wsId));
      }
      evs.add(
          itemEvent("response.output_item.done", index, webSearchCall(wsId, "completed", query)));
      index++;
    }
    ObjectNode emptyMessage = outputMessage(ids.messageId(), "in_progress", "");
    emptyMessage.putArray("content");
    evs.add(itemEvent("response.output_item.added", index, emptyMessage));
    evs.add(partEvent("response.content_part.added", ids.messageId(), index, outputText("")));
    for (String piece : Words.split(text)) {
      ObjectNode delta = partBase("response.output_text.delta", ids.messageId(), index);
      delta.put("delta", piece);
      delta.putArray("logprobs");
      evs.add(delta);
    }
    ObjectNode textDone = partBase("response.output_text.done", ids.messageId(), index);
    textDone.put("text", text);
    textDone.putArray("logprobs");
    evs.add(textDone);
    evs.add(partEvent("response.content_part.done", ids.messageId(), index, outputText(text)));
    evs.add(
        itemEvent(
            "response.output_item.done", index, outputMessage(ids.messageId(), "completed", text)));
    evs.add(
        F.objectNode()
            .put("type", "response.completed")
            .set("response", response(ids, request, model, text, usage)));
    List<SseEvent> out = new ArrayList<>(evs.size());
    int seq = 0;
    for (ObjectNode e : evs) {
      // sequence_number goes second, after type, as the API writes it; order is cosmetic only.
      e.put("sequence_number", seq++);
      out.add(SseEvent.named(e.get("type").asText(), write(e)));
    }
    return out;
  }

  private ObjectNode responseBase(ResponseIds ids, JsonNode request, String model, String status) {
    ObjectNode r = F.objectNode();
    r.put("id", ids.responseId());
    r.put("object", "response");
    r.put("created_at", ids.createdAt());
    r.put("status", status);
    r.put("background", false);
    r.putNull("error");
    r.putNull("incomplete_details");
    r.set(
        "instructions",
        request.path("instructions").isTextual() ? request.get("instructions") : F.nullNode());
    r.set(
        "max_output_tokens",
        request.path("max_output_tokens").isNumber()
            ? request.get("max_output_tokens")
            : F.nullNode());
    r.put("model", model);
    r.put("parallel_tool_calls", true);
    r.putNull("previous_response_id");
    ObjectNode reasoning = r.putObject("reasoning");
    reasoning.putNull("effort");
    reasoning.putNull("summary");
    r.put("service_tier", "default");
    r.put("store", request.path("store").asBoolean(true));
    r.put("temperature", 1.0);
    r.putObject("text").putObject("format").put("type", "text");
    r.put("tool_choice", "auto");
    r.set("tools", request.path("tools").isArray() ? request.get("tools") : F.arrayNode());
    r.put("top_p", 1.0);
    r.put("truncation", "disabled");
    r.putNull("user");
    r.set("metadata", F.objectNode());
    return r;
  }

  private static ObjectNode webSearchCall(String id, String status, String query) {
    ObjectNode item = F.objectNode();
    item.put("type", "web_search_call");
    item.put("id", id);
    item.put("status", status);
    item.putObject("action").put("type", "search").put("query", query);
    return item;
  }

  private static ObjectNode outputMessage(String id, String status, String text) {
    ObjectNode item = F.objectNode();
    item.put("type", "message");
    item.put("id", id);
    item.put("status", status);
    item.put("role", "assistant");
    item.putArray("content").add(outputText(text));
    return item;
  }

  private static ObjectNode outputText(String text) {
    ObjectNode part = F.objectNode();
    part.put("type", "output_text");
    part.put("text", text);
    part.putArray("annotations");
    part.putArray("logprobs");
    return part;
  }

  private static ObjectNode itemEvent(String type, int outputIndex, ObjectNode item) {
    ObjectNode e = F.objectNode().put("type", type).put("output_index", outputIndex);
    e.set("item", item);
    return e;
  }

  private static ObjectNode partBase(String type, String itemId, int outputIndex) {
    return F.objectNode()
        .put("type", type)
        .put("item_id", itemId)
        .put("output_index", outputIndex)
        .put("content_index", 0);
  }

  private static ObjectNode partEvent(
      String type, String itemId, int outputIndex, ObjectNode part) {
    ObjectNode e = partBase(type, itemId, outputIndex);
    e.set("part", part);
    return e;
  }

  static ObjectNode responseUsage(Usage u) {
    ObjectNode usage = F.objectNode();
    usage.put("input_tokens", u.openAiPromptTokens());
    usage.putObject("input_tokens_details").put("cached_tokens", u.cacheReadTokens());
    usage.put("output_tokens", u.outputTokens());
    usage.putObject("output_tokens_details").put("reasoning_tokens", 0);
    usage.put("total_tokens", u.openAiPromptTokens() + u.outputTokens());
    return usage;
  }

  /** The text of the request's {@code input} (string or last message), used as the search query. */
  private static String searchQuery(JsonNode request) {
    JsonNode input = request.path("input");
    if (input.isTextual()) {
      return input.asText();
    }
    if (input.isArray() && input.size() > 0) {
      JsonNode content = input.get(input.size() - 1).path("content");
      if (content.isTextual()) {
        return content.asText();
      }
    }
    return "simulated search";
  }

  // ---------------- transcriptions ----------------

  ObjectNode transcription(String text, Usage u) {
    ObjectNode t = F.objectNode();
    t.put("text", text);
    t.set("usage", transcriptionUsage(u));
    return t;
  }

  List<SseEvent> transcriptionEvents(String text, Usage u) {
    List<SseEvent> events = new ArrayList<>();
    for (String piece : Words.split(text)) {
      ObjectNode d = F.objectNode().put("type", "transcript.text.delta").put("delta", piece);
      d.putArray("logprobs");
      events.add(SseEvent.data(write(d)));
    }
    ObjectNode done = F.objectNode().put("type", "transcript.text.done").put("text", text);
    done.putArray("logprobs");
    done.set("usage", transcriptionUsage(u));
    events.add(SseEvent.data(write(done)));
    return events;
  }

  /**
   * Transcription usage in the shape per-minute models are billed by ({@code whisper-1} style):
   * {@code {"type":"duration","seconds":N}}. The catalog prices its transcription model per minute,
   * so this is the shape the gateway must settle from. The simulator reuses the configured input
   * tokens as the seconds of audio, so the number stays deterministic and scriptable.
   */
  private static ObjectNode transcriptionUsage(Usage u) {
    ObjectNode usage = F.objectNode();
    usage.put("type", "duration");
    usage.put("seconds", u.inputTokens());
    return usage;
  }

  // ---------------- errors ----------------

  /**
   * {@code {"error":{"message","type","param","code"}}} with the type/code OpenAI uses per status.
   */
  static ObjectNode error(int status, String message) {
    return error(status, message, defaultCode(status));
  }

  private static String defaultCode(int status) {
    return switch (status) {
      case 401 -> "invalid_api_key";
      case 403 -> "unsupported_country_region_territory";
      case 404, 410 -> "model_not_found";
      case 429 -> "rate_limit_exceeded";
      default -> null;
    };
  }

  /** The OpenAI error body with an explicit {@code code} (null allowed). */
  static ObjectNode error(int status, String message, String code) {
    String type;
    String defaultMessage;
    switch (status) {
      case 400 -> {
        type = "invalid_request_error";
        defaultMessage = "Invalid request.";
      }
      case 401 -> {
        type = "invalid_request_error";
        defaultMessage = "Incorrect API key provided.";
      }
      case 403 -> {
        type = "invalid_request_error";
        defaultMessage = "Country, region, or territory not supported";
      }
      case 404 -> {
        type = "invalid_request_error";
        defaultMessage = "The model does not exist or you do not have access to it.";
      }
      case 410 -> {
        type = "invalid_request_error";
        defaultMessage = "The model has been deprecated and is no longer available.";
      }
      case 429 -> {
        type = "requests";
        defaultMessage = "Rate limit reached for requests. Please try again later.";
      }
      case 503 -> {
        type = "server_error";
        defaultMessage = "The engine is currently overloaded, please try again later";
      }
      default -> {
        type = status >= 500 ? "server_error" : "invalid_request_error";

        defaultMessage =
            status >= 500
                ? "The server had an error while processing your request. Sorry about that!"
                : "Request failed.";
      }
    }
    ObjectNode root = F.objectNode();
    ObjectNode err = root.putObject("error");
    err.put("message", message != null ? message : defaultMessage);
    err.put("type", type);
    err.putNull("param");
    if (code == null) {
      err.putNull("code");
    } else {
      err.put("code", code);
    }
    return root;
  }

  private String write(JsonNode node) {
    try {
      return mapper.writeValueAsString(node);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static long nowSeconds() {
    return System.currentTimeMillis() / 1000;
  }
}
