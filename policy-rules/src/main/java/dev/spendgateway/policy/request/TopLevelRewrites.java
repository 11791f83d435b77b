package dev.spendgateway.policy.request;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The policy's changes to a caller's body, as top-level fields to write ({@code store: false}, an
 * output cap written in, the stream usage asked for), kept apart from the caller's tree instead of
 * applied to a deep copy of it.
 *
 * <p>The bytes sent upstream are then the caller's own bytes with each changed field's value
 * replaced in place (or the field appended before the closing brace when it was absent): the rest
 * of the body, its messages and content (nearly all of it), is copied as bytes, never built as a
 * second tree and serialized again. The caller's body was read strictly (one object, no duplicate
 * keys, nothing after it), so the provider reads exactly the tree the policy vetted with these
 * fields set.
 */
public final class TopLevelRewrites {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final ObjectNode caller;
  private final Map<String, JsonNode> changes = new LinkedHashMap<>();

  TopLevelRewrites(ObjectNode caller) {
    this.caller = caller;
  }

  /**
   * Sets {@code field} to {@code value}; a value equal to the caller's is no change (a whole number
   * equals the same number however it was read: the caller's {@code 5} and a written-in 5L).
   */
  void set(String field, JsonNode value) {
    if (sameValue(value, caller.get(field))) {
      changes.remove(field);
    } else {
      changes.put(field, value);
    }
  }

  private static boolean sameValue(JsonNode value, JsonNode existing) {
    if (existing == null) {
      return false;
    }
    if (value.isIntegralNumber() && existing.isIntegralNumber()) {
      return value.bigIntegerValue().equals(existing.bigIntegerValue());
    }
    return value.equals(existing);
  }

  /** The field's value as it will be sent: the rewrite's, else the caller's (null if absent). */
  JsonNode current(String field) {
    return changes.containsKey(field) ? changes.get(field) : caller.get(field);
  }

  /** The fields to write, in the order they were set; empty when the body goes out unchanged. */
  Map<String, JsonNode> changes() {
    return Collections.unmodifiableMap(new LinkedHashMap<>(changes));
  }

  /** {@code body} with {@code changes} set: a new tree (the caller's is never modified). */
  static ObjectNode applied(ObjectNode body, Map<String, JsonNode> changes) {
    if (changes.isEmpty()) {
      return body.deepCopy();
    }
    ObjectNode copy = body.deepCopy();
    changes.forEach((field, value) -> copy.set(field, value.deepCopy()));
    return copy;
  }

  /**
   * {@code object} (the UTF-8 bytes of one JSON object, no duplicate keys) with each top-level
   * field of {@code changes} set: a present field's value bytes replaced, an absent one appended
   * before the closing brace. With no changes, {@code object} itself.
   *
   * @throws IllegalArgumentException when {@code object} is not one JSON object
   */
  public static byte[] splice(byte[] object, Map<String, JsonNode> changes) {
    if (changes.isEmpty()) {
      return object;
    }
    try (JsonParser parser = JSON.createParser(object)) {
      if (parser.nextToken() != JsonToken.START_OBJECT) {
        throw new IllegalArgumentException("not a JSON object");
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream(object.length + 64);
      Map<String, JsonNode> missing = new LinkedHashMap<>(changes);
      int copiedTo = 0;
      boolean anyField = false;
      while (parser.nextToken() == JsonToken.FIELD_NAME) {
        anyField = true;
        String field = parser.currentName();
        JsonToken value = parser.nextToken();
        int valueStart = (int) parser.currentTokenLocation().getByteOffset();
        if (value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY) {
          parser.skipChildren();
        } else {
          parser.finishToken(); // a string's end is found only once it is read
        }
        JsonNode replacement = missing.remove(field);
        if (replacement != null) {
          int valueEnd = valueEnd(parser, value);
          out.write(object, copiedTo, valueStart - copiedTo);
          out.write(JSON.writeValueAsBytes(replacement));
          copiedTo = valueEnd;
        }
      }
      if (parser.currentToken() != JsonToken.END_OBJECT) {
        throw new IllegalArgumentException("not a JSON object");
      }
      int closing = (int) parser.currentTokenLocation().getByteOffset();
      out.write(object, copiedTo, closing - copiedTo);
      for (Map.Entry<String, JsonNode> added : missing.entrySet()) {
        if (anyField) {
          out.write(',');
        }
        anyField = true;
        out.write(JSON.writeValueAsBytes(added.getKey()));
        out.write(':');
        out.write(JSON.writeValueAsBytes(added.getValue()));
      }
      out.write(object, closing, object.length - closing);
      return out.toByteArray();
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("not a JSON object", e);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Where the value the parser has just passed ends: after a container's closing bracket (the
   * parser stands on it), or after a scalar's last byte (numbers are found to end only at the next
   * byte, which the parser has not consumed past).
   */
  private static int valueEnd(JsonParser parser, JsonToken value) {
    if (value == JsonToken.START_OBJECT || value == JsonToken.START_ARRAY) {
      return (int) parser.currentTokenLocation().getByteOffset() + 1;
    }
    return (int) parser.currentLocation().getByteOffset();
  }
}
