package dev.spendgateway.upstream.stream;

import java.util.concurrent.CompletionStage;
import org.apache.pekko.NotUsed;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * A streamed answer split in two: the bytes for the client, and the outcome of counting them.
 *
 * <p>{@code toClient} must be run exactly once (normally as the chunked entity of the response to
 * the caller). Running it starts the whole graph, the upstream read included; the {@code outcome}
 * completes when the upstream ends, even if the client left early. If the edge decides not to send
 * the stream after all, it must still run it, e.g. {@code toClient.runWith(Sink.cancelled(), mat)}:
 * the counting branch then drains the upstream (bounded by the drain timeout) and the outcome
 * completes. {@code outcome} never completes exceptionally.
 */
public record MeteredStream(
    Source<ByteString, NotUsed> toClient, CompletionStage<StreamOutcome> outcome) {}
