package dev.spendgateway.upstream.stream;

import java.util.concurrent.CompletionStage;
import org.apache.pekko.NotUsed;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * A streamed answer that is already being metered: the bytes for the client, and the outcome of
 * counting them.
 *
 * <p>The upstream read and its count started when this was made; {@code outcome} completes when the
 * upstream has ended and the client's side is over (read to its end, failed or cancelled), whatever
 * the client does. {@code toClient} may be run once (normally as the chunked entity of the response
 * to the caller). If it is not run within the meter's client subscribe timeout (the caller hung up
 * before the response started, or the edge decided not to send it), the client counts as gone: the
 * rest of the upstream is drained, bounded by the drain timeout, and a late or second run fails at
 * once. An edge that knows it will not send the stream may run it with {@code Sink.cancelled()} to
 * start the drain without waiting for that timeout. {@code outcome} never completes exceptionally.
 */
public record MeteredStream(
    Source<ByteString, NotUsed> toClient, CompletionStage<StreamOutcome> outcome) {}
