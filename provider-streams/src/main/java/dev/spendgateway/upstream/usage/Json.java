package dev.spendgateway.upstream.usage;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Optional;

/** The module's shared, thread-safe JSON reader; parsing never throws. */
public final class Json {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private Json() {}

  public static ObjectMapper mapper() {
    return MAPPER;
  }

  /** Parses {@code text}; empty when it is not JSON. */
  public static Optional<JsonNode> parse(String text) {
    try {
      return Optional.ofNullable(MAPPER.readTree(text));
    } catch (JsonProcessingException e) {
      return Optional.empty();
    }
  }

  /** Parses {@code bytes} as UTF-8 JSON; empty when it is not JSON. */
  public static Optional<JsonNode> parse(byte[] bytes) {
    try {
      return Optional.ofNullable(MAPPER.readTree(bytes));
    } catch (java.io.IOException e) {
      return Optional.empty();
    }
  }

  static Optional<JsonNode> object(JsonNode parent, String field) {
    JsonNode node = parent == null ? null : parent.get(field);
    return node != null && node.isObject() ? Optional.of(node) : Optional.empty();
  }
}
