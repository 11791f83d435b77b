package dev.spendgateway.upstream.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.upstream.Fixtures;
import dev.spendgateway.upstream.sse.SseLimits;
import dev.spendgateway.upstream.usage.ApiKind;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every way a streamed answer can end, through the tap alone: the client gets the upstream's chunks
 * unchanged, and the outcome is closed once, by the first ending, with the usage or marked as cut.
 * Times are scaled down (a drain timeout of 300 ms stands for the production 30 s).
 */
class UsageTapTest {

  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final SseLimits LIMITS = new SseLimits(1 << 20, 1 << 20);
  private static final Duration LONG_DRAIN = Duration.ofSeconds(5);
  private static final Duration SHORT_DRAIN = Duration.ofMillis(300);

  private static final List<ByteString> ANTHROPIC = eventChunks(Fixtures.bytes(Fixtures.ANTHROPIC));
  private static final List<ByteString> ANTHROPIC_BEFORE_STOP =
      eventChunks(Fixtures.until(Fixtures.bytes(Fixtures.ANTHROPIC), "event: message_stop"));
  private static final List<ByteString> OPENAI_CHAT =
      eventChunks(Fixtures.bytes(Fixtures.OPENAI_CHAT));
  private static final List<ByteString> OPENAI_CHAT_NO_USAGE =
      OPENAI_CHAT.stream().filter(e -> !e.utf8String().contains("\"choices\":[]")).toList();

  @AfterAll
  static void cleanup() {
    testKit.shutdownTestKit();
  }

  /** How the upstream goes on after its chunks. */
  enum Tail {
    /** completes normally */
    ENDS,
    /** fails, as a connection reset would */
    FAILS,
    /** never sends anything again (a provider that hangs) */
    HANGS
  }

  /** What the client does with its side. */
  enum Client {
    /** reads to the end */
    READS_ALL,
    /** reads the first chunk, then hangs up */
    LEAVES_AFTER_ONE,
    /** is reading when the gateway's stream materializer shuts down */
    SHUT_DOWN_WHILE_READING
  }

