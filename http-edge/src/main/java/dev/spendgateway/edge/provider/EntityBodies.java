package dev.spendgateway.edge.provider;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.RequestEntity;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.apache.pekko.util.ByteString;

/**
 * Reads a request body into memory with a hard limit, so an oversized body is refused with a 413
 * in the provider's shape (not Pekko's plain-text one) before it is buffered.
 */
final class EntityBodies {
  private EntityBodies() {}

  sealed interface Body {}

  record Read(ByteString bytes) implements Body {}

  record TooLarge(long limitBytes) implements Body {}

  static CompletionStage<Body> readStrict(RequestEntity entity, long limitBytes, CallServices services) {
    if (entity.getContentLengthOption().isPresent()
        && entity.getContentLengthOption().getAsLong() > limitBytes) {
      // Drain what the client sends so the connection stays usable, then refuse.
      entity.discardBytes(services.materializer());
      return CompletableFuture.completedFuture(new TooLarge(limitBytes));
    }
    return entity
        .withSizeLimit(limitBytes)
        .toStrict(services.bodyReadTimeout().toMillis(), services.materializer())
        .<Body>thenApply(strict -> new Read(strict.getData()))
        .exceptionally(failure -> tooLargeOrRethrow(failure, limitBytes));
  }

  private static Body tooLargeOrRethrow(Throwable failure, long limitBytes) {
    Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
        ? failure.getCause()
        : failure;
    if (cause instanceof EntityStreamSizeException) {
      return new TooLarge(limitBytes);
    }
    throw new java.util.concurrent.CompletionException(cause);
  }
}
