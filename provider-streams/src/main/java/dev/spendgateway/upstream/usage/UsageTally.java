package dev.spendgateway.upstream.usage;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;

/**
 * What a usage extractor has learned from a stream so far. Immutable: each event yields a new
 * tally (the JSON document inside is never mutated after it is put here).
 *
 * @param usageDocument the usage document, shaped like the non-streamed answer would give it (see
 *     {@link ApiKind}); empty until the provider reported usage
 * @param terminalSeen whether the provider's end-of-answer event arrived ({@code message_stop},
 *     {@code [DONE]}, {@code response.completed}/{@code response.incomplete})
 * @param events events seen
 */
public record UsageTally(Optional<JsonNode> usageDocument, boolean terminalSeen, long events) {

  public static UsageTally empty() {
    return new UsageTally(Optional.empty(), false, 0);
  }

  UsageTally counted() {
    return new UsageTally(usageDocument, terminalSeen, events + 1);
  }

  UsageTally withUsage(JsonNode document) {
    return new UsageTally(Optional.of(document), terminalSeen, events);
  }

  UsageTally terminated() {
    return new UsageTally(usageDocument, true, events);
  }
}
