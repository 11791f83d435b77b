package dev.spendgateway.upstream.translate;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** Test helper: JSON with single quotes so table rows stay readable; fixtures from resources. */
final class Json {
  static final ObjectMapper MAPPER =
      JsonMapper.builder().enable(JsonReadFeature.ALLOW_SINGLE_QUOTES).build();

  private Json() {}

  static JsonNode parse(String json) {
    try {
      return MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("bad test JSON: " + json, e);
    }
  }

  /** Re-parsed, so built nodes (LongNode, DoubleNode) compare equal to parsed ones (IntNode…). */
  static JsonNode normalized(JsonNode node) {
    return parse(node.toString());
  }

  static String resource(String name) {
    try (InputStream in = Json.class.getResourceAsStream("/translate/" + name)) {
      if (in == null) {
        throw new IllegalArgumentException("no test resource translate/" + name);
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
