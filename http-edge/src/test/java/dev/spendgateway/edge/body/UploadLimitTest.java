package dev.spendgateway.edge.body;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.RequestEntity;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A caller's body is read up to the route's own limit — never cut at Pekko's in-memory read limit
 * (max-to-strict-bytes, 8 MiB), which would turn an allowed 10 MiB upload into a "malformed body".
 * Bodies arrive as the parser hands them over: streamed, with or without a Content-Length, or whole
 * with the headers.
 */
class UploadLimitTest {
  private static final long MIB = 1024 * 1024;
  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final Materializer MAT = Materializer.matFromSystem(testKit.system());

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /** {@code bytes} in 64 KiB chunks, announced with its length or chunked. */
  private static RequestEntity streamed(long bytes, boolean withLength) {
    int chunk = 64 * 1024;
    Source<ByteString, ?> data =
        Source.range(1, (int) (bytes / chunk))
            .map(i -> ByteString.fromArray(new byte[chunk]))
            .concat(Source.single(ByteString.fromArray(new byte[(int) (bytes % chunk)])));
    return withLength
        ? HttpEntities.create(ContentTypes.APPLICATION_OCTET_STREAM, bytes, data)
        : HttpEntities.createChunked(ContentTypes.APPLICATION_OCTET_STREAM, data);
  }

  @ParameterizedTest(name = "{0} MiB under a {1} MiB limit, length announced {2}: {3}")
  @CsvSource({
    "10, 25, true,  read",
    "10, 25, false, read",
    "25, 25, false, read",
    "9,  4,  true,  too large",
    "9,  4,  false, too large"
  })
  void aBodyIsReadUpToTheRoutesOwnLimit(
      long mib, long limitMib, boolean withLength, String expected) throws Exception {
    CallerBodies.Body body =
        CallerBodies.readStrict(streamed(mib * MIB, withLength), limitMib * MIB, 30_000, MAT)
            .toCompletableFuture()
            .get(60, TimeUnit.SECONDS);

    if (expected.equals("read")) {
      assertEquals(
          mib * MIB,
          assertInstanceOf(CallerBodies.Read.class, body, body::toString).bytes().size());
    } else {
      assertEquals(
          limitMib * MIB,
          assertInstanceOf(CallerBodies.TooLarge.class, body, body::toString).limitBytes());
    }
  }

  /**
   * A body that came whole with the headers (a strict entity, as most small JSON bodies do) is
   * answered at once, in the calling thread: no stream is run to copy it, so the route goes on
   * without a hand-off to another thread. Over the limit it is still refused.
   */
  @ParameterizedTest(name = "{0} bytes whole with the headers, limit {1}: {2}")
  @CsvSource({"200, 4096, read", "4096, 4096, read", "4097, 4096, too large", "0, 4096, read"})
  void aBodyThatCameWholeIsTakenAsItIsAtOnce(int bytes, long limit, String expected) {
    RequestEntity whole =
        HttpEntities.create(ContentTypes.APPLICATION_JSON, ByteString.fromArray(new byte[bytes]));

    var read = CallerBodies.readStrict(whole, limit, 30_000, MAT).toCompletableFuture();

    assertTrue(read.isDone(), "answered before readStrict returned");
    CallerBodies.Body body = read.join();
    if (expected.equals("read")) {
      assertEquals(bytes, assertInstanceOf(CallerBodies.Read.class, body).bytes().size());
    } else {
      assertEquals(limit, assertInstanceOf(CallerBodies.TooLarge.class, body).limitBytes());
    }
  }

  /**
   * A body cut off by its caller is the caller's doing, however the connection ended: a close (the
   * parser's truncation) or a reset (the socket's error). Both are a 400 naming the framing, never
   * a 500 and an ERROR line; anything else failing the read is the gateway's own and stays a
   * failure.
   */
  @ParameterizedTest(name = "the read fails with {0}: {1}")
  @CsvSource({
    "a truncation (the caller closed),  400 body_framing",
    "a reset (the caller's RST),        400 body_framing",
    "a bug in the gateway,              failure",
  })
  void aBodyCutOffByItsCallerIsItsFault(String how, String expected) throws Exception {
    RuntimeException cut =
        switch (how.split(" ")[1]) {
          case "truncation" ->
              new org.apache.pekko.http.scaladsl.model.EntityStreamException(
                  new org.apache.pekko.http.scaladsl.model.ErrorInfo(
                      "Entity stream truncation", ""));
          case "reset" ->
              new org.apache.pekko.stream.StreamTcpException(
                  "The connection closed with error: Connection reset by peer");
          default -> new IllegalStateException("a bug");
        };
    RequestEntity entity =
        HttpEntities.create(
            ContentTypes.APPLICATION_OCTET_STREAM,
            1024,
            Source.single(ByteString.fromArray(new byte[512])).concat(Source.failed(cut)));

    var read = CallerBodies.readStrict(entity, MIB, 30_000, MAT).toCompletableFuture();

    if (expected.equals("failure")) {
      assertTrue(
          assertThrows(
                      java.util.concurrent.ExecutionException.class,
                      () -> read.get(5, TimeUnit.SECONDS))
                  .getCause()
              instanceof IllegalStateException);
    } else {
      CallerBodies.Unreadable unreadable =
          assertInstanceOf(CallerBodies.Unreadable.class, read.get(5, TimeUnit.SECONDS));
      assertEquals(expected, unreadable.status() + " " + unreadable.rule());
    }
  }
}
