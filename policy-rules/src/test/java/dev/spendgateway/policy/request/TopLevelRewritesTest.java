package dev.spendgateway.policy.request;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The policy's rewrites spliced into the caller's bytes give exactly the tree of the caller's body
 * with those fields set, for every place and spelling of the field, and keep the caller's bytes
 * everywhere else.
 */
class TopLevelRewritesTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * Bodies, each with the {@code store} field absent, present in every type, first, last, alone.
   */
  static final List<String> BODIES =
      List.of(
          "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
          "{\"model\":\"m\",\"store\":true}",
          "{\"model\":\"m\",\"store\":false}",
          "{\"store\":true,\"model\":\"m\"}",
          "{\"store\":true}",
          "{\"store\" : true }",
          "{\n  \"model\" : \"m\",\n  \"store\" :\ttrue\n}\n",
          "{\"store\":null,\"model\":\"m\"}",
          "{\"store\":0,\"model\":\"m\"}",
          "{\"store\":1.5e3,\"model\":\"m\"}",
          "{\"store\":-12,\"model\":\"m\"}",
          "{\"store\":\"yes \\\" \\u00e9 é ☃\",\"model\":\"m\"}",
          "{\"store\":{\"a\":[1,{\"b\":\"}\"}]},\"model\":\"m\"}",
          "{\"store\":[true,[false]],\"model\":\"m\"}",
          "{\"model\":\"é☃ \\\"q\\\"\",\"messages\":[{\"content\":\"}{,\\\"store\\\":true\"}],"
              + "\"max_completion_tokens\":16}",
          "{}",
          "{ }",
          "  {\"model\":\"m\"}  ",
          "{\"max_completion_tokens\":16,\"stream_options\":{\"include_usage\":false},"
              + "\"store\":true}");

  static Stream<Arguments> bodiesAndRewrites() {
    List<Map<String, JsonNode>> rewriteSets = new ArrayList<>();
    rewriteSets.add(Map.of("store", BooleanNode.FALSE));
    Map<String, JsonNode> several = new LinkedHashMap<>();
    several.put("max_completion_tokens", LongNode.valueOf(4096));
    several.put("store", BooleanNode.FALSE);
    ObjectNode options = JSON.createObjectNode().put("include_usage", true);
    several.put("stream_options", options);
    rewriteSets.add(several);
    List<Arguments> rows = new ArrayList<>();
    for (String body : BODIES) {
      for (Map<String, JsonNode> rewrites : rewriteSets) {
        rows.add(Arguments.of(body, rewrites));
      }
    }
    return rows.stream();
  }

  @ParameterizedTest(name = "{0} with {1}")
  @MethodSource("bodiesAndRewrites")
  void theSplicedBytesReadAsTheRewrittenTree(String body, Map<String, JsonNode> rewrites)
      throws Exception {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    ObjectNode caller = (ObjectNode) JSON.readTree(bytes);

    byte[] spliced = TopLevelRewrites.splice(bytes, rewrites);

    // Through bytes, so numbers compare as read (a written-in 4096L reads back as an int).
    JsonNode expected =
        JSON.readTree(JSON.writeValueAsBytes(TopLevelRewrites.applied(caller, rewrites)));
    assertEquals(expected, JSON.readTree(spliced), new String(spliced, StandardCharsets.UTF_8));
    assertEquals(
        List.copyOf(iterable(expected.fieldNames())),
        List.copyOf(iterable(JSON.readTree(spliced).fieldNames())),
        "present fields keep their place, absent ones come last in order");
    assertEquals(caller, JSON.readTree(bytes), "the caller's tree is untouched");
  }

  @Test
  void withoutRewritesTheCallersBytesGoOutAsTheyAre() {
    byte[] bytes = "{ \"model\" : \"m\" }".getBytes(StandardCharsets.UTF_8);
    assertSame(bytes, TopLevelRewrites.splice(bytes, Map.of()));
  }

  @Test
  void onlyTheRewrittenValueChangesInTheBytes() {
    String body = "{ \"model\" :\"m\",  \"store\" : true , \"n\" : 1 }";
    byte[] spliced =
        TopLevelRewrites.splice(
            body.getBytes(StandardCharsets.UTF_8), Map.of("store", BooleanNode.FALSE));
    assertEquals(
        "{ \"model\" :\"m\",  \"store\" : false , \"n\" : 1 }",
        new String(spliced, StandardCharsets.UTF_8));
  }

  @Test
  void anAbsentFieldIsAppendedBeforeTheClosingBrace() {
    byte[] spliced =
        TopLevelRewrites.splice(
            "{\"model\":\"m\" }\n".getBytes(StandardCharsets.UTF_8),
            Map.of("store", BooleanNode.FALSE));
    assertEquals(
        "{\"model\":\"m\" ,\"store\":false}\n", new String(spliced, StandardCharsets.UTF_8));
  }

  @Test
  void somethingThatIsNotAnObjectIsRefused() {
    for (String notAnObject : List.of("[]", "\"s\"", "{\"a\":", "")) {
      assertThrows(
          IllegalArgumentException.class,
          () ->
              TopLevelRewrites.splice(
                  notAnObject.getBytes(StandardCharsets.UTF_8), Map.of("store", BooleanNode.FALSE)),
          notAnObject);
    }
  }

  @Test
  void aValueEqualToTheCallersIsNoRewrite() throws Exception {
    ObjectNode caller = (ObjectNode) JSON.readTree("{\"store\":false,\"n\":5}");
    TopLevelRewrites rewrites = new TopLevelRewrites(caller);
    rewrites.set("store", BooleanNode.FALSE);
    rewrites.set("n", LongNode.valueOf(5));
    assertTrue(rewrites.changes().isEmpty(), rewrites.changes().toString());
    rewrites.set("n", LongNode.valueOf(6));
    assertEquals(Map.of("n", LongNode.valueOf(6)), rewrites.changes());
  }

  private static List<String> iterable(java.util.Iterator<String> names) {
    List<String> out = new ArrayList<>();
    names.forEachRemaining(out::add);
    return out;
  }
}
