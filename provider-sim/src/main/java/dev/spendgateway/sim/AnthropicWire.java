package dev.spendgateway.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * Anthropic Messages API JSON and SSE shapes, and its error JSON, as api.anthropic.com sends them.
 */
final class AnthropicWire {
  static final String REQUEST_ID_HEADER = "request-id";
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  private final ObjectMapper mapper;

  AnthropicWire(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  static String requestId() {
    return Ids.base62("req_", 24);
  }

  ObjectNode message(String model, String text, Usage usage, boolean webSearchTool) {
    ObjectNode m = messageBase(Ids.base62("msg_", 24), model);
    m.putArray("content").addObject().put("type", "text").put("text", text);
    m.put("stop_reason", "end_turn");
    m.putNull("stop_sequence");
    m.set("usage", usage(usage, usage.outputTokens(), webSearchTool));
    return m;
  }

  /**
   * message_start (input usage, output_tokens 1 as the API reports it) / content_block_start / ping
   * / one content_block_delta per word / content_block_stop / message_delta (final usage) /
   * message_stop.
   */
  List<SseEvent> messageEvents(String model, String text, Usage usage, boolean webSearchTool) {
    List<SseEvent> events = new ArrayList<>();
    ObjectNode start = messageBase(Ids.base62("msg_", 24), model);
    start.putArray("content");
    start.putNull("stop_reason");
    start.putNull("stop_sequence");
    start.set("usage", usage(usage, 1, false));
    events.add(
        event("message_start", F.objectNode().put("type", "message_start").set("message", start)));
    ObjectNode blockStart = F.objectNode().put("type", "content_block_start").put("index", 0);
    blockStart.putObject("content_block").put("type", "text").put("text", "");
    events.add(event("content_block_start", blockStart));
    events.add(SseEvent.named("ping", "{\"type\": \"ping\"}"));
    for (String piece : Words.split(text)) {
      ObjectNode delta = F.objectNode().put("type", "content_block_delta").put("index", 0);
      delta.putObject("delta").put("type", "text_delta").put("text", piece);
      events.add(event("content_block_delta", delta));
    }
    events.add(
        event(
            "content_block_stop",
            F.objectNode().put("type", "content_block_stop").put("index", 0)));
    ObjectNode messageDelta = F.objectNode().put("type", "message_delta");
    messageDelta.putObject("delta").put("stop_reason", "end_turn").putNull("stop_sequence");
    messageDelta.set("usage", deltaUsage(usage, webSearchTool));
    events.add(event("message_delta", messageDelta));
    events.add(event("message_stop", F.objectNode().put("type", "message_stop")));
    return events;
  }

  private static ObjectNode messageBase(String id, String model) {
    ObjectNode m = F.objectNode();
    m.put("id", id);
    m.put("type", "message");
    m.put("role", "assistant");
    m.put("model", model);
    return m;
  }

  private static ObjectNode usage(Usage u, long outputTokens, boolean webSearchTool) {
    ObjectNode usage = F.objectNode();
    usage.put("input_tokens", u.inputTokens());
    usage.put("cache_creation_input_tokens", u.cacheWriteTokens());
    usage.put("cache_read_input_tokens", u.cacheReadTokens());
    usage
        .putObject("cache_creation")
        .put("ephemeral_5m_input_tokens", u.cacheWriteTokens())
        .put("ephemeral_1h_input_tokens", 0);
    usage.put("output_tokens", outputTokens);
    if (webSearchTool) {
      usage.putObject("server_tool_use").put("web_search_requests", u.webSearches());
    }
    usage.put("service_tier", "standard");
    return usage;
  }

  /** message_delta usage: cumulative counts, as the API has sent them since 2025. */
  private static ObjectNode deltaUsage(Usage u, boolean webSearchTool) {
    ObjectNode usage = F.objectNode();
    usage.put("input_tokens", u.inputTokens());
    usage.put("cache_creation_input_tokens", u.cacheWriteTokens());
    usage.put("cache_read_input_tokens", u.cacheReadTokens());
    usage.put("output_tokens", u.outputTokens());
    if (webSearchTool) {
      usage.putObject("server_tool_use").put("web_search_requests", u.webSearches());
    }
    return usage;
  }

  /** True when the request declares Anthropic's server-side web search tool. */
  static boolean hasWebSearchTool(JsonNode request) {
    for (JsonNode tool : request.path("tools")) {
      if (tool.path("type").asText("").startsWith("web_search")) {
        return true;
      }
    }
    return false;
  }

  /**
   * {@code {"type":"error","error":{"type","message"},"request_id"}} with Anthropic's type per
   * status.
   */
  static ObjectNode error(int status, String message, String requestId) {
    String type;
    String defaultMessage;
    switch (status) {
      case 400 -> {
        type = "invalid_request_error";
        defaultMessage = "Invalid request.";
      }
      case 401 -> {
        type = "authentication_error";
        defaultMessage = "invalid x-api-key";
      }
      case 402 -> {
        type = "billing_error";
        defaultMessage = "Billing error.";
      }
      case 403 -> {
        type = "permission_error";
        defaultMessage = "Your API key does not have permission to use the specified resource.";
      }
      case 404 -> {
        type = "not_found_error";
        defaultMessage = "Not found.";
      }
      case 413 -> {
        type = "request_too_large";
        defaultMessage = "Request exceeds the maximum allowed number of bytes.";
      }
      case 429 -> {
        type = "rate_limit_error";
        defaultMessage = "Number of request tokens has exceeded your per-minute rate limit.";
      }
      case 504 -> {
        type = "timeout_error";
        defaultMessage = "Request timed out.";
      }
      case 529 -> {
        type = "overloaded_error";
        defaultMessage = "Overloaded";
      }
      default -> {
        type = status >= 500 ? "api_error" : "invalid_request_error";
        defaultMessage = status >= 500 ? "Internal server error" : "Request failed.";
      }
    }
    ObjectNode root = F.objectNode();
    root.put("type", "error");
    root.putObject("error")
        .put("type", type)
        .put("message", message != null ? message : defaultMessage);
    root.put("request_id", requestId);
    return root;
  }

  private SseEvent event(String name, ObjectNode data) {
    try {
      return SseEvent.named(name, mapper.writeValueAsString(data));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
