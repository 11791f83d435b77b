package dev.spendgateway.edge.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.edge.body.CallerJson;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What goes upstream: the caller's own bytes when the policy's tree equals the one read (no second
 * serialization on the hot path), the rewritten tree whenever the policy changed anything.
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
      })
  void forwardsTheCallersBytesOnlyWhenNothingChanged(String ignoredCase, String field, String value)
      throws Exception {
    // Spacing and key order the gateway's own serializer would not produce: a rewrite is visible.
    ByteString read =
        ByteString.fromString(
            "{ \"stream\" : true,\"model\":\"gpt-6.1-sol-mini\", \"max_tokens\": 16 }");
    JsonNode vetted = CallerJson.parse(read);
    ObjectNode upstream = vetted.deepCopy();
    if (!field.isEmpty()) {
      upstream.put(field, value);
    }

    ByteString sent = Dialect.upstreamBytes(read, vetted, upstream);

    if (field.isEmpty()) {
      assertSame(read, sent);
    } else {
      assertEquals(upstream, CallerJson.parse(sent));
      assertEquals(value, CallerJson.parse(sent).get(field).asText());
    }
  }
}
