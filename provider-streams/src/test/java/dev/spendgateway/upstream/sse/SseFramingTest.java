package dev.spendgateway.upstream.sse;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.spendgateway.upstream.Fixtures;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

class SseFramingTest {

  private static final ActorTestKit testKit = ActorTestKit.create();

  @AfterAll
  static void cleanup() {
    testKit.shutdownTestKit();
  }

  @Test
  void theFlowDecodesAChunkedStreamAndFlushesTheLastEventAtTheEnd() throws Exception {
    ByteString body = Fixtures.bytes(Fixtures.OPENAI_CHAT);
    String withoutFinalBlankLine = body.utf8String().stripTrailing() + "\n";
    List<SseEvent> events =
        Source.from(Fixtures.chunks(ByteString.fromString(withoutFinalBlankLine), 13))
            .via(SseFraming.events(new SseLimits(1 << 16, 1 << 16)))
            .runWith(Sink.seq(), testKit.system())
            .toCompletableFuture()
            .get(5, java.util.concurrent.TimeUnit.SECONDS);
    assertEquals(6, events.size());
    assertEquals(SseEvent.data("[DONE]"), events.get(5));
  }
}
