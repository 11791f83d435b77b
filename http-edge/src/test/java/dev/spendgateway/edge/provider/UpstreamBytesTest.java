package dev.spendgateway.edge.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.spendgateway.edge.body.CallerJson;
import java.util.Map;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What goes upstream: the caller's own bytes when the policy rewrote nothing (no second
 * serialization on the hot path), else the caller's bytes with the rewritten fields spliced in.
 */
class UpstreamBytesTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        // case                     | field written by the policy | value
        "unchanged body             | ''                          | ''",
        "stream usage forced on     | stream_options              | include_usage",
        "store forced off           | store                       | false",
        "output limit written in    | max_completion_tokens       | 4096",
        "a field replaced           | model                       | other",
      })
  void forwardsTheCallersBytesOnlyWhenNothingChanged(String ignoredCase, String field, String value)
      throws Exception {
    // Spacing and key order the gateway's own serializer would not produce: a rewrite is visible.
    String text = "{ \"stream\" : true,\"model\":\"gpt-6.1-sol-mini\", \"max_tokens\": 16 }";
    ByteString read = ByteString.fromString(text);
    ObjectNode vetted = (ObjectNode) CallerJson.parse(read);
    Map<String, JsonNode> rewrites =
        field.isEmpty() ? Map.of() : Map.of(field, TextNode.valueOf(value));

    ByteString sent = Dialect.upstreamBytes(read, rewrites);

    if (field.isEmpty()) {
      assertSame(read, sent);
    } else {
      ObjectNode expected = vetted.deepCopy();
      expected.put(field, value);
      assertEquals(expected, CallerJson.parse(sent));
      assertTrue(
          sent.utf8String().startsWith("{ \"stream\" : true,"),
          "the caller's bytes are kept around the rewrite: " + sent.utf8String());
    }
  }
}
