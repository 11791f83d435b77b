package dev.spendgateway.edge.router;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.Optional;
import org.apache.pekko.util.ByteString;

/**
 * Provider JSON as the router reads it: answers and error bodies, leniently (caller bodies go
 * through {@link dev.spendgateway.edge.body.CallerJson}, strictly).
 */
final class RouterJson {
  private static final ObjectMapper LENIENT = new ObjectMapper();

  private RouterJson() {}

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
