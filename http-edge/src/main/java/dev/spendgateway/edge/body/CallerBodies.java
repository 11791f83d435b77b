package dev.spendgateway.edge.body;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.RequestEntity;
import org.apache.pekko.http.scaladsl.model.EntityStreamException;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.StreamTcpException;
import org.apache.pekko.util.ByteString;

/**
 * Reads a caller's request body into memory with a hard limit (the route's own: JSON 4 MiB, a
 * transcription form the policy's file limit plus its framing) and a deadline, so a body the
 * gateway cannot take is refused in the caller's error shape (not Pekko's plain text, not a 500):
 * over the limit a 413 before it is buffered, broken framing a 400, not finished in time a 408.
 * Shared by the pass-through routes, the failover router and the gateway's own API.
 */
public final class CallerBodies {
  private CallerBodies() {}

  /** Runs a stage's function in the thread that completes the stage before it. */
  private static final Executor SAME_THREAD = Runnable::run;

  /** A body read into memory, or refused for its size, its framing or its pace. */
  public sealed interface Body {}

  public record Read(ByteString bytes) implements Body {}

  public record TooLarge(long limitBytes) implements Body {}

  /**
   * A body that could not be read to its end: the caller's fault, so a 4xx the caller can act on,
   * never a 500 and never an ERROR line. {@code rule} names it in the access line.
   */
  public record Unreadable(int status, String rule, String message) implements Body {
    /** A chunk size that is not hex, a chunk longer than announced, a connection cut mid-body. */
    static Unreadable malformed() {
      return new Unreadable(
          400,
          "body_framing",
          "The request body could not be read to its end: its framing (Content-Length or chunked encoding) is malformed or it was cut off.");
    }

    /** Still arriving when the body-read timeout ran out: a stalled or trickling client. */
    static Unreadable tooSlow(long timeoutMillis) {
      return new Unreadable(
          408,
          "body_read_timeout",
          "The request body did not arrive within the gateway's limit of "
              + seconds(timeoutMillis)
              + ".");
    }

    private static String seconds(long millis) {
      return millis % 1000 == 0 ? millis / 1000 + " s" : millis + " ms";
    }
  }

  public static CompletionStage<Body> readStrict(
      RequestEntity entity, long limitBytes, long timeoutMillis, Materializer materializer) {
    if (entity instanceof HttpEntity.Strict strict) {
      // The whole body came with the headers (a small body usually does): it is read already, and
      // the route goes on in this thread. toStrict would run a stream (a new actor) to copy it and
      // hand the rest of the call to two thread pools in turn. Nothing is left to drain when it is
      // too large.
      return CompletableFuture.completedFuture(
          strict.getData().size() > limitBytes
              ? new TooLarge(limitBytes)
              : new Read(strict.getData()));
    }
    if (entity.getContentLengthOption().isPresent()
        && entity.getContentLengthOption().getAsLong() > limitBytes) {
      // Read and drop what the client sends (bounded by
      // pekko.http.server.parsing.max-content-length),
      // then refuse: answering while the client is still uploading makes some clients see a reset
      // instead of the 413.
      return entity
          .discardBytes(materializer)
          .completionStage()
          .handle((done, failure) -> (Body) new TooLarge(limitBytes));
    }
    // The route's own limit goes to toStrict too: without it toStrict stops at Pekko's
    // max-to-strict-bytes (8 MiB) and a 10 MiB upload the policy allows fails like a cut body.
    // The mapping runs where the read ends (SAME_THREAD): the stage Pekko returns would run a plain
    // thenApply on the JDK's common pool, one more hand-off between threads for two allocations.
    return entity
        .withSizeLimit(limitBytes)
        .toStrict(timeoutMillis, limitBytes, materializer)
        .<Body>thenApplyAsync(strict -> new Read(strict.getData()), SAME_THREAD)
        .exceptionally(failure -> refusalOrRethrow(failure, limitBytes, timeoutMillis));
  }

  /**
   * Reads and drops the body of a request that is refused before its body is read (a wrong content
   * type), completing when it is gone, failed or not: as with a body that is too large, answering
   * while the client is still uploading makes some clients see a reset instead of the answer.
   * Bounded by {@code pekko.http.server.parsing.max-content-length}.
   */
  public static CompletionStage<Void> discard(RequestEntity entity, Materializer materializer) {
    if (entity.isKnownEmpty() || entity.isStrict()) {
      return CompletableFuture.completedFuture(null);
    }
    return entity.discardBytes(materializer).completionStage().handle((done, failure) -> null);
  }

  /**
   * The caller's faults become answers; anything else is the gateway's own failure and stays one.
   * Pekko fails the read with an {@link EntityStreamException} when the HTTP parser cannot frame
   * the body (or the client closes its connection inside it), with a {@link StreamTcpException}
   * when the client resets its connection inside it (its body is as cut off as with a close: not a
   * 500 and an ERROR line for what the caller did), and with a {@link TimeoutException} when {@code
   * toStrict}'s deadline passes.
   */
  private static Body refusalOrRethrow(Throwable failure, long limitBytes, long timeoutMillis) {
    Throwable cause =
        failure instanceof CompletionException && failure.getCause() != null
            ? failure.getCause()
            : failure;
    if (cause instanceof EntityStreamSizeException) {
      return new TooLarge(limitBytes);
    }
    if (cause instanceof TimeoutException) {
      return Unreadable.tooSlow(timeoutMillis);
    }
    if (cause instanceof EntityStreamException || cause instanceof StreamTcpException) {
      return Unreadable.malformed();
    }
    throw new CompletionException(cause);
  }
}
