package dev.spendgateway.edge.call;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.policy.cost.UsageReport;
import dev.spendgateway.upstream.stream.StreamOutcome;
import java.util.function.Function;

/**
 * How one provider attempt ended, as far as the bill is concerned. The caller of the core maps what
 * the upstream did (a status, a collected body, a stream's end, a connection failure) to one of
 * these; {@link Settlement#decide} maps it to how the reservation closes.
 */
public sealed interface UpstreamOutcome {

  /**
   * Nothing can have reached the provider (the connection failed before the request was written, or
   * a breaker refused the call): the provider bills nothing.
   *
   * @param errorClass the safe class of why, e.g. {@code upstream_connect_failed}, {@code
   *     breaker_open}
   */
  record NeverSent(String errorClass) implements UpstreamOutcome {}

  /**
   * The request may have reached the provider but no answer came back (connection lost after the
   * request was written, a call timeout): it may have been billed, so nothing below the worst case.
   */
  record NoAnswer(String errorClass) implements UpstreamOutcome {}

  /** The provider answered an error status: it does not bill an error answer. */
  record ErrorStatus(int status) implements UpstreamOutcome {}

  /** A whole answer whose usage was read (or found missing: {@link UsageReport.NotReported}). */
  record Answered(UsageReport usage) implements UpstreamOutcome {}

  /**
   * An answer that could not be read to its end (cut, too large, not the JSON it should be): the
   * provider billed it, its usage is unknown.
   */
  record Unreadable(String errorClass) implements UpstreamOutcome {}

  /**
   * A streamed answer ended; {@code usageOf} reads the provider's final usage document.
   *
   * @param outcome what the counting branch learned
   * @param usageOf the provider's usage parser for the stream's usage document
   */
  record StreamEnded(StreamOutcome outcome, Function<JsonNode, UsageReport> usageOf)
      implements UpstreamOutcome {}
}
