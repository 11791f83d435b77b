package dev.spendgateway.upstream.stream;

import dev.spendgateway.upstream.client.SafeErrors;
import dev.spendgateway.upstream.sse.SseDecoder;
import dev.spendgateway.upstream.sse.SseEvent;
import dev.spendgateway.upstream.sse.SseLimits;
import dev.spendgateway.upstream.usage.UsageExtractor;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.FlowShape;
import org.apache.pekko.stream.Inlet;
import org.apache.pekko.stream.Outlet;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.stage.AbstractGraphStageWithMaterializedValue;
import org.apache.pekko.stream.stage.AbstractInHandler;
import org.apache.pekko.stream.stage.AbstractOutHandler;
import org.apache.pekko.stream.stage.GraphStageLogic;
import org.apache.pekko.stream.stage.TimerGraphStageLogic;
import org.apache.pekko.util.ByteString;

/**
 * The one stage that meters a streamed answer: it passes the provider's bytes to the client
 * unchanged, one chunk for one chunk, and counts the usage in them as they go by.
 *
 * <pre>
 *   upstream ──▶ UsageTap ──▶ client
 *                  │
 *                  └─ SSE decode ─ usage tally ─▶ materialized CompletionStage&lt;StreamOutcome&gt;
 * </pre>
 *
 * <p>The outcome is the lifecycle of one streamed answer's count, so it has a single close and
 * every ending goes through it, first ending wins:
 *
 * <table>
 *   <caption>Endings</caption>
 *   <tr><th>what happened</th><th>outcome</th><th>stage then</th></tr>
 *   <tr><td>upstream completes after the end-of-answer event</td><td>{@link Termination#COMPLETED}
 *       (with or without usage: {@link StreamOutcome#usageSettled()} tells)</td><td>completes the client</td></tr>
 *   <tr><td>upstream completes before it</td><td>{@link Termination#ENDED_EARLY}</td><td>completes the client</td></tr>
 *   <tr><td>upstream fails (reset, idle timeout)</td><td>{@link Termination#UPSTREAM_FAILED}, safe error class</td>
 *       <td>fails the client</td></tr>
 *   <tr><td>client cancels</td><td>nothing yet: the tap keeps pulling the upstream (drain) and ends by one of
 *       the rows above, with {@code clientDisconnected}</td><td>starts the drain timer</td></tr>
 *   <tr><td>the drain timer fires first</td><td>{@link Termination#DRAIN_TIMEOUT}, {@code drain_timeout}</td>
 *       <td>cancels the upstream</td></tr>
 *   <tr><td>the stage stops any other way (materializer shut down, a bug)</td><td>{@link Termination#STOPPED},
 *       {@code meter_stopped}, from {@code postStop}</td><td>—</td></tr>
 * </table>
 *
 * <p>Backpressure is the client's: the tap pulls the upstream only when the client pulls, and holds
 * no chunk itself, so a slow client slows the upstream read. Once the client is gone the tap pulls
 * on its own. Counting is cheap (an incremental SSE decoder bounded by {@link SseLimits}) and never
 * throws. The outcome never completes exceptionally and carries no bytes of the answer and no
 * exception message.
 *
 * <p>Each materialization has its own decoder, tally and outcome.
 */
