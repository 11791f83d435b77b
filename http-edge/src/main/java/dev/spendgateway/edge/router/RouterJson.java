package dev.spendgateway.edge.router;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.RequestEntity;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.util.ByteString;

/**
 * Strict caller-JSON parsing and bounded body reading for the router.
 *
 * <p>TEMPORARY package-private copy of {@code edge.provider.RequestJson} and {@code
 * edge.provider.EntityBodies} (both package-private there, and that package is being edited in
 * parallel). To be consolidated into one shared helper after both branches merge.
 */
final class RouterJson {
  /** Real API bodies nest a few levels (messages → content → blocks → schema); 128 is generous. */
  static final int MAX_NESTING_DEPTH = 128;

  private static final ObjectMapper STRICT =
      new ObjectMapper(
          JsonFactory.builder()
              .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
              .streamReadConstraints(
                  StreamReadConstraints.builder().maxNestingDepth(MAX_NESTING_DEPTH).build())
              .build());

  private static final ObjectMapper LENIENT = new ObjectMapper();

  private RouterJson() {}

  /** A body read into memory, or refused for its size. */
  sealed interface Body {}

  record Read(ByteString bytes) implements Body {}

  record TooLarge(long limitBytes) implements Body {}

  /** Reads a caller's body with a hard limit (an oversized body never gets buffered). */
  static CompletionStage<Body> readStrict(
      RequestEntity entity, long limitBytes, long timeoutMillis, Materializer materializer) {
    if (entity.getContentLengthOption().isPresent()
        && entity.getContentLengthOption().getAsLong() > limitBytes) {
      entity.discardBytes(materializer);
      return CompletableFuture.completedFuture(new TooLarge(limitBytes));
    }
    return entity
        .withSizeLimit(limitBytes)
        .toStrict(timeoutMillis, materializer)
        .<Body>thenApply(strict -> new Read(strict.getData()))
        .exceptionally(failure -> tooLargeOrRethrow(failure, limitBytes));
  }

  private static Body tooLargeOrRethrow(Throwable failure, long limitBytes) {
    Throwable cause =
        failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    if (cause instanceof EntityStreamSizeException) {
      return new TooLarge(limitBytes);
    }
    throw new CompletionException(cause);
  }

  /** Parses caller JSON strictly: duplicate keys are an error (a policy bypass otherwise). */
  static JsonNode parseStrict(ByteString bytes) throws JsonProcessingException {
    try {
      JsonNode node = STRICT.readTree(bytes.toArray());
      if (node == null || node.isMissingNode()) {
        throw new JsonParseException(null, "empty body");
      }
      return node;
    } catch (JsonProcessingException e) {
      throw e;
    } catch (IOException e) {
      throw new JsonParseException(null, "unreadable body");
    }
  }

  /** The parser's reason without the echoed input (which could contain a prompt). */
  static String safeReason(JsonProcessingException e) {
    String original = e.getOriginalMessage();
    if (original == null) {
      return "malformed JSON";
    }
    int quote = original.indexOf('\'');
    String reason = quote > 0 ? original.substring(0, quote).trim() : original;
    return reason.length() > 160 ? reason.substring(0, 160) : reason;
  }

  /** Provider JSON (answers and error bodies), read leniently; empty when not a JSON object. */
  static Optional<ObjectNode> parseObject(ByteString bytes) {
    try {
      JsonNode node = LENIENT.readTree(bytes.toArray());
      return node instanceof ObjectNode o ? Optional.of(o) : Optional.empty();
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  static byte[] bytes(JsonNode node) {
    try {
      return LENIENT.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a parsed tree always serializes", e);
    }
  }

  static ObjectNode object() {
    return LENIENT.createObjectNode();
  }
}
