package dev.spendgateway.upstream.stream;

import dev.spendgateway.upstream.client.SafeErrors;
import dev.spendgateway.upstream.client.UpstreamSettings;
import dev.spendgateway.upstream.sse.SseLimits;
import dev.spendgateway.upstream.usage.ApiKind;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.ActorAttributes;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.StreamSubscriptionTimeoutTerminationMode;
import org.apache.pekko.stream.javadsl.AsPublisher;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.reactivestreams.Publisher;

/**
 * Meters streamed answers. {@link #meter} starts, at once, one small graph per answer:
 *
 * <pre>
 *   upstream ─ UsageTap ─ one-subscriber publisher ═══ ClientHandoff ═══▶ toClient (the caller's response)
 *                 └─▶ counted ───────────────────────────────┴─ client's side over ─▶ outcome
 * </pre>
 *
 * <ul>
 *   <li>The count runs whatever the client does: it no longer waits for the web server to start the
 *       response, which it never does when the caller hangs up before the headers.
 *   <li>Backpressure end to end: the tap pulls only when the client pulls, so a slow client slows
 *       the upstream read; only the handoff's small input buffer lies in between.
 *   <li>Client leaves, or never subscribes within the client subscribe timeout: the tap drains the
 *       upstream to its end, for at most the drain timeout ({@link Termination#DRAIN_TIMEOUT}).
 *   <li>Upstream fails: the client's stream fails (the server closes the connection) and the
 *       outcome says {@link Termination#UPSTREAM_FAILED}.
 * </ul>
 *
 * <p>Pekko's own stream subscription timeout is switched off on the handoff: it would cancel the
 * stream without a word; the client subscribe timeout does the same job and is a setting.
 *
 * <p>Thread-safe and stateless apart from its settings; create one per actor system.
 */
public final class StreamMeter {

  /**
   * The client subscribe timeout when none is configured: long enough for the web server to start a
   * response it was just handed, short enough that an abandoned stream's count is not held up.
   */
  public static final Duration DEFAULT_CLIENT_SUBSCRIBE_TIMEOUT = Duration.ofSeconds(5);

  private final ActorSystem<?> system;
  private final Materializer materializer;
  private final SseLimits limits;
  private final Duration drainTimeout;
  private final Duration clientSubscribeTimeout;

  private StreamMeter(
      ActorSystem<?> system,
      SseLimits limits,
      Duration drainTimeout,
      Duration clientSubscribeTimeout) {
    this.system = system;
    this.materializer = Materializer.matFromSystem(system);
    this.limits = limits;
    this.drainTimeout = drainTimeout;
    this.clientSubscribeTimeout = clientSubscribeTimeout;
  }

  /**
   * @param limits SSE bounds ({@code providers.max-sse-line-bytes}/{@code max-sse-event-bytes})
   * @param drainTimeout {@code providers.drain-timeout}: how long a left client's stream is still
   *     read
   * @param clientSubscribeTimeout {@code providers.client-subscribe-timeout}: how long the response
   *     may take to start reading a metered stream before the client counts as gone
   */
  public static StreamMeter create(
      ActorSystem<?> system,
      SseLimits limits,
      Duration drainTimeout,
      Duration clientSubscribeTimeout) {
    return new StreamMeter(system, limits, drainTimeout, clientSubscribeTimeout);
  }

  /**
   * As {@link #create(ActorSystem, SseLimits, Duration, Duration)}, with {@link
   * #DEFAULT_CLIENT_SUBSCRIBE_TIMEOUT}.
   */
  public static StreamMeter create(ActorSystem<?> system, SseLimits limits, Duration drainTimeout) {
    return create(system, limits, drainTimeout, DEFAULT_CLIENT_SUBSCRIBE_TIMEOUT);
  }

  /** The meter configured from {@code providers.*}, with the given client subscribe timeout. */
  public static StreamMeter create(
      ActorSystem<?> system, UpstreamSettings settings, Duration clientSubscribeTimeout) {
    return create(system, settings.sseLimits(), settings.drainTimeout(), clientSubscribeTimeout);
  }

