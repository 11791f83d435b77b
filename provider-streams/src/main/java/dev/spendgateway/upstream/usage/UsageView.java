package dev.spendgateway.upstream.usage;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.MissingNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.Optional;
import org.apache.pekko.util.ByteString;

/**
 * What the usage rules read of a whole JSON answer, read with Jackson's streaming parser instead of
 * building the whole answer as a tree: a pass-through answer is forwarded as the provider's bytes,
 * so the gateway only needs its usage, and a tree of every content block, message and choice (most
 * of the answer) was built for nothing on every call.
 *
 * <p>The view is an object with only the fields any {@link ApiKind}'s usage rule reads, the same
 * values as the whole tree has: {@code usage} (whole), {@code duration} (a transcription's), {@code
 * output} (a Responses answer's items, each with only its {@code type}, for the web searches) and
 * {@code response} (the same view of a wrapped Responses object). Every other field is skipped
 * without being decoded. So {@code kind.usageOfAnswer(view)} is what {@code
 * kind.usageOfAnswer(wholeTree)} was, and "usage not reported" stays distinct from a reported zero:
 * an answer without a {@code usage} gives a view without one.
 *
 * <p>The whole answer is still scanned to its end: an answer that is not JSON is not JSON even when
 * its usage came first.
 */
public final class UsageView {
  private UsageView() {}

  /**
   * The view of {@code answer}; empty when it is not JSON (as a tree parse would be). A JSON value
   * that is not an object (an array, a string) is a {@link MissingNode}: it has no usage.
   */
  public static Optional<JsonNode> of(ByteString answer) {
    return of(answer.toArrayUnsafe());
  }

  /** {@link #of(ByteString)} on UTF-8 bytes. */
  public static Optional<JsonNode> of(byte[] answer) {
    try (JsonParser parser = Json.mapper().createParser(answer)) {
      JsonToken first = parser.nextToken();
      if (first == null) {
        return Optional.of(MissingNode.getInstance()); // empty, as readTree answers it
      }
      if (first != JsonToken.START_OBJECT) {
        parser.skipChildren();
        return Optional.of(MissingNode.getInstance());
      }
      return Optional.of(object(parser));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /** The view of the object whose START_OBJECT the parser is on; leaves it on its END_OBJECT. */
  private static ObjectNode object(JsonParser parser) throws IOException {
    ObjectNode view = Json.mapper().createObjectNode();
    while (parser.nextToken() == JsonToken.FIELD_NAME) {
      String field = parser.currentName();
      JsonToken value = parser.nextToken();
      switch (field) {
        case "usage", "duration" -> view.set(field, parser.readValueAsTree());
        case "response" -> {
          if (value == JsonToken.START_OBJECT) {
            view.set(field, object(parser));
          } else {
            view.set(field, parser.readValueAsTree());
          }
        }
        case "output" -> {
          if (value == JsonToken.START_ARRAY) {
            view.set(field, outputTypes(parser));
          } else {
            view.set(field, parser.readValueAsTree());
          }
        }
        default -> parser.skipChildren();
      }
    }
    return view;
  }

  /** A Responses {@code output} array, each object item with only its {@code type}. */
  private static ArrayNode outputTypes(JsonParser parser) throws IOException {
    ArrayNode items = Json.mapper().createArrayNode();
    JsonToken token;
    while ((token = parser.nextToken()) != JsonToken.END_ARRAY) {
      if (token != JsonToken.START_OBJECT) {
        items.add((JsonNode) parser.readValueAsTree());
        continue;
      }
      ObjectNode item = items.addObject();
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        String field = parser.currentName();
        parser.nextToken();
        if (field.equals("type")) {
          item.set(field, parser.readValueAsTree());
        } else {
          parser.skipChildren();
        }
      }
    }
    return items;
  }
}
