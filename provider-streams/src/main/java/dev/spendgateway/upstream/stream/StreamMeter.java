package dev.spendgateway.upstream.stream;

import dev.spendgateway.upstream.client.SafeErrors;
import dev.spendgateway.upstream.client.UpstreamSettings;
import dev.spendgateway.upstream.sse.SseDecoder;
import dev.spendgateway.upstream.sse.SseLimits;
import dev.spendgateway.upstream.stream.MeterReading.MeterSignal;
import dev.spendgateway.upstream.usage.ApiKind;
import dev.spendgateway.upstream.usage.UsageExtractor;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.japi.pf.PFBuilder;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.SinkShape;
import org.apache.pekko.stream.SourceShape;
import org.apache.pekko.stream.UniformFanOutShape;
import org.apache.pekko.stream.UniqueKillSwitch;
import org.apache.pekko.stream.javadsl.Broadcast;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.GraphDSL;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import scala.concurrent.ExecutionContext;

/**
 * Meters streamed answers: one Pekko Streams graph per answer that forwards the provider's bytes
 * unchanged to the client and, through a {@code Broadcast(eagerCancel = false)}, to a counting
 * branch that decodes the SSE events and folds the usage.
 *
 * <pre>
 *   upstream ─ killSwitch ─ watch ─ Broadcast ─┬─ watch ───────────────────────────── client
 *                                              └─ SSE decode ─ recover ─ fold(usage) ─ outcome
 * </pre>
 *
 * <ul>
 *   <li>Backpressure end to end: the broadcast only pulls when both branches want more, and the
 *       counting branch is fast, so a slow client slows the upstream read; nothing buffers the
 *       answer.
 *   <li>Client leaves: its branch cancels, the broadcast keeps feeding the counting branch, which
 *       drains the upstream to its end. A timer ({@code drain-timeout}) then aborts the upstream
 *       through the kill switch if it has not ended.
 *   <li>Upstream fails: the client branch fails (the edge closes the connection), the counting
 *       branch records the failure and the outcome says {@link Termination#UPSTREAM_FAILED}.
 * </ul>
 *
 * <p>Thread-safe and stateless apart from its settings; create one per actor system.
 */
public final class StreamMeter {

  private final ActorSystem<?> system;
  private final SseLimits limits;
  private final Duration drainTimeout;

  private StreamMeter(ActorSystem<?> system, SseLimits limits, Duration drainTimeout) {
    this.system = system;
    this.limits = limits;
    this.drainTimeout = drainTimeout;
  }

  /**
   * @param limits SSE bounds ({@code providers.max-sse-line-bytes}/{@code max-sse-event-bytes})
   * @param drainTimeout {@code providers.drain-timeout}
   */
  public static StreamMeter create(ActorSystem<?> system, SseLimits limits, Duration drainTimeout) {
    return new StreamMeter(system, limits, drainTimeout);
  }

  /** The meter configured from {@code providers.*}: SSE bounds and drain timeout. */
  public static StreamMeter create(ActorSystem<?> system, UpstreamSettings settings) {
    return new StreamMeter(system, settings.sseLimits(), settings.drainTimeout());
  }

  /**
   * Splits {@code upstream} (a provider's SSE body) into the client's bytes and the counting
   * outcome. Lazy: nothing is read until {@link MeteredStream#toClient()} is run.
   */
  public MeteredStream meter(Source<ByteString, ?> upstream, ApiKind kind) {
    CompletableFuture<StreamOutcome> outcome = new CompletableFuture<>();
    Source<ByteString, NotUsed> toClient =
        Source.fromGraph(
                GraphDSL.create3(
                    watchedUpstream(upstream),
                    countingSink(kind.extractor()),
                    clientWatch(),
                    Materialized::new,
                    StreamMeter::wire))
            .mapMaterializedValue(m -> startRun(m, outcome));
    return new MeteredStream(toClient, outcome);
  }

  // --- graph parts -------------------------------------------------------------------------

  private static Source<ByteString, Pair<UniqueKillSwitch, CompletionStage<Done>>> watchedUpstream(
      Source<ByteString, ?> upstream) {
    return upstream
        .viaMat(KillSwitches.<ByteString>single(), Keep.right())
        .watchTermination(Pair::create);
  }