  /**
   * One ending per row, readable as: "<ending>: an upstream of <chunks> that then <tail>, read by a
   * client that <client>, ends as <termination>".
   */
  static Stream<Arguments> endings() {
    return Stream.of(
        row(
            "upstream completes with usage",
            ANTHROPIC,
            Tail.ENDS,
            ApiKind.ANTHROPIC_MESSAGES,
            Client.READS_ALL,
            LONG_DRAIN,
            Termination.COMPLETED,
            false,
            true,
            null),
        row(
            "upstream completes without usage",
            OPENAI_CHAT_NO_USAGE,
            Tail.ENDS,
            ApiKind.OPENAI_CHAT_COMPLETIONS,
            Client.READS_ALL,
            LONG_DRAIN,
            Termination.COMPLETED,
            false,
            false,
            null),
        row(
            "upstream completes before the end-of-answer event",
            ANTHROPIC_BEFORE_STOP,
            Tail.ENDS,
            ApiKind.ANTHROPIC_MESSAGES,
            Client.READS_ALL,
            LONG_DRAIN,
            Termination.ENDED_EARLY,
            false,
            false,
            null),
        row(
            "upstream is cut",
            ANTHROPIC_BEFORE_STOP,
            Tail.FAILS,
            ApiKind.ANTHROPIC_MESSAGES,
            Client.READS_ALL,
            LONG_DRAIN,
            Termination.UPSTREAM_FAILED,
            false,
            false,
            "error:IllegalStateException"),
        row(
            "client leaves, drain reaches the end",
            OPENAI_CHAT,
            Tail.ENDS,
            ApiKind.OPENAI_CHAT_COMPLETIONS,
            Client.LEAVES_AFTER_ONE,
            LONG_DRAIN,
            Termination.COMPLETED,
            true,
            true,
            null),
        row(
            "client leaves, upstream is cut while draining",
            ANTHROPIC_BEFORE_STOP,
            Tail.FAILS,
            ApiKind.ANTHROPIC_MESSAGES,
            Client.LEAVES_AFTER_ONE,
            LONG_DRAIN,
            Termination.UPSTREAM_FAILED,
            true,
            false,
            "error:IllegalStateException"),
        row(
            "client leaves, drain times out",
            ANTHROPIC_BEFORE_STOP,
            Tail.HANGS,
            ApiKind.ANTHROPIC_MESSAGES,
            Client.LEAVES_AFTER_ONE,
            SHORT_DRAIN,
            Termination.DRAIN_TIMEOUT,
            true,
            false,
            UsageTap.DRAIN_TIMEOUT),
        row(
            "stream materializer shuts down",
            ANTHROPIC_BEFORE_STOP,
            Tail.HANGS,
            ApiKind.ANTHROPIC_MESSAGES,
            Client.SHUT_DOWN_WHILE_READING,
            LONG_DRAIN,
            Termination.STOPPED,
            false,
            false,
            UsageTap.STOPPED));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("endings")
  void everyEndingClosesTheOutcomeOnce(
      String ending,
      List<ByteString> chunks,
      Tail tail,
      ApiKind kind,
      Client client,
      Duration drain,
      Termination termination,
      boolean clientLeft,
      boolean usageSettled,
      String errorClass)
      throws Exception {
    Materializer mat = Materializer.createMaterializer(testKit.system());
    CompletableFuture<ByteString> firstChunkSeen = new CompletableFuture<>();
    long start = System.nanoTime();

    Pair<CompletionStage<StreamOutcome>, CompletionStage<List<ByteString>>> run =
        upstream(chunks, tail)
            .viaMat(UsageTap.flow(LIMITS, kind.extractor(), drain), Keep.right())
            .map(
                chunk -> {
                  firstChunkSeen.complete(chunk);
                  return chunk;
                })
            .via(reading(client))
            .toMat(Sink.seq(), Keep.both())
            .run(mat);
    if (client == Client.SHUT_DOWN_WHILE_READING) {
      await(firstChunkSeen);
      mat.shutdown();
    }
    StreamOutcome outcome = await(run.first());
    long tookMs = (System.nanoTime() - start) / 1_000_000;

    assertEquals(termination, outcome.termination(), ending);
    assertEquals(clientLeft, outcome.clientDisconnected(), "client left");
    assertEquals(usageSettled, outcome.usageSettled(), "usage settled");
    assertEquals(Optional.ofNullable(errorClass), outcome.errorClass());
    if (kind == ApiKind.OPENAI_CHAT_COMPLETIONS) {
      assertEquals(
          usageSettled,
          outcome.usageDocument().isPresent(),
          "a chat stream's usage comes from its usage chunk only");
    }
    assertClientGotTheChunksUnchanged(chunks, tail, client, run.second());
    if (termination == Termination.DRAIN_TIMEOUT) {
      assertTrue(
          tookMs >= drain.toMillis() && tookMs < drain.toMillis() + 4_000,
          "took " + tookMs + " ms");
    } else {
      assertTrue(tookMs < 4_000, "took " + tookMs + " ms");
    }
    // The stage has stopped by now (postStop ran after the ending above): it changed nothing.
    await(run.second().handle((chunksSeen, error) -> null));
    assertSame(outcome, await(run.first()));
    mat.shutdown();
  }

  private static void assertClientGotTheChunksUnchanged(
      List<ByteString> chunks, Tail tail, Client client, CompletionStage<List<ByteString>> seen)
      throws Exception {
    switch (client) {
      case READS_ALL -> {
        if (tail == Tail.FAILS) {
          assertThrows(
              ExecutionException.class, () -> await(seen), "a cut upstream cuts the client");
        } else {
          assertEquals(chunks, await(seen), "same chunks, same bytes");
        }
      }
      case LEAVES_AFTER_ONE -> assertEquals(chunks.subList(0, 1), await(seen));
      case SHUT_DOWN_WHILE_READING ->
          assertThrows(
              ExecutionException.class, () -> await(seen), "the client's stream is torn down too");
    }
  }

  @ParameterizedTest(name = "{0}-byte frames")
  @ValueSource(ints = {1, 7, 100_000})
  void countsTheSameWhateverTheFraming(int frame) throws Exception {
    ByteString body = Fixtures.bytes(Fixtures.ANTHROPIC);

    Pair<CompletionStage<StreamOutcome>, CompletionStage<ByteString>> run =
        Source.from(Fixtures.chunks(body, frame))
            .viaMat(
                UsageTap.flow(LIMITS, ApiKind.ANTHROPIC_MESSAGES.extractor(), LONG_DRAIN),
                Keep.right())
            .toMat(Sink.fold(ByteString.emptyByteString(), ByteString::concat), Keep.both())
            .run(testKit.system());
    StreamOutcome outcome = await(run.first());

    assertEquals(body, await(run.second()));
    assertTrue(outcome.usageSettled());
    assertEquals(30, outcome.usageDocument().orElseThrow().get("output_tokens").asLong());
    assertEquals(body.size(), outcome.bytes());
    assertEquals(8, outcome.events());
  }

  // --- helpers ---------------------------------------------------------------------------------

  private static Arguments row(
      String ending,
      List<ByteString> chunks,
      Tail tail,
      ApiKind kind,
      Client client,
      Duration drain,
      Termination termination,
      boolean clientLeft,
      boolean usageSettled,
      String errorClass) {
    return Arguments.of(
        ending,
        chunks,
        tail,
        kind,
        client,
        drain,
        termination,
        clientLeft,
        usageSettled,
        errorClass);
  }

  /**
   * The chunks at a provider's pace (a few ms apart, so a client that leaves after the first one
   * leaves mid-stream), then the tail.
   */
  private static Source<ByteString, NotUsed> upstream(List<ByteString> chunks, Tail tail) {
    Source<ByteString, NotUsed> paced = Source.from(chunks).throttle(1, Duration.ofMillis(10));
    return switch (tail) {
      case ENDS -> paced;
      // A failing source behind concat would fail the stream at once; a poison chunk fails it in
      // turn.
      case FAILS -> paced.concat(Source.single(POISON)).map(UsageTapTest::failOnPoison);
      case HANGS -> paced.concat(Source.never());
    };
  }

  private static final ByteString POISON = ByteString.fromString("poison");

  /** Fails where a connection reset would, with a message the outcome must not repeat. */
  private static ByteString failOnPoison(ByteString chunk) {
    if (chunk == POISON) {
      throw new IllegalStateException("https://api.example?key=sk-secret");
    }
    return chunk;
  }

  private static Flow<ByteString, ByteString, NotUsed> reading(Client client) {
    return client == Client.LEAVES_AFTER_ONE
        ? Flow.of(ByteString.class).take(1)
        : Flow.of(ByteString.class);
  }

  /** One SSE event per chunk. */
  private static List<ByteString> eventChunks(ByteString body) {
    return Arrays.stream(body.utf8String().split("(?<=\n\n)")).map(ByteString::fromString).toList();
  }

  private static <T> T await(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }
}
