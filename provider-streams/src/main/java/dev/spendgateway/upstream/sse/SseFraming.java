package dev.spendgateway.upstream.sse;

import java.util.List;
import java.util.Optional;
import org.apache.pekko.NotUsed;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.util.ByteString;

/** Stream stages that turn a provider's SSE bytes into {@link SseEvent}s. */
public final class SseFraming {

  private SseFraming() {}

  /**
   * A fresh decoder per materialization: bytes in, events out; split events, CRLF, comments and
   * multi-line data handled; bounded by {@code limits}; never fails on malformed input.
   */
  public static Flow<ByteString, SseEvent, NotUsed> events(SseLimits limits) {
    return Flow.of(ByteString.class)
        .statefulMap(() -> new SseDecoder(limits), SseFraming::feed, SseFraming::finish)
        .mapConcat(events -> events);
  }

  private static Pair<SseDecoder, List<SseEvent>> feed(SseDecoder decoder, ByteString chunk) {
    return Pair.create(decoder, decoder.feed(chunk));
  }

  private static Optional<List<SseEvent>> finish(SseDecoder decoder) {
    return Optional.of(decoder.finish());
  }
}
