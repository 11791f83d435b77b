package dev.spendgateway.upstream.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.upstream.Fixtures;
import dev.spendgateway.upstream.sse.SseLimits;
import dev.spendgateway.upstream.usage.ApiKind;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The client's side of a chat stream loses the usage-only chunk unless the caller asked for it. */
class UsageChunkFilterTest {
  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final SseLimits LIMITS = new SseLimits(1 << 20, 1 << 20);
  private static final ByteString WITH_USAGE = Fixtures.bytes(Fixtures.OPENAI_CHAT);
  private static final String USAGE_PREFIX =
      "data: {\"id\":\"chatcmpl-123\",\"object\":\"chat.completion.chunk\",\"created\":1723323084,\"model\":\"gpt-6.1-sol\",\"system_fingerprint\":\"fp_1\",\"choices\":[],";

  @AfterAll
  static void cleanup() {
    testKit.shutdownTestKit();
  }

  private static <T> T await(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  /** The fixture with its usage-only event (and the blank line ending it) cut out. */
  private static String withoutUsageEvent(String body, String lineEnd) {
    int start = body.indexOf(USAGE_PREFIX);
    int end = body.indexOf(lineEnd + lineEnd, start) + 2 * lineEnd.length();
    return body.substring(0, start) + body.substring(end);
  }

  private static ByteString run(
      Flow<ByteString, ByteString, NotUsed> flow, ByteString body, int frame) throws Exception {
    return await(
        Source.from(Fixtures.chunks(body, frame))
            .via(flow)
            .runFold(ByteString.emptyByteString(), ByteString::concat, testKit.system()));
  }

  @ParameterizedTest(name = "asked={0}, usage chunk sent={1}, {2}-byte frames, {3} line ends")
  @CsvSource({
    // asked, usage present, frame bytes, line ends → the caller gets
    "true,  true,  100000, LF", // asked and sent: everything, usage chunk included
    "true,  true,  1,      CRLF",
    "true,  false, 7,      LF", // asked but the provider sent none: nothing added
    "false, true,  100000, LF", // not asked: the usage chunk goes, the rest is byte-identical
    "false, true,  1,      LF", // ... even when every event arrives a byte at a time
    "false, true,  7,      LF",
    "false, true,  64,     CRLF",
    "false, true,  1,      CRLF", // a CRLF split between frames stays one line end
    "false, true,  3,      CR",
    "false, false, 100000, LF", // not asked and none sent: unchanged
    "false, false, 5,      CRLF",
  })
  void forwardsTheUsageChunkOnlyToCallersWhoAskedForIt(
      boolean asked, boolean usagePresent, int frame, String lineEnds) throws Exception {
    String lineEnd =
        switch (lineEnds) {
          case "CRLF" -> "\r\n";
          case "CR" -> "\r";
          default -> "\n";
        };
    String upstream = WITH_USAGE.utf8String().replace("\n", lineEnd);
    if (!usagePresent) {
      upstream = withoutUsageEvent(upstream, lineEnd);
    }
    String expected = asked || !usagePresent ? upstream : withoutUsageEvent(upstream, lineEnd);

    ByteString got =
        run(UsageChunkFilter.forCaller(asked, LIMITS), ByteString.fromString(upstream), frame);

    assertEquals(expected, got.utf8String());
    assertEquals(asked && usagePresent, got.utf8String().contains("\"choices\":[]"));
    assertTrue(got.utf8String().endsWith("data: [DONE]" + lineEnd + lineEnd));
  }

  @Test
  void theMeterStillSettlesOnTheUsageTheCallerDoesNotSee() throws Exception {
    StreamMeter meter = StreamMeter.create(testKit.system(), LIMITS, Duration.ofSeconds(5));
    MeteredStream metered =
        meter.meter(Source.from(Fixtures.chunks(WITH_USAGE, 13)), ApiKind.OPENAI_CHAT_COMPLETIONS);

    ByteString got =
        await(
            metered
                .toClient()
                .via(UsageChunkFilter.forCaller(false, LIMITS))
                .runFold(ByteString.emptyByteString(), ByteString::concat, testKit.system()));
    StreamOutcome outcome = await(metered.outcome());

    assertFalse(got.utf8String().contains("\"choices\":[]"));
    assertTrue(outcome.usageSettled());
    assertEquals(23, outcome.usageDocument().orElseThrow().get("total_tokens").asLong());
  }

  @Test
  void eachStreamGetsItsOwnParser() throws Exception {
    Flow<ByteString, ByteString, NotUsed> shared = UsageChunkFilter.flow(LIMITS);
    // The first stream ends inside an event; none of it may leak into the second.
    ByteString first = run(shared, ByteString.fromString("data: {\"choices\":[{\"index\":0"), 4);
    ByteString second = run(shared, WITH_USAGE, 9);

    assertEquals("data: {\"choices\":[{\"index\":0", first.utf8String());
    assertEquals(withoutUsageEvent(WITH_USAGE.utf8String(), "\n"), second.utf8String());
  }

  @Test
  void anEventLargerThanTheBoundPassesThroughAsItArrives() throws Exception {
    String big = "data: {\"choices\":[{\"delta\":{\"content\":\"" + "x".repeat(300) + "\"}}]}\n\n";
    String body = big + "data: {\"choices\":[],\"usage\":{\"total_tokens\":3}}\n\ndata: [DONE]\n\n";

    ByteString got =
        run(UsageChunkFilter.flow(new SseLimits(1 << 20, 100)), ByteString.fromString(body), 16);

    assertEquals(big + "data: [DONE]\n\n", got.utf8String());
  }

  @ParameterizedTest(name = "{0} → {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "data: {\"choices\":[],\"usage\":{\"total_tokens\":3}}                           | true",
        "data:{\"choices\":[],\"usage\":{\"total_tokens\":3}}                            | true",
        "data: {\"choices\":[{\"index\":0}],\"usage\":null}                             | false",
        "data: {\"choices\":[{\"index\":0}],\"usage\":{\"total_tokens\":3}}             | false",
        "data: {\"choices\":[],\"usage\":null}                                           | false",
        "data: [DONE]                                                                   | false",
        "data: {\"error\":{\"message\":\"usage\"}}                                      | false",
        "data: {\"choices\":[],\"usage\":{\"total_tokens\"                              | false",
      })
  void recognisesOnlyTheUsageOnlyChunk(String event, boolean usageOnly) {
    assertEquals(
        usageOnly,
        UsageChunkFilter.isUsageOnlyChunk(ByteString.fromString(event.strip() + "\n\n")));
  }

  @ParameterizedTest(name = "{0} → {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "{\"stream\":true,\"stream_options\":{\"include_usage\":true}}  | true",
        "{\"stream\":true,\"stream_options\":{\"include_usage\":false}} | false",
        "{\"stream\":true,\"stream_options\":{}}                        | false",
        "{\"stream\":true}                                              | false",
        "{\"stream\":true,\"stream_options\":{\"include_usage\":\"true\"}} | false",
      })
  void readsWhetherTheCallerAsked(String request, boolean asked) throws Exception {
    assertEquals(asked, UsageChunkFilter.callerAskedForUsage(new ObjectMapper().readTree(request)));
  }
}
