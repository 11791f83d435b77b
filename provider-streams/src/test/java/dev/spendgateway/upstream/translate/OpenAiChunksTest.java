package dev.spendgateway.upstream.translate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.upstream.sse.SseLimits;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The OpenAI side of a routed stream, replayed through the flow: the profile name, the end, the
 * cut.
 */
class OpenAiChunksTest {
  private static final SseLimits LIMITS = new SseLimits(1 << 20, 1 << 20);
  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = ActorTestKit.create();
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  private static String run(Source<ByteString, ?> upstream, boolean usageChunk) throws Exception {
    List<ByteString> out =
        upstream
            .via(OpenAiChunks.flow("fast-summary", LIMITS, usageChunk))
            .runWith(Sink.seq(), testKit.system())
            .toCompletableFuture()
            .get(5, TimeUnit.SECONDS);
    return out.stream().map(ByteString::utf8String).reduce("", String::concat);
  }

  private static final String CHUNK =
      "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n";
  private static final String USAGE =
      "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"model\":\"gpt-4o-mini\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":4}}\n\n";
  private static final String DONE = "data: [DONE]\n\n";

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      a whole stream is passed on with the profile name and ends at [DONE]                  | true  | false | true  | false
      a stream that ends before [DONE] gets one upstream_cut error event and no [DONE]       | false | false | false | true
      the usage-only chunk reaches a caller that asked for it                                 | true  | true  | true  | false
      """)
  void reframes(
      String sentence, boolean whole, boolean usageChunk, boolean endsWithDone, boolean cut)
      throws Exception {
    String upstream = CHUNK + USAGE + (whole ? DONE : "");
    String out = run(Source.single(ByteString.fromString(upstream)), usageChunk);
    assertTrue(out.contains("\"model\":\"fast-summary\""), sentence + ": " + out);
    assertTrue(
        !out.contains("gpt-4o-mini"), sentence + ": the provider's model never shows: " + out);
    assertEquals(endsWithDone, out.endsWith(DONE), sentence + ": " + out);
    assertEquals(cut, out.contains("\"type\":\"upstream_cut\""), sentence + ": " + out);
    assertEquals(usageChunk, out.contains("\"prompt_tokens\""), sentence + ": " + out);
  }

  @org.junit.jupiter.api.Test
  void aFailedUpstreamEndsTheStreamWithOneErrorEvent() throws Exception {
    // The failure comes after the first chunk went through, as a connection reset would.
    Source<ByteString, ?> failing =
        Source.from(List.of(CHUNK, "reset"))
            .map(
                s -> {
                  if (s.equals("reset")) {
                    throw new IllegalStateException("connection reset");
                  }
                  return ByteString.fromString(s);
                });
    String out = run(failing, false);
    assertTrue(out.contains("\"model\":\"fast-summary\""), out);
    assertEquals(1, out.split("upstream_cut", -1).length - 1, out);
    assertTrue(!out.contains("[DONE]"), out);
  }
}
