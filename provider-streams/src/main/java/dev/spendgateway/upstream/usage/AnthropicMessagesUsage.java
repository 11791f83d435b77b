package dev.spendgateway.upstream.usage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.upstream.sse.SseEvent;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;

/**
 * Anthropic Messages streaming: {@code message_start.message.usage} gives input/cache tokens and a
 * first output count; each {@code message_delta.usage} carries <em>cumulative</em> counts
 * (output_tokens always; newer API versions also input/cache tokens and {@code
 * server_tool_use.web_search_requests}) that overwrite the earlier values; {@code message_stop}
 * ends the answer. The document is the merged {@code usage} object, as in the JSON answer. It is
 * final only once a {@code message_delta} brought {@code output_tokens}: an answer that ends
 * without one reported its input alone and is billed at its worst case.
 */
final class AnthropicMessagesUsage implements UsageExtractor {

  static final AnthropicMessagesUsage INSTANCE = new AnthropicMessagesUsage();

  private AnthropicMessagesUsage() {}

  @Override
  public UsageTally accept(UsageTally tally, SseEvent event) {
    UsageTally counted = tally.counted();
    return switch (event.type()) {
      case "message_start" -> onMessageStart(counted, event);
      case "message_delta" -> onMessageDelta(counted, event);
      case "message_stop" -> counted.terminated();
      default -> counted;
    };
  }

  @Override
  public Optional<JsonNode> fromJsonAnswer(JsonNode answer) {
    return Json.object(answer, "usage");
  }

  private static UsageTally onMessageStart(UsageTally tally, SseEvent event) {
    return Json.parse(event.data())
        .flatMap(json -> Json.object(json.get("message"), "usage"))
        .map(usage -> tally.withPartialUsage(usage.deepCopy()))
        .orElse(tally);
  }

  private static UsageTally onMessageDelta(UsageTally tally, SseEvent event) {
    return Json.parse(event.data())
        .flatMap(json -> Json.object(json, "usage"))
        .map(
            delta ->
                delta.has("output_tokens")
                    ? tally.withUsage(merged(tally.usageDocument(), delta))
                    : tally.withPartialUsage(merged(tally.usageDocument(), delta)))
        .orElse(tally);
  }

  /** A new object: the earlier usage with every non-null field of {@code delta} written over it. */
  static ObjectNode merged(Optional<JsonNode> earlier, JsonNode delta) {
    ObjectNode result =
        earlier
            .filter(JsonNode::isObject)
            .map(e -> (ObjectNode) e.deepCopy())
            .orElseGet(() -> Json.mapper().createObjectNode());
    overwrite(result, delta);
    return result;
  }

  private static void overwrite(ObjectNode target, JsonNode source) {
    Iterator<Map.Entry<String, JsonNode>> fields = source.fields();
    while (fields.hasNext()) {
      Map.Entry<String, JsonNode> field = fields.next();
      JsonNode value = field.getValue();
      JsonNode existing = target.get(field.getKey());
      if (value.isNull()) {
        continue;
      }
      if (value.isObject() && existing != null && existing.isObject()) {
        overwrite((ObjectNode) existing, value);
      } else {
        target.set(field.getKey(), value.deepCopy());
      }
    }
  }
}