  private static Flow<ByteString, ByteString, CompletionStage<Done>> clientWatch() {
    return Flow.of(ByteString.class).watchTermination(Keep.right());
  }

  private Sink<ByteString, CompletionStage<MeterReading>> countingSink(UsageExtractor extractor) {
    return Flow.of(ByteString.class)
        .statefulMap(() -> new SseDecoder(limits), StreamMeter::decode, StreamMeter::decodeRest)
        .recover(new PFBuilder<Throwable, MeterSignal>().matchAny(StreamMeter::failed).build())
        .toMat(
            Sink.fold(MeterReading.start(), (reading, signal) -> reading.plus(signal, extractor)),
            Keep.right());
  }

  private static SourceShape<ByteString> wire(
      GraphDSL.Builder<Materialized> b,
      SourceShape<ByteString> upstream,
      SinkShape<ByteString> counter,
      FlowShape<ByteString, ByteString> client) {
    UniformFanOutShape<ByteString, ByteString> fanOut = b.add(Broadcast.create(2, false));
    b.from(upstream).toFanOut(fanOut);
    b.from(fanOut.out(0)).via(client);
    b.from(fanOut.out(1)).to(counter);
    return SourceShape.of(client.out());
  }

  private static Pair<SseDecoder, MeterSignal> decode(SseDecoder decoder, ByteString chunk) {
    MeterSignal signal = new MeterSignal.Chunk(chunk.size(), decoder.feed(chunk), decoder.malformed());
    return Pair.create(decoder, signal);
  }

  private static Optional<MeterSignal> decodeRest(SseDecoder decoder) {
    return Optional.of(new MeterSignal.Chunk(0, decoder.finish(), decoder.malformed()));
  }

  private static MeterSignal failed(Throwable error) {
    return new MeterSignal.Failed(SafeErrors.classify(error));
  }

  // --- per-run bookkeeping -----------------------------------------------------------------

  private NotUsed startRun(Materialized m, CompletableFuture<StreamOutcome> outcome) {
    new Run(m, outcome).start();
    return NotUsed.getInstance();
  }

  private record Materialized(
      Pair<UniqueKillSwitch, CompletionStage<Done>> upstream,
      CompletionStage<MeterReading> counting,
      CompletionStage<Done> client) {}

  /** The drain timer and the outcome of one materialized graph. */
  private final class Run {
    private final Materialized m;
    private final CompletableFuture<StreamOutcome> outcome;
    private final AtomicBoolean clientLeft = new AtomicBoolean();
    private final AtomicBoolean drainTimedOut = new AtomicBoolean();
    private final AtomicReference<Cancellable> drainTimer = new AtomicReference<>();

    Run(Materialized m, CompletableFuture<StreamOutcome> outcome) {
      this.m = m;
      this.outcome = outcome;
    }

    void start() {
      m.client().whenComplete((done, error) -> onClientTerminated());
      m.counting().whenComplete(this::onCountingDone);
    }

    /** The client branch ended; if the upstream still runs, the client left: bound the drain. */
    private void onClientTerminated() {
      if (m.upstream().second().toCompletableFuture().isDone()) {
        return;
      }
      clientLeft.set(true);
      ExecutionContext ec = system.executionContext();
      drainTimer.set(system.scheduler().scheduleOnce(drainTimeout, this::abortDrain, ec));
      if (outcome.isDone()) {
        drainTimer.get().cancel();
      }
    }

    private void abortDrain() {
      drainTimedOut.set(true);
      m.upstream().first().abort(new DrainTimeoutException());
    }

    private void onCountingDone(MeterReading reading, Throwable error) {
      Cancellable timer = drainTimer.get();
      if (timer != null) {
        timer.cancel();
      }
      if (error != null) {
        outcome.complete(MeterReading.failedMeter().toOutcome(clientLeft.get(), false));
      } else {
        outcome.complete(reading.toOutcome(clientLeft.get(), drainTimedOut.get()));
      }
    }
  }

  /** Aborts an abandoned stream's drain; carries no message, so it can't leak anything. */
  static final class DrainTimeoutException extends RuntimeException {
    DrainTimeoutException() {
      super("drain timeout", null, false, false);
    }
  }
}
