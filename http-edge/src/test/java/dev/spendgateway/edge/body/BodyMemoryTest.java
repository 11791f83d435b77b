package dev.spendgateway.edge.body;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.RequestEntity;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The node's bound on caller bodies held at once: what a body counts, and when it is refused. */
class BodyMemoryTest {

  @ParameterizedTest(name = "limit {0}, {1} held, take {2}: {3}")
  @CsvSource({
    // limit, held, take, taken
    "100,     0,    60,   true",
    "100,     60,   40,   true",
    "100,     60,   41,   false",
    "100,     0,    500,  true", // nothing held: one body always goes, however large
    "100,     1,    500,  false",
    "100,     60,   0,    true",
  })
  void aBodyIsTakenWhileTheTotalStaysWithinTheLimit(
      long limit, long held, long take, boolean taken) {
    BodyMemory memory = new BodyMemory(limit);
    if (held > 0) {
      assertTrue(memory.take(held).isPresent());
    }

    Optional<BodyMemory.Lease> lease = memory.take(take);

    assertEquals(taken, lease.isPresent());
    assertEquals(taken ? held + take : held, memory.heldBytes());
  }

  @Test
  void aLeaseIsGivenBackOnceHoweverOftenItIsReleased() {
    BodyMemory memory = new BodyMemory(100);
    BodyMemory.Lease first = memory.take(70).orElseThrow();
    BodyMemory.Lease second = memory.take(30).orElseThrow();

    first.release();
    first.release();

    assertEquals(30, memory.heldBytes());
    second.release();
    assertEquals(0, memory.heldBytes());
  }

  @ParameterizedTest(name = "{0}: counts {1}")
  @CsvSource({
    // body,                 counts
    "declared 3000,          3000",
    "declared 4096,          4096",
    "declared 4097,          0", // over the route's limit: read and dropped, never held
    "chunked,                4096",
    "empty,                  0",
  })
  void aBodyCountsItsDeclaredLengthOrTheRoutesLimit(String body, long counts) {
    HttpEntity entity =
        switch (body.split(" ")[0]) {
          case "declared" -> {
            long length = Long.parseLong(body.split(" ")[1]);
            yield HttpEntities.create(
                ContentTypes.APPLICATION_JSON,
                length,
                Source.single(ByteString.fromArray(new byte[(int) length])));
          }
          case "chunked" ->
              HttpEntities.createChunked(
                  ContentTypes.APPLICATION_JSON, Source.single(ByteString.fromString("{}")));
          default -> HttpEntities.EMPTY;
        };

    assertEquals(counts, BodyMemory.expected(entity, 4096));
  }

  @Test
  void theLimitIsTheShareOfTheHeap() {
    BodyMemory quarter = BodyMemory.shareOfHeap(0.25, 400);
    assertTrue(quarter.take(1).isPresent());
    assertTrue(quarter.take(99).isPresent(), "100 of 400 bytes");
    assertTrue(quarter.take(1).isEmpty(), "past a quarter");
    assertThrows(IllegalArgumentException.class, () -> BodyMemory.shareOfHeap(0, 1024));
    assertThrows(IllegalArgumentException.class, () -> BodyMemory.shareOfHeap(1.5, 1024));
  }

  /**
   * A body of no declared length (chunked, or h2c without content-length) takes the route's limit
   * while it streams in and gives back all but what it holds once it is in; a declared body is read
   * as it came and keeps its length.
   */
  @Test
  void aBodyOfNoDeclaredLengthKeepsOnlyWhatItHoldsOnceItIsIn() throws Exception {
    ActorSystem system = ActorSystem.create("body-memory-test", ConfigFactory.defaultReference());
    try {
      Materializer materializer = Materializer.matFromSystem(system);
      BodyMemory memory = new BodyMemory(10_000);
      RequestEntity chunked =
          HttpEntities.createChunked(
              ContentTypes.APPLICATION_JSON,
              Source.from(List.of(ByteString.fromString("{\"a\":"), ByteString.fromString("1}"))));
      BodyMemory.Lease lease = memory.take(chunked, 4096).orElseThrow();
      assertEquals(4096, memory.heldBytes(), "the route's limit while it streams in");

      ByteString read =
          lease
              .entity()
              .toStrict(5_000, materializer)
              .toCompletableFuture()
              .get(5, TimeUnit.SECONDS)
              .getData();

      assertEquals("{\"a\":1}", read.utf8String());
      assertEquals(7, memory.heldBytes(), "what it holds once it is in");
      assertEquals(7, lease.heldBytes());
      lease.release();
      assertEquals(0, memory.heldBytes());

      RequestEntity declared = HttpEntities.create(ContentTypes.APPLICATION_JSON, "{\"b\":2}");
      BodyMemory.Lease declaredLease = memory.take(declared, 4096).orElseThrow();
      assertSame(declared, declaredLease.entity());
      assertEquals(7, memory.heldBytes());
      declaredLease.release();
    } finally {
      system.terminate();
    }
  }

  @Test
  void aLeaseGivenBackBeforeItsBodyIsInStaysGivenBack() throws Exception {
    ActorSystem system = ActorSystem.create("body-memory-test", ConfigFactory.defaultReference());
    try {
      BodyMemory memory = new BodyMemory(10_000);
      RequestEntity chunked =
          HttpEntities.createChunked(
              ContentTypes.APPLICATION_JSON, Source.single(ByteString.fromString("{}")));
      BodyMemory.Lease lease = memory.take(chunked, 4096).orElseThrow();
      lease.release();

      lease
          .entity()
          .toStrict(5_000, Materializer.matFromSystem(system))
          .toCompletableFuture()
          .get(5, TimeUnit.SECONDS);

      assertEquals(0, memory.heldBytes(), "trimming a given-back lease takes nothing again");
    } finally {
      system.terminate();
    }
  }
}
