package dev.spendgateway.upstream.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.spendgateway.upstream.Fixtures;
import dev.spendgateway.upstream.sse.SseLimits;
import dev.spendgateway.upstream.usage.ApiKind;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.SinkQueueWithCancel;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

class StreamMeterTest {

  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final SseLimits LIMITS = new SseLimits(1 << 20, 1 << 20);
  private static final ByteString ANTHROPIC = Fixtures.bytes(Fixtures.ANTHROPIC);

  @AfterAll
  static void cleanup() {
    testKit.shutdownTestKit();
  }

  private static StreamMeter meter(Duration drainTimeout) {
    return StreamMeter.create(testKit.system(), LIMITS, drainTimeout);
  }

  private static StreamMeter meter(Duration drainTimeout, Duration clientSubscribeTimeout) {
    return StreamMeter.create(testKit.system(), LIMITS, drainTimeout, clientSubscribeTimeout);
  }

  /**
   * The chunks after a silence that starts when the provider gets to them, as a real pause does.
   */
  private static Source<ByteString, NotUsed> afterPause(List<ByteString> chunks, Duration pause) {
    return Source.lazySource(() -> Source.from(chunks).initialDelay(pause))
        .mapMaterializedValue(started -> NotUsed.getInstance());
  }

  private static long msSince(long startNanos) {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }

