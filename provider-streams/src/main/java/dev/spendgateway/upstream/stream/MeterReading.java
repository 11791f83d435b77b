package dev.spendgateway.upstream.stream;

import dev.spendgateway.upstream.sse.SseEvent;
import dev.spendgateway.upstream.usage.UsageExtractor;
import dev.spendgateway.upstream.usage.UsageTally;
import java.util.List;
import java.util.Optional;

/**
 * The counting branch's fold state: usage tally plus byte count and how the upstream ended.
 * Immutable; {@code failure} is the safe class name of the upstream error, if any.
 */
record MeterReading(UsageTally tally, long bytes, long malformed, Optional<String> failure) {

  static MeterReading start() {
    return new MeterReading(UsageTally.empty(), 0, 0, Optional.empty());
  }

  /** The reading when the counting branch itself broke (a bug): nothing known, keep worst case. */
  static MeterReading failedMeter() {
    return new MeterReading(UsageTally.empty(), 0, 0, Optional.of("meter_failed"));
  }

  MeterReading plus(MeterSignal signal, UsageExtractor extractor) {
    if (signal instanceof MeterSignal.Chunk chunk) {
      return withChunk(chunk, extractor);
    }
    MeterSignal.Failed failed = (MeterSignal.Failed) signal;
    return new MeterReading(tally, bytes, malformed, Optional.of(failed.errorClass()));
  }

  private MeterReading withChunk(MeterSignal.Chunk chunk, UsageExtractor extractor) {
    UsageTally next = tally;
    for (SseEvent event : chunk.events()) {
      next = extractor.accept(next, event);
    }
    return new MeterReading(next, bytes + chunk.bytes(), chunk.malformedSoFar(), failure);
  }

  /** What the tally says once the upstream is over (client status added by the caller). */
  StreamOutcome toOutcome(boolean clientDisconnected, boolean drainTimedOut) {
    Termination termination;
    if (drainTimedOut) {
      termination = Termination.DRAIN_TIMEOUT;
    } else if (failure.isPresent()) {
      termination = Termination.UPSTREAM_FAILED;
    } else if (tally.terminalSeen()) {
      termination = Termination.COMPLETED;
    } else {
      termination = Termination.ENDED_EARLY;
    }
    return new StreamOutcome(
        tally.usageDocument(),
        termination,
        clientDisconnected,
        bytes,
        tally.events(),
        malformed,
        failure,
        tally.usageFinal());
  }

  /** What flows down the counting branch: decoded chunks, then at most one failure marker. */
  sealed interface MeterSignal {
    record Chunk(int bytes, List<SseEvent> events, long malformedSoFar) implements MeterSignal {}

    record Failed(String errorClass) implements MeterSignal {}
  }
}
