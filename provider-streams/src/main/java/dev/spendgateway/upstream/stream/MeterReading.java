package dev.spendgateway.upstream.stream;

import dev.spendgateway.upstream.sse.SseEvent;
import dev.spendgateway.upstream.usage.UsageExtractor;
import dev.spendgateway.upstream.usage.UsageTally;
import java.util.List;
import java.util.Optional;

/**
 * What the usage tap has counted so far: the usage tally, the bytes read and the SSE lines or
 * events skipped for breaking the size bounds. Immutable; every chunk yields a new reading.
 */
record MeterReading(UsageTally tally, long bytes, long malformed) {

  static MeterReading start() {
    return new MeterReading(UsageTally.empty(), 0, 0);
  }

  /**
   * The reading after one more chunk of the body.
   *
   * @param chunkBytes the chunk's size (0 for the decoder's last events at the end of the body)
   * @param events the SSE events the chunk completed
   * @param malformedSoFar the decoder's running count of skipped lines and events
   */
  MeterReading withChunk(
      int chunkBytes, List<SseEvent> events, long malformedSoFar, UsageExtractor extractor) {
    UsageTally next = tally;
    for (SseEvent event : events) {
      next = extractor.accept(next, event);
    }
    return new MeterReading(next, bytes + chunkBytes, malformedSoFar);
  }

  /**
   * The upstream ended normally: {@link Termination#COMPLETED} if the provider's end-of-answer
   * event came, else {@link Termination#ENDED_EARLY} (a stream closed mid-answer is a cut).
   */
  StreamOutcome finished(boolean clientLeft) {
    Termination termination =
        tally.terminalSeen() ? Termination.COMPLETED : Termination.ENDED_EARLY;
    return outcome(termination, Optional.empty(), clientLeft);
  }

  /** The stream did not reach its normal end; the usage known so far is a lower bound only. */
  StreamOutcome cut(Termination why, String safeErrorClass, boolean clientLeft) {
    return outcome(why, Optional.of(safeErrorClass), clientLeft);
  }

  private StreamOutcome outcome(
      Termination termination, Optional<String> errorClass, boolean clientLeft) {
    return new StreamOutcome(
        tally.usageDocument(),
        termination,
        clientLeft,
        bytes,
        tally.events(),
        malformed,
        errorClass,
        tally.usageFinal());
  }
}