  private static <T> T await(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static final ByteString POISON = ByteString.fromString("poison");

  /** Fails the stream where a connection reset would, after the bytes before it went through. */
  private static ByteString failOnPoison(ByteString chunk) {
    if (chunk == POISON) {
      throw new IllegalStateException("https://api.example?key=sk-secret");
    }
    return chunk;
  }

  /** One SSE event per chunk, so the client can stop between events. */
  private static List<ByteString> eventChunks(ByteString body) {
    return java.util.Arrays.stream(body.utf8String().split("(?<=\n\n)"))
        .map(ByteString::fromString)
        .toList();
  }

  @Test
  void aCompleteStreamReachesTheClientUnchangedAndSettlesItsUsage() throws Exception {
    MeteredStream metered =
        meter(Duration.ofSeconds(5))
            .meter(Source.from(Fixtures.chunks(ANTHROPIC, 17)), ApiKind.ANTHROPIC_MESSAGES);

    ByteString received =
        await(
            metered
                .toClient()
                .runFold(ByteString.emptyByteString(), ByteString::concat, testKit.system()));
    StreamOutcome outcome = await(metered.outcome());

    assertEquals(ANTHROPIC, received);
    assertEquals(Termination.COMPLETED, outcome.termination());
    assertTrue(outcome.usageSettled());
    assertEquals(30, outcome.usageDocument().orElseThrow().get("output_tokens").asLong());
    assertEquals(ANTHROPIC.size(), outcome.bytes());
    assertEquals(8, outcome.events());
    assertFalse(outcome.clientDisconnected());
  }

  @Test
  void anUpstreamFailureCutsTheClientAndKeepsTheWorstCase() throws Exception {
    ByteString firstPart = Fixtures.until(ANTHROPIC, "event: message_delta");
    Source<ByteString, ?> upstream =
        Source.from(Fixtures.chunks(firstPart, 50))
            .concat(Source.single(POISON))
            .map(StreamMeterTest::failOnPoison);
    MeteredStream metered =
        meter(Duration.ofSeconds(5)).meter(upstream, ApiKind.ANTHROPIC_MESSAGES);

    CompletionStage<List<ByteString>> client =
        metered.toClient().runWith(Sink.seq(), testKit.system());
    StreamOutcome outcome = await(metered.outcome());

    assertThrows(ExecutionException.class, () -> await(client));
    assertEquals(Termination.UPSTREAM_FAILED, outcome.termination());
    assertFalse(outcome.usageSettled());
    assertEquals(Optional.of("error:IllegalStateException"), outcome.errorClass());
    assertEquals(1, outcome.usageDocument().orElseThrow().get("output_tokens").asLong(), "partial");
  }

  @Test
  void anUpstreamThatEndsBeforeTheFinalEventIsCut() throws Exception {
    ByteString firstPart = Fixtures.until(ANTHROPIC, "event: message_stop");
    MeteredStream metered =
        meter(Duration.ofSeconds(5)).meter(Source.single(firstPart), ApiKind.ANTHROPIC_MESSAGES);

    await(metered.toClient().runWith(Sink.ignore(), testKit.system()));
    StreamOutcome outcome = await(metered.outcome());

    assertEquals(Termination.ENDED_EARLY, outcome.termination());
    assertFalse(outcome.usageSettled());
  }

  @Test
  void anAnthropicStreamWhoseMessageDeltaHasNoUsageEndsCleanlyButKeepsTheWorstCase()
      throws Exception {
    ByteString noFinalUsage =
        ByteString.fromString(
            ANTHROPIC.utf8String().replace(",\"usage\":{\"output_tokens\":30}}", "}"));
    MeteredStream metered =
        meter(Duration.ofSeconds(5))
            .meter(Source.from(Fixtures.chunks(noFinalUsage, 11)), ApiKind.ANTHROPIC_MESSAGES);

    await(metered.toClient().runWith(Sink.ignore(), testKit.system()));
    StreamOutcome outcome = await(metered.outcome());

    assertTrue(outcome.cleanEnd());
    assertTrue(outcome.usageDocument().isPresent(), "message_start's input counts are kept");
    assertFalse(outcome.usageFinal());
    assertFalse(outcome.usageSettled(), "1 output token is not a bill");
  }

  @Test
  void aClientLeavingEarlyStillGetsTheRealUsageDrained() throws Exception {
    Source<ByteString, ?> upstream =
        Source.from(eventChunks(ANTHROPIC)).throttle(1, Duration.ofMillis(20));
    MeteredStream metered =
        meter(Duration.ofSeconds(5)).meter(upstream, ApiKind.ANTHROPIC_MESSAGES);

    List<ByteString> seen = await(metered.toClient().take(2).runWith(Sink.seq(), testKit.system()));
    StreamOutcome outcome = await(metered.outcome());

    assertEquals(2, seen.size());
    assertTrue(outcome.clientDisconnected());
    assertEquals(Termination.COMPLETED, outcome.termination());
    assertEquals(30, outcome.usageDocument().orElseThrow().get("output_tokens").asLong());
    assertEquals(ANTHROPIC.size(), outcome.bytes());
  }

  @Test
  void aStreamTheEdgeNeverSendsIsStillDrainedWhenCancelled() throws Exception {
    MeteredStream metered =
        meter(Duration.ofSeconds(5))
            .meter(
                Source.from(eventChunks(Fixtures.bytes(Fixtures.OPENAI_CHAT))),
                ApiKind.OPENAI_CHAT_COMPLETIONS);

    metered.toClient().runWith(Sink.cancelled(), testKit.system());
    StreamOutcome outcome = await(metered.outcome());

    assertTrue(outcome.usageSettled());
    assertEquals(23, outcome.usageDocument().orElseThrow().get("total_tokens").asLong());
  }

  @Test
  void drainingAnAbandonedStreamStopsAtTheDrainTimeout() throws Exception {
    List<ByteString> events = eventChunks(ANTHROPIC);
    Source<ByteString, ?> upstream = Source.from(events.subList(0, 3)).concat(Source.never());
    MeteredStream metered =
        meter(Duration.ofMillis(300)).meter(upstream, ApiKind.ANTHROPIC_MESSAGES);

    long start = System.nanoTime();
    await(metered.toClient().take(1).runWith(Sink.seq(), testKit.system()));
    StreamOutcome outcome = await(metered.outcome());
    long tookMs = (System.nanoTime() - start) / 1_000_000;

    assertEquals(Termination.DRAIN_TIMEOUT, outcome.termination());
    assertTrue(outcome.clientDisconnected());
    assertEquals(Optional.of("drain_timeout"), outcome.errorClass());
    assertTrue(outcome.usageDocument().isPresent(), "partial usage from message_start");
    assertTrue(tookMs >= 250 && tookMs < 5_000, "took " + tookMs + " ms");
  }

  @Test
  void aSlowClientSlowsTheUpstreamReadInsteadOfBuffering() throws Exception {
    AtomicInteger pulled = new AtomicInteger();
    ByteString event = ByteString.fromString("event: ping\ndata: {\"type\":\"ping\"}\n\n");
    Iterator<ByteString> endless =
        new Iterator<>() {
          @Override
          public boolean hasNext() {
            return true;
          }

          @Override
          public ByteString next() {
            pulled.incrementAndGet();
            return event;
          }
        };
    MeteredStream metered =
        meter(Duration.ofMillis(200))
            .meter(Source.fromIterator(() -> endless), ApiKind.ANTHROPIC_MESSAGES);
    SinkQueueWithCancel<ByteString> client =
        metered.toClient().runWith(Sink.queue(), testKit.system());

    for (int i = 0; i < 5; i++) {
      assertEquals(event, await(client.pull()).orElseThrow());
    }
    // Back-pressure is a non-event (no reading while the client waits): watched over a window.
    Thread.sleep(300);
    int afterPause = pulled.get();
    assertTrue(afterPause < 64, "upstream read ahead " + afterPause + " chunks for 5 consumed");
    Thread.sleep(200);
    assertEquals(afterPause, pulled.get(), "no reading while the client waits");

    client.cancel();
    StreamOutcome outcome = await(metered.outcome());
    assertEquals(Termination.DRAIN_TIMEOUT, outcome.termination());
  }

  // --- the meter runs whatever the client does ------------------------------------------------

  @Test
  void aClientThatNeverSubscribesStillHasItsStreamCounted() throws Exception {
    long start = System.nanoTime();
    MeteredStream metered =
        meter(Duration.ofSeconds(5), Duration.ofMillis(200))
            .meter(Source.from(eventChunks(ANTHROPIC)), ApiKind.ANTHROPIC_MESSAGES);

    StreamOutcome outcome = await(metered.outcome());
    long tookMs = msSince(start);

    assertEquals(Termination.COMPLETED, outcome.termination());
    assertTrue(outcome.clientDisconnected(), "a client that never came counts as gone");
    assertTrue(outcome.usageSettled());
    assertEquals(30, outcome.usageDocument().orElseThrow().get("output_tokens").asLong());
    assertEquals(ANTHROPIC.size(), outcome.bytes());
    assertTrue(tookMs >= 150 && tookMs < 5_000, "took " + tookMs + " ms");
    ExecutionException late =
        assertThrows(
            ExecutionException.class,
            () -> await(metered.toClient().runWith(Sink.seq(), testKit.system())));
    assertInstanceOf(ClientHandoff.ClientGone.class, late.getCause());
  }

  @Test
  void aNeverSubscribedStreamOfAHangingProviderEndsAfterTheSubscribeTimeoutPlusTheDrain()
      throws Exception {
    Source<ByteString, ?> hanging =
        Source.from(eventChunks(ANTHROPIC).subList(0, 3)).concat(Source.never());
    long start = System.nanoTime();
    MeteredStream metered =
        meter(Duration.ofMillis(300), Duration.ofMillis(200))
            .meter(hanging, ApiKind.ANTHROPIC_MESSAGES);

    StreamOutcome outcome = await(metered.outcome());
    long tookMs = msSince(start);

    assertEquals(Termination.DRAIN_TIMEOUT, outcome.termination());
    assertTrue(outcome.clientDisconnected());
    assertFalse(outcome.usageSettled());
    assertTrue(tookMs >= 500 && tookMs < 5_000, "took " + tookMs + " ms");
  }

  @Test
  void theStreamGoesToOneClientOnly() throws Exception {
    MeteredStream metered =
        meter(Duration.ofSeconds(5))
            .meter(Source.from(eventChunks(ANTHROPIC)), ApiKind.ANTHROPIC_MESSAGES);

    // Two readers materialized at once: which one claims the reader slot first is up to the
    // scheduler, so the test asks only that exactly one gets the whole stream and the other is
    // refused.
    List<CompletableFuture<ByteString>> readers =
        List.of(
            metered
                .toClient()
                .runFold(ByteString.emptyByteString(), ByteString::concat, testKit.system())
                .toCompletableFuture(),
            metered
                .toClient()
                .runFold(ByteString.emptyByteString(), ByteString::concat, testKit.system())
                .toCompletableFuture());

    int whole = 0;
    int refused = 0;
    for (CompletableFuture<ByteString> reader : readers) {
      try {
        assertEquals(ANTHROPIC, await(reader));
        whole++;
      } catch (ExecutionException e) {
        assertInstanceOf(ClientHandoff.ClientGone.class, e.getCause());
        refused++;
      }
    }
    assertEquals(1, whole, "readers that got the whole stream");
    assertEquals(1, refused, "readers refused");
    assertTrue(await(metered.outcome()).usageSettled());
  }

  @Test
  void aClientSubscribingAfterPekkosOwnSubscriptionTimeoutStillGetsEverything() throws Exception {
    // Pekko's stream subscription timeout, scaled down: it must not cancel the meter on its own.
    ActorTestKit impatient =
        ActorTestKit.create(
            ConfigFactory.parseString(
                "pekko.stream.materializer.subscription-timeout.timeout = 100ms"));
    try {
      StreamMeter meter =
          StreamMeter.create(
              impatient.system(), LIMITS, Duration.ofSeconds(5), Duration.ofSeconds(3));
      MeteredStream metered =
          meter.meter(Source.from(eventChunks(ANTHROPIC)), ApiKind.ANTHROPIC_MESSAGES);

      Thread.sleep(500); // the test's pace: the client subscribes after the 100 ms timeout is past
      ByteString received =
          await(
              metered
                  .toClient()
                  .runFold(ByteString.emptyByteString(), ByteString::concat, impatient.system()));
      StreamOutcome outcome = await(metered.outcome());

      assertEquals(ANTHROPIC, received);
      assertFalse(outcome.clientDisconnected());
      assertTrue(outcome.usageSettled());
    } finally {
      impatient.shutdownTestKit();
    }
  }

  @Test
  void aProviderPausingLongerThanEveryTimeoutIsNotCutWhileTheClientReads() throws Exception {
    List<ByteString> events = eventChunks(ANTHROPIC);
    Duration pause = Duration.ofMillis(800);
    Source<ByteString, ?> pausing =
        Source.from(events.subList(0, 3))
            .concatLazy(afterPause(events.subList(3, 5), pause))
            .concatLazy(afterPause(events.subList(5, events.size()), pause));
    MeteredStream metered =
        meter(Duration.ofMillis(200), Duration.ofMillis(200))
            .meter(pausing, ApiKind.ANTHROPIC_MESSAGES);

    long start = System.nanoTime();
    ByteString received =
        await(
            metered
                .toClient()
                .runFold(ByteString.emptyByteString(), ByteString::concat, testKit.system()));
    StreamOutcome outcome = await(metered.outcome());

    assertTrue(msSince(start) >= 2 * pause.toMillis(), "both pauses happened");
    assertEquals(ANTHROPIC, received);
    assertEquals(Termination.COMPLETED, outcome.termination());
    assertFalse(outcome.clientDisconnected());
    assertTrue(outcome.usageSettled());
  }

  @Test
  void aClientLeavingDuringAPauseGetsTheRestDrainedAndCounted() throws Exception {
    List<ByteString> events = eventChunks(ANTHROPIC);
    Source<ByteString, ?> pausing =
        Source.from(events.subList(0, 2))
            .concatLazy(afterPause(events.subList(2, events.size()), Duration.ofMillis(400)));
    MeteredStream metered =
        meter(Duration.ofSeconds(5), Duration.ofMillis(200))
            .meter(pausing, ApiKind.ANTHROPIC_MESSAGES);

    SinkQueueWithCancel<ByteString> client =
        metered.toClient().runWith(Sink.queue(), testKit.system());
    assertEquals(events.get(0), await(client.pull()).orElseThrow());
    client.cancel();
    StreamOutcome outcome = await(metered.outcome());

    assertEquals(Termination.COMPLETED, outcome.termination());
    assertTrue(outcome.clientDisconnected());
    assertTrue(outcome.usageSettled());
    assertEquals(30, outcome.usageDocument().orElseThrow().get("output_tokens").asLong());
    assertEquals(ANTHROPIC.size(), outcome.bytes());
  }

  @Test
  void theOutcomeWaitsForTheClientToGetTheRestTheHandoffReadAhead() throws Exception {
    // A short answer fits in the handoff's buffer: the upstream ends while the client has read one
    // chunk.
    MeteredStream metered =
        meter(Duration.ofSeconds(5))
            .meter(Source.from(eventChunks(ANTHROPIC)), ApiKind.ANTHROPIC_MESSAGES);
    SinkQueueWithCancel<ByteString> client =
        metered
            .toClient()
            .runWith(
                Sink.<ByteString>queue().withAttributes(Attributes.inputBuffer(1, 1)),
                testKit.system());
    ByteString received = await(client.pull()).orElseThrow();
    // A second reader is refused, and its refusal is not the client's end either.
    assertThrows(
        ExecutionException.class,
        () -> await(metered.toClient().runWith(Sink.ignore(), testKit.system())));

    // A settle before the client has read the rest would be an event that must not happen: the
    // upstream has ended, so it would come at once; 300 ms gives it every chance to show.
    Thread.sleep(300);
    assertFalse(
        metered.outcome().toCompletableFuture().isDone(),
        "settled before the client had the answer");
    for (Optional<ByteString> next = await(client.pull());
        next.isPresent();
        next = await(client.pull())) {
      received = received.concat(next.get());
    }
    StreamOutcome outcome = await(metered.outcome());

    assertEquals(ANTHROPIC, received);
    assertFalse(outcome.clientDisconnected());
    assertTrue(outcome.usageSettled());
  }
}
