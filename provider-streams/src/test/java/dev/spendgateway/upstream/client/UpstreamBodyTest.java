package dev.spendgateway.upstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.RequestEntity;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A body in memory goes upstream with its length, and the request entity gives its bytes away when
 * the connection takes them: Pekko's pool keeps the sent request until the answer's last byte, so
 * an open stream must not keep its prompt through it.
 */
class UpstreamBodyTest {
  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final Materializer MAT = Materializer.matFromSystem(testKit.system());

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @Test
  void a_body_in_memory_is_sent_with_its_length_and_not_kept_by_the_entity() throws Exception {
    ByteString prompt = ByteString.fromString("{\"messages\":[\"" + "x".repeat(32 * 1024) + "\"]}");
    RequestEntity entity =
        UpstreamBody.toEntity(new UpstreamBody.Strict(ContentTypes.APPLICATION_JSON, prompt));

    assertEquals(prompt.size(), entity.getContentLengthOption().getAsLong(), "with its length");
    assertEquals(prompt, read(entity), "the connection gets the whole body");
    assertTrue(read(entity).isEmpty(), "once taken, the entity holds no copy of it");
  }

  @Test
  void an_empty_body_stays_a_plain_empty_entity() throws Exception {
    RequestEntity entity =
        UpstreamBody.toEntity(
            new UpstreamBody.Strict(ContentTypes.APPLICATION_JSON, ByteString.emptyByteString()));
    assertEquals(0, entity.getContentLengthOption().getAsLong());
    assertTrue(entity.isStrict());
  }

  private static ByteString read(RequestEntity entity) throws Exception {
    return entity
        .getDataBytes()
        .runFold(ByteString.emptyByteString(), ByteString::concat, MAT)
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
  }
}
