package dev.spendgateway.edge.body;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.pekko.util.ByteString;

/**
 * Parses caller JSON strictly (pass-through routes and the failover router alike): duplicate keys
 * are an error (two parsers could read different values of the same key — a policy bypass), and so
 * is anything but whitespace after the value ({@code {"a":1} {"b":2}}: a parser that reads on would
 * see a second request the policy never vetted); nesting and string sizes are bounded so a hostile
 * body costs little to refuse.
 */
public final class CallerJson {
  /** Real API bodies nest a few levels (messages → content → blocks → schema); 128 is generous. */
  public static final int MAX_NESTING_DEPTH = 128;

  private static final ObjectMapper JSON =
      new ObjectMapper(
              JsonFactory.builder()
                  .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                  .streamReadConstraints(
                      StreamReadConstraints.builder().maxNestingDepth(MAX_NESTING_DEPTH).build())
                  .build())
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

  private CallerJson() {}

  public static JsonNode parse(ByteString bytes) throws JsonProcessingException {
    try {
      JsonNode node = JSON.readTree(bytes.toArray());
      if (node == null || node.isMissingNode()) {
        throw new com.fasterxml.jackson.core.JsonParseException(null, "empty body");
      }
      return node;
    } catch (JsonProcessingException e) {
      throw e;
    } catch (java.io.IOException e) {
      throw new com.fasterxml.jackson.core.JsonParseException(null, "unreadable body");
    }
  }

  /** The parser's reason without the echoed input (which could contain a prompt). */
  public static String safeReason(JsonProcessingException e) {
    String original = e.getOriginalMessage();
    if (original == null) {
      return "malformed JSON";
    }
    if (original.startsWith("Trailing token")) {
      return "more follows the JSON value; send exactly one";
    }
    // Jackson quotes the offending token; cut at the first quote so no caller text is echoed.
    int quote = original.indexOf('\'');
    String reason = quote > 0 ? original.substring(0, quote).trim() : original;
    return reason.length() > 160 ? reason.substring(0, 160) : reason;
  }

  public static byte[] bytes(JsonNode node) {
    try {
      return JSON.writeValueAsBytes(node);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a parsed tree always serializes", e);
    }
  }

  public static ObjectNode object() {
    return JSON.createObjectNode();
  }
}
