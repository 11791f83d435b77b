package dev.spendgateway.upstream.usage;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.upstream.sse.SseEvent;
import java.util.Optional;
import java.util.Set;

/**
 * OpenAI Responses API streaming: the answer ends with {@code response.completed} (or {@code
 * response.incomplete} when {@code max_output_tokens} ran out — still billed) whose {@code
 * response} object carries {@code usage}; {@code response.failed} also ends it (its response may or
 * may not have usage). There is no {@code [DONE]}. The document is the whole {@code response}
 * object, as the non-streamed answer is.
 */
final class OpenAiResponsesUsage implements UsageExtractor {

  static final OpenAiResponsesUsage INSTANCE = new OpenAiResponsesUsage();
  private static final Set<String> TERMINAL =
      Set.of("response.completed", "response.incomplete", "response.failed");

  private OpenAiResponsesUsage() {}

  @Override
  public UsageTally accept(UsageTally tally, SseEvent event) {
    UsageTally counted = tally.counted();
    String type = terminalType(event);
    if (type == null) {
      return counted;
    }
    UsageTally ended = counted.terminated();
    return Json.parse(event.data())
        .flatMap(json -> Json.object(json, "response"))
        .map(ended::withUsage)
        .orElse(ended);
  }

  @Override
  public Optional<JsonNode> fromJsonAnswer(JsonNode answer) {
    return answer != null && answer.isObject() ? Optional.of(answer) : Optional.empty();
  }

  /** The terminal event type from the SSE name, or from the data's type when the name is absent. */
  private static String terminalType(SseEvent event) {
    if (TERMINAL.contains(event.type())) {
      return event.type();
    }
    if (!event.type().equals(SseEvent.DEFAULT_TYPE) || !event.data().contains("\"response.")) {
      return null;
    }
    return Json.parse(event.data())
        .map(json -> json.path("type").asText(""))
        .filter(TERMINAL::contains)
        .orElse(null);
  }
}
