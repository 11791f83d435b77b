package dev.spendgateway.upstream.stream;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;

/**
 * What the usage tap learned once the upstream of a streamed answer ended (or the gateway stopped
 * it).
 *
 * <p>Settlement rule for the caller: {@link #cleanEnd()} and the provider's final usage → parse it
 * and settle the actual cost; anything else → keep the worst case and log {@code usage_missing} (a
 * partial usage document — from a cut stream, or Anthropic's {@code message_start} alone — is a
 * lower bound, never a bill).
 *
 * @param usageDocument the usage document (shape per {@link
 *     dev.spendgateway.upstream.usage.ApiKind}), possibly partial when not clean
 * @param termination how the upstream ended
 * @param clientDisconnected the client left, or never came within the client subscribe timeout,
 *     before the upstream ended (the rest was drained)
 * @param bytes upstream bytes read
 * @param events SSE events decoded
 * @param malformed SSE lines/events the tap skipped for breaking the size bounds
 * @param errorClass a safe error class (no message, no URL) when the upstream failed
 * @param usageFinal the usage document holds the provider's final count, not a partial one
 */
public record StreamOutcome(
    Optional<JsonNode> usageDocument,
    Termination termination,
    boolean clientDisconnected,
    long bytes,
    long events,
    long malformed,
    Optional<String> errorClass,
    boolean usageFinal) {

  /** The provider finished the answer and the whole stream was read. */
  public boolean cleanEnd() {
    return termination == Termination.COMPLETED;
  }

  /** Clean end with the final usage: the only case that may settle below the worst case. */
  public boolean usageSettled() {
    return cleanEnd() && usageDocument.isPresent() && usageFinal;
  }
}