public final class UsageTap
    extends AbstractGraphStageWithMaterializedValue<
        FlowShape<ByteString, ByteString>, CompletionStage<StreamOutcome>> {

  /** The outcome's error class when the drain timer cut an abandoned stream. */
  static final String DRAIN_TIMEOUT = "drain_timeout";

  /** The outcome's error class when the stage stopped before the upstream ended. */
  static final String STOPPED = "meter_stopped";

  private static final String DRAIN_TIMER = "drain";

  private final Inlet<ByteString> upstream = Inlet.create("UsageTap.upstream");
  private final Outlet<ByteString> client = Outlet.create("UsageTap.client");
  private final FlowShape<ByteString, ByteString> shape = FlowShape.of(upstream, client);

  private final SseLimits limits;
  private final UsageExtractor extractor;
  private final Duration drainTimeout;

  /**
   * @param limits SSE bounds ({@code providers.max-sse-line-bytes}/{@code max-sse-event-bytes})
   * @param extractor reads the usage of the provider's API ({@code ApiKind.extractor()})
   * @param drainTimeout {@code providers.drain-timeout}: how long an abandoned stream is still read
   */
  public UsageTap(SseLimits limits, UsageExtractor extractor, Duration drainTimeout) {
    this.limits = limits;
    this.extractor = extractor;
    this.drainTimeout = drainTimeout;
  }

  /** The tap as a flow whose materialized value is the outcome. */
  public static Flow<ByteString, ByteString, CompletionStage<StreamOutcome>> flow(
      SseLimits limits, UsageExtractor extractor, Duration drainTimeout) {
    return Flow.fromGraph(new UsageTap(limits, extractor, drainTimeout));
  }

  @Override
  public FlowShape<ByteString, ByteString> shape() {
    return shape;
  }

  @Override
  public Pair<GraphStageLogic, CompletionStage<StreamOutcome>> createLogicAndMaterializedValuePair(
      Attributes inheritedAttributes) {
    CompletableFuture<StreamOutcome> outcome = new CompletableFuture<>();
    return Pair.create(new Tap(outcome), outcome);
  }

  /** One stream's count. All its methods run on the stage's own thread, one at a time. */
  private final class Tap extends TimerGraphStageLogic {
    private final CompletableFuture<StreamOutcome> outcome;
    private final SseDecoder decoder = new SseDecoder(limits);
    private MeterReading reading = MeterReading.start();
    private boolean clientLeft;

    Tap(CompletableFuture<StreamOutcome> outcome) {
      super(shape);
      this.outcome = outcome;
      setHandler(
          upstream,
          new AbstractInHandler() {
            @Override
            public void onPush() {
              onChunk(grab(upstream));
            }

            @Override
            public void onUpstreamFinish() {
              onUpstreamEnded();
            }

            @Override
            public void onUpstreamFailure(Throwable error) {
              onUpstreamBroke(error);
            }
          });
      setHandler(
          client,
          new AbstractOutHandler() {
            @Override
            public void onPull() {
              pull(upstream);
            }

            @Override
            public void onDownstreamFinish(Throwable cause) {
              onClientLeft();
            }
          });
    }

    private void onChunk(ByteString chunk) {
      count(chunk.size(), decoder.feed(chunk));
      if (clientLeft) {
        pull(upstream); // draining: nobody else asks for more
      } else {
        push(client, chunk);
      }
    }

    private void onUpstreamEnded() {
      count(0, decoder.finish());
      close(reading.finished(clientLeft));
      completeStage();
    }

    private void onUpstreamBroke(Throwable error) {
      close(reading.cut(Termination.UPSTREAM_FAILED, SafeErrors.classify(error), clientLeft));
      failStage(error);
    }

    /**
     * The client cancelled (hung up, or never came). Not the end of the count: the provider bills
     * the whole answer, so the tap reads the rest, for at most the drain timeout.
     */
    private void onClientLeft() {
      clientLeft = true;
      scheduleOnce(DRAIN_TIMER, drainTimeout);
      if (!hasBeenPulled(upstream)) {
        pull(upstream);
      }
    }

    @Override
    public void onTimer(Object timerKey) {
      close(reading.cut(Termination.DRAIN_TIMEOUT, DRAIN_TIMEOUT, true));
      completeStage(); // cancels the upstream: the provider's connection is closed
    }

    @Override
    public void postStop() {
      // Reached after every ending; only counts when none of the handlers above closed first.
      close(reading.cut(Termination.STOPPED, STOPPED, clientLeft));
    }

    private void count(int chunkBytes, List<SseEvent> events) {
      reading = reading.withChunk(chunkBytes, events, decoder.malformed(), extractor);
    }

    /** The single close of the outcome: the first ending wins, later ones change nothing. */
    private void close(StreamOutcome ending) {
      if (!outcome.isDone()) {
        outcome.complete(ending);
      }
    }
  }
}
