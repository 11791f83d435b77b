package dev.spendgateway.upstream.usage;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import dev.spendgateway.upstream.sse.SseEvent;
import java.util.Optional;

/**
 * OpenAI transcriptions: the gateway passes the answer through as one document, never as a stream
 * it meters, so there is no event to read ({@link #accept} only counts). The usage document is the
 * whole answer; a plain-text answer ({@code text}, {@code srt}, {@code vtt}) arrives as no JSON at
 * all and is handed on as a JSON null, so the parser can say why it carries no usage.
 */
final class TranscriptionUsage implements UsageExtractor {

  static final TranscriptionUsage INSTANCE = new TranscriptionUsage();

  private TranscriptionUsage() {}

  @Override
  public UsageTally accept(UsageTally tally, SseEvent event) {
    return tally.counted();
  }

  @Override
  public Optional<JsonNode> fromJsonAnswer(JsonNode answer) {
    return Optional.of(answer == null ? NullNode.getInstance() : answer);
  }
}
