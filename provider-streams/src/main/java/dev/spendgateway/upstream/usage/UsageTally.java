package dev.spendgateway.upstream.usage;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;

/**
 * What a usage extractor has learned from a stream so far. Immutable: each event yields a new tally
 * (the JSON document inside is never mutated after it is put here).
 *
 * @param usageDocument the usage document, shaped like the non-streamed answer would give it (see
 *     {@link ApiKind}); empty until the provider reported usage
 * @param usageFinal whether the document holds the provider's final count; Anthropic's {@code
 *     message_start} usage is sent before generation (output_tokens 1), so until a {@code
 *     message_delta} brings the final count it is only a lower bound, never a bill
 * @param terminalSeen whether the provider's end-of-answer event arrived ({@code message_stop},
 *     {@code [DONE]}, {@code response.completed}/{@code response.incomplete})
 * @param events events seen
 */
public record UsageTally(
    Optional<JsonNode> usageDocument, boolean usageFinal, boolean terminalSeen, long events) {

  public static UsageTally empty() {
    return new UsageTally(Optional.empty(), false, false, 0);
  }

  UsageTally counted() {
    return new UsageTally(usageDocument, usageFinal, terminalSeen, events + 1);
  }

  UsageTally withUsage(JsonNode document) {
    return new UsageTally(Optional.of(document), true, terminalSeen, events);
  }

  /** Usage known so far that is not yet the provider's final count. */
  UsageTally withPartialUsage(JsonNode document) {
    return new UsageTally(Optional.of(document), false, terminalSeen, events);
  }

  UsageTally terminated() {
    return new UsageTally(usageDocument, usageFinal, true, events);
  }
}
