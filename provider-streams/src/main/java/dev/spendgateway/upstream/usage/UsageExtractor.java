package dev.spendgateway.upstream.usage;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.upstream.sse.SseEvent;
import java.util.Optional;

/**
 * Reads a provider's usage, from a streamed answer one event at a time, or from a whole JSON
 * answer. Implementations are stateless; the state is the {@link UsageTally} folded through.
 */
public interface UsageExtractor {

  /**
   * Folds one SSE event into the tally. Never throws: unreadable events are counted and skipped.
   */
  UsageTally accept(UsageTally tally, SseEvent event);

  /** The usage document of a non-streamed JSON answer, same shape as the streamed one. */
  Optional<JsonNode> fromJsonAnswer(JsonNode answer);
}
