package dev.spendgateway.upstream.usage;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.upstream.sse.SseEvent;
import java.util.Optional;

/**
 * OpenAI Chat Completions streaming with {@code stream_options.include_usage}: the last chunk
 * before {@code data: [DONE]} has {@code "choices": []} and a {@code usage} object (earlier chunks
 * carry {@code "usage": null}). The document is that {@code usage} object, as in the JSON answer.
 */
final class OpenAiChatUsage implements UsageExtractor {

  static final OpenAiChatUsage INSTANCE = new OpenAiChatUsage();
  private static final String DONE = "[DONE]";

  private OpenAiChatUsage() {}

  @Override
  public UsageTally accept(UsageTally tally, SseEvent event) {
    UsageTally counted = tally.counted();
    String data = event.data();
    if (data.strip().equals(DONE)) {
      return counted.terminated();
    }
    if (!data.contains("\"usage\"")) {
      return counted; // cheap skip for the many content chunks
    }
    return Json.parse(data)
        .flatMap(json -> Json.object(json, "usage"))
        .map(usage -> counted.withUsage(usage))
        .orElse(counted);
  }

  @Override
  public Optional<JsonNode> fromJsonAnswer(JsonNode answer) {
    return Json.object(answer, "usage");
  }
}
