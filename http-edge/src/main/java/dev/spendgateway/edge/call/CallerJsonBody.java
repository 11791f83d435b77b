package dev.spendgateway.edge.call;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.edge.body.CallerBodies;
import dev.spendgateway.edge.body.CallerJson;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.RequestEntity;
import org.apache.pekko.util.ByteString;

/**
 * A caller's JSON body, read through {@link CallerBodies} (the one reader with the size limit and
 * the read deadline) and parsed strictly: a JSON object, or the refusal the caller gets, with the
 * same words on every JSON route.
 */
public final class CallerJsonBody {
  private CallerJsonBody() {}

  /** What reading gave. */
  public sealed interface Read {}

  /**
   * @param bytes the body as received (its size is what policy limits)
   */
  public record Json(ObjectNode object, ByteString bytes) implements Read {}

  /**
   * @param status 400, 408 or 413
   * @param field the request part at fault ({@code body})
   * @param errorClass the access line's word
   */
  public record Refused(int status, String field, String message, String errorClass)
      implements Read {}

  /** Reads the body within {@code policy}'s body limit and the body-read timeout. */
  public static CompletionStage<Read> read(RequestEntity entity, CallServices services) {
    long limit = services.policy().limits().maxBodyBytes();
    return CallerBodies.readStrict(
            entity, limit, services.bodyReadTimeout().toMillis(), services.materializer())
        .thenApply(CallerJsonBody::parsed);
  }

  /** The body read, parsed; pure. */
  public static Read parsed(CallerBodies.Body body) {
    if (body instanceof CallerBodies.TooLarge tooLarge) {
      return new Refused(
          413,
          "body",
          "Request body is larger than the gateway's limit of " + tooLarge.limitBytes() + " bytes.",
          "policy:max_body_bytes");
    }
    if (body instanceof CallerBodies.Unreadable unreadable) {
      // The caller's framing or pace, not a policy rule: named by the rule alone, as the
      // pass-through routes do.
      return new Refused(unreadable.status(), "body", unreadable.message(), unreadable.rule());
    }
    ByteString bytes = ((CallerBodies.Read) body).bytes();
    JsonNode json;
    try {
      json = CallerJson.parse(bytes);
    } catch (JsonProcessingException e) {
      return new Refused(
          400,
          "body",
          "The request body is not valid JSON: " + CallerJson.safeReason(e) + ".",
          "policy:json");
    }
    if (!(json instanceof ObjectNode object)) {
      return new Refused(400, "body", "The request body must be a JSON object.", "policy:json");
    }
    return new Json(object, bytes);
  }
}
