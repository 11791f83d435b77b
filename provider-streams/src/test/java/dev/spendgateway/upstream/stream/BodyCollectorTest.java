package dev.spendgateway.upstream.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

class BodyCollectorTest {

  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final Materializer MAT = Materializer.matFromSystem(testKit.system());

  @AfterAll
  static void cleanup() {
    testKit.shutdownTestKit();
  }

  private static CollectedBody collect(Source<ByteString, ?> body, long max) throws Exception {
    return BodyCollector.collect(body, max, MAT).toCompletableFuture().get(5, TimeUnit.SECONDS);
  }

  @Test
  void aBodyWithinTheBoundIsCollectedAndParsedOnDemand() throws Exception {
    Source<ByteString, ?> body =
        Source.from(
            java.util.List.of(
                ByteString.fromString("{\"usage\":"), ByteString.fromString("{\"a\":1}}")));
    CollectedBody.Complete complete = (CollectedBody.Complete) collect(body, 1024);
    assertEquals(1, complete.json().orElseThrow().get("usage").get("a").asInt());
  }

  @Test
  void aBodyThatIsNotJsonIsCompleteButHasNoJson() throws Exception {
    CollectedBody.Complete complete =
        (CollectedBody.Complete) collect(Source.single(ByteString.fromString("<html>")), 1024);
    assertTrue(complete.json().isEmpty());
  }

  @Test
  void aBodyOverTheBoundIsRefusedNotBuffered() throws Exception {
    Source<ByteString, ?> endless = Source.repeat(ByteString.fromString("x".repeat(100)));
    assertEquals(new CollectedBody.TooLarge(1000), collect(endless, 1000));
  }

  @Test
  void aCutBodyIsFailedWithASafeClass() throws Exception {
    Source<ByteString, ?> cut =
        Source.single(ByteString.fromString("{"))
            .concat(Source.failed(new java.io.IOException("secret")));
    assertEquals(new CollectedBody.Failed("error:IOException"), collect(cut, 1000));
  }
}
