package dev.spendgateway.edge.body;

import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.RequestEntity;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.util.ByteString;

/**
 * Reads a caller's request body into memory with a hard limit, so an oversized body is refused with
 * a 413 in the provider's shape (not Pekko's plain-text one) before it is buffered. Shared by the
 * pass-through routes and the failover router.
 */
public final class CallerBodies {
  private CallerBodies() {}

  /** A body read into memory, or refused for its size. */
  public sealed interface Body {}

  public record Read(ByteString bytes) implements Body {}

  public record TooLarge(long limitBytes) implements Body {}

  public static CompletionStage<Body> readStrict(
      RequestEntity entity, long limitBytes, long timeoutMillis, Materializer materializer) {
    if (entity.getContentLengthOption().isPresent()
        && entity.getContentLengthOption().getAsLong() > limitBytes) {
      // Read and drop what the client sends (bounded by pekko.http.server.parsing.max-content-length),
      // then refuse: answering while the client is still uploading makes some clients see a reset
      // instead of the 413.
      return entity
          .discardBytes(materializer)
          .completionStage()
          .handle((done, failure) -> (Body) new TooLarge(limitBytes));
    }
    return entity
        .withSizeLimit(limitBytes)
        .toStrict(timeoutMillis, materializer)
        .<Body>thenApply(strict -> new Read(strict.getData()))
        .exceptionally(failure -> tooLargeOrRethrow(failure, limitBytes));
  }

  /**
   * Reads and drops the body of a request that is refused before its body is read (a wrong
   * content type), completing when it is gone, failed or not: as with a body that is too large,
   * answering while the client is still uploading makes some clients see a reset instead of the
   * answer. Bounded by {@code pekko.http.server.parsing.max-content-length}.
   */
  public static CompletionStage<Void> discard(RequestEntity entity, Materializer materializer) {
    if (entity.isKnownEmpty() || entity.isStrict()) {
      return java.util.concurrent.CompletableFuture.completedFuture(null);
    }
    return entity.discardBytes(materializer).completionStage().handle((done, failure) -> null);
  }

  private static Body tooLargeOrRethrow(Throwable failure, long limitBytes) {
    Throwable cause =
        failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    if (cause instanceof EntityStreamSizeException) {
      return new TooLarge(limitBytes);
    }
    throw new CompletionException(cause);
  }
}
