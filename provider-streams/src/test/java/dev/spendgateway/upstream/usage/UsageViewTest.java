package dev.spendgateway.upstream.usage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.policy.cost.TokenUsage;
import dev.spendgateway.policy.cost.UsageReport;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The usage read from a whole answer's streamed view is the usage read from its whole tree, for
 * every API and every shape of answer: usage present, absent, zero, null, malformed, wrapped, after
 * a large content, and answers that are not JSON at all.
 */
class UsageViewTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static final String BIG_TEXT = "x\\\"y \\u00e9 ".repeat(2_000);

  static final List<String> ANSWERS =
      List.of(
          "{\"id\":\"m\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}],"
              + "\"usage\":{\"input_tokens\":10,\"output_tokens\":5}}",
          "{\"usage\":{\"input_tokens\":0,\"output_tokens\":0}}",
          "{\"usage\":{\"input_tokens\":10,\"output_tokens\":5,\"cache_creation_input_tokens\":3,"
              + "\"cache_read_input_tokens\":4,\"server_tool_use\":{\"web_search_requests\":2}}}",
          "{\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":5,"
              + "\"prompt_tokens_details\":{\"cached_tokens\":4}}}",
          "{\"usage\":{\"prompt_tokens\":0,\"completion_tokens\":0}}",
          "{\"choices\":[{\"message\":{\"content\":\""
              + BIG_TEXT
              + "\"}}],"
              + "\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":2}}",
          "{\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":2},"
              + "\"choices\":[{\"message\":{\"content\":\""
              + BIG_TEXT
              + "\"}}]}",
          "{\"output\":[{\"type\":\"web_search_call\",\"id\":\"w\",\"action\":{\"query\":\"q\"}},"
              + "{\"type\":\"message\",\"content\":[{\"type\":\"output_text\",\"text\":\"t\"}]},"
              + "{\"type\":\"web_search_call\"}],"
              + "\"usage\":{\"input_tokens\":10,\"output_tokens\":5,"
              + "\"input_tokens_details\":{\"cached_tokens\":2}}}",
          "{\"response\":{\"output\":[{\"type\":\"web_search_call\"}],"
              + "\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}",
          "{\"output\":[1,\"s\",null,[{\"type\":\"web_search_call\"}]],"
              + "\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}",
          "{\"output\":\"text\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}",
          "{\"response\":\"x\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}",
          "{\"text\":\"hi\",\"usage\":{\"type\":\"duration\",\"seconds\":7.2}}",
          "{\"text\":\"hi\",\"duration\":12.01}",
          "{\"text\":\"hi\",\"duration\":-1}",
          "{\"text\":\"hi\",\"duration\":\"3\"}",
          "{\"id\":\"x\"}",
          "{\"usage\":null}",
          "{\"usage\":{}}",
          "{\"usage\":{\"input_tokens\":null,\"output_tokens\":5}}",
          "{\"usage\":{\"input_tokens\":-1,\"output_tokens\":5}}",
          "{\"usage\":{\"input_tokens\":1.5,\"output_tokens\":5}}",
          "{\"usage\":{\"input_tokens\":\"10\",\"output_tokens\":5}}",
          "{\"usage\":{\"input_tokens\":1e40,\"output_tokens\":5}}",
          "{\"usage\":[1,2]}",
          "{\"usage\":{\"input_tokens\":1,\"output_tokens\":1},"
              + "\"usage\":{\"input_tokens\":9,\"output_tokens\":9}}",
          "{}",
          "[]",
          "[{\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}]",
          "\"just a string\"",
          "42",
          "",
          "   ",
          "plain text transcription",
          "{\"usage\":{\"input_tokens\":1,\"output_tokens\":1}",
          "{\"usage\":{\"input_tokens\":1,\"output_tokens\":1}} trailing",
          "{\"a\":[1,2,}");

  static Stream<Arguments> everyApiAndAnswer() {
    List<Arguments> rows = new ArrayList<>();
    for (ApiKind kind : ApiKind.values()) {
      for (String answer : ANSWERS) {
        rows.add(Arguments.of(kind, answer));
      }
    }
    return rows.stream();
  }

  @ParameterizedTest(name = "{0}: {1}")
  @MethodSource("everyApiAndAnswer")
  void theViewGivesTheUsageTheWholeTreeGives(ApiKind kind, String answer) {
    byte[] bytes = answer.getBytes(StandardCharsets.UTF_8);
    Optional<JsonNode> tree = Json.parse(bytes);
    Optional<JsonNode> view = UsageView.of(ByteString.fromArray(bytes));
    assertEquals(tree.isPresent(), view.isPresent(), "JSON or not, the same verdict");
    assertEquals(usage(kind, tree), usage(kind, view));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "{\"content\":[],\"usage\":{\"input_tokens\":10,\"output_tokens\":5}} | 10 | 5",
        "{\"usage\":{\"input_tokens\":0,\"output_tokens\":0}}                  | 0  | 0",
      })
  void aReportedUsageIsReadEvenWhenZero(String answer, long input, long output) {
    JsonNode view = UsageView.of(answer.getBytes(StandardCharsets.UTF_8)).orElseThrow();
    assertEquals(
        new UsageReport.Reported(TokenUsage.ofTokens(input, output)),
        ApiKind.ANTHROPIC_MESSAGES.usageOfAnswer(view));
  }

  @Test
  void anAnswerWithoutUsageIsNotReportedNeverZero() {
    JsonNode view = UsageView.of("{\"content\":[]}".getBytes(StandardCharsets.UTF_8)).orElseThrow();
    assertTrue(
        ApiKind.ANTHROPIC_MESSAGES.usageOfAnswer(view) instanceof UsageReport.NotReported,
        "absent usage keeps the worst case");
  }

  @Test
  void theViewKeepsNothingOfTheContent() {
    JsonNode view =
        UsageView.of(
                ("{\"id\":\"m\",\"content\":[{\"type\":\"text\",\"text\":\"secret\"}],"
                        + "\"output\":[{\"type\":\"message\",\"content\":\"secret\"}],"
                        + "\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}")
                    .getBytes(StandardCharsets.UTF_8))
            .orElseThrow();
    assertFalse(view.toString().contains("secret"), view.toString());
    assertEquals(
        List.of("output", "usage"), iterable(view.fieldNames()), "only what the rules read");
  }

  private static List<String> iterable(java.util.Iterator<String> names) {
    List<String> out = new ArrayList<>();
    names.forEachRemaining(out::add);
    return out;
  }

  private static UsageReport usage(ApiKind kind, Optional<JsonNode> answer) {
    return answer.map(kind::usageOfAnswer).orElse(new UsageReport.NotReported("not JSON"));
  }
}