  /**
   * The meter configured from {@code providers.*}, with {@link #DEFAULT_CLIENT_SUBSCRIBE_TIMEOUT}.
   */
  public static StreamMeter create(ActorSystem<?> system, UpstreamSettings settings) {
    return create(system, settings, DEFAULT_CLIENT_SUBSCRIBE_TIMEOUT);
  }

  /**
   * Starts reading {@code upstream} (a provider's SSE body) through the usage tap and hands its
   * bytes to whoever runs {@link MeteredStream#toClient()} first, within the client subscribe
   * timeout. The outcome completes whatever the client does, once the upstream has ended and the
   * client's side is over (read to its end, failed, cancelled, or given up).
   */
  public MeteredStream meter(Source<ByteString, ?> upstream, ApiKind kind) {
    Pair<CompletionStage<StreamOutcome>, Publisher<ByteString>> running;
    try {
      running =
          upstream
              .viaMat(UsageTap.flow(limits, kind.extractor(), drainTimeout), Keep.right())
              .toMat(oneSubscriberHandoff(), Keep.both())
              .run(materializer);
    } catch (RuntimeException materializerGone) {
      return notStarted(materializerGone);
    }
    ClientHandoff handoff =
        ClientHandoff.awaitClient(
            running.second(),
            clientSubscribeTimeout,
            system.scheduler(),
            system.executionContext());
    return new MeteredStream(clientSide(handoff), afterTheClient(running.first(), handoff));
  }

  /**
   * What the edge sends. The watch sits after the handoff's buffer, so it ends only when the
   * client's own stream has taken the last chunk, failed or cancelled; a run refused with {@link
   * ClientHandoff.ClientGone} was never the client and does not count.
   */
  private static Source<ByteString, NotUsed> clientSide(ClientHandoff handoff) {
    return Source.fromPublisher(handoff)
        .watchTermination(
            (notUsed, over) -> {
              over.whenComplete(
                  (done, error) -> {
                    if (!(SafeErrors.unwrap(error) instanceof ClientHandoff.ClientGone)) {
                      handoff.clientEnded();
                    }
                  });
              return NotUsed.getInstance();
            });
  }

  /**
   * The tap's outcome, released once the client's side is over too. The handoff reads a few chunks
   * ahead of the client, so the upstream can end while the client still reads; the caller settles
   * and logs on the outcome, and that must not overtake the answer's delivery. A stopped meter does
   * not wait: nothing will move on the client's side any more.
   */
  private static CompletionStage<StreamOutcome> afterTheClient(
      CompletionStage<StreamOutcome> counted, ClientHandoff handoff) {
    return counted.thenCompose(
        outcome ->
            outcome.termination() == Termination.STOPPED
                ? CompletableFuture.completedFuture(outcome)
                : handoff.clientDone().thenApply(clientOver -> outcome));
  }

  private Sink<ByteString, Publisher<ByteString>> oneSubscriberHandoff() {
    return Sink.<ByteString>asPublisher(AsPublisher.WITHOUT_FANOUT)
        .withAttributes(
            ActorAttributes.streamSubscriptionTimeout(
                clientSubscribeTimeout, StreamSubscriptionTimeoutTerminationMode.noop()));
  }

  /**
   * The graph could not even start (the materializer is shut down: the gateway is stopping).
   * Nothing was read; the outcome says so and the edge keeps the worst case.
   */
  private static MeteredStream notStarted(RuntimeException why) {
    StreamOutcome stopped = MeterReading.start().cut(Termination.STOPPED, UsageTap.STOPPED, true);
    Source<ByteString, NotUsed> failed =
        Source.failed(new IllegalStateException(SafeErrors.classify(why)));
    return new MeteredStream(failed, CompletableFuture.completedFuture(stopped));
  }
}
