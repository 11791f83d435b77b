package dev.spendgateway.policy.cost;

import static dev.spendgateway.policy.Fixtures.json;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.policy.cost.UsageReport.NotReported;
import dev.spendgateway.policy.cost.UsageReport.Reported;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class UsageParsersTest {

  static Stream<Arguments> reported() {
    return Stream.of(
        row(
            "anthropic plain usage",
            UsageParsers::anthropic,
            "{'input_tokens':12,'output_tokens':30}",
            usage(12, 30, 0, 0, 0, 0)),
        row(
            "anthropic cache tokens are added, not subtracted from input",
            UsageParsers::anthropic,
            "{'input_tokens':12,'output_tokens':30,'cache_creation_input_tokens':1000,'cache_read_input_tokens':2000}",
            usage(12, 30, 1000, 2000, 0, 0)),
        row(
            "anthropic null cache fields count as zero",
            UsageParsers::anthropic,
            "{'input_tokens':1,'output_tokens':2,'cache_creation_input_tokens':null,'server_tool_use':null}",
            usage(1, 2, 0, 0, 0, 0)),
        row(
            "anthropic web searches come from server_tool_use",
            UsageParsers::anthropic,
            "{'input_tokens':5,'output_tokens':6,'server_tool_use':{'web_search_requests':3}}",
            usage(5, 6, 0, 0, 3, 0)),
        row(
            "openai chat cached tokens are carved out of prompt tokens",
            UsageParsers::openAiChat,
            "{'prompt_tokens':1000,'completion_tokens':50,'total_tokens':1050,'prompt_tokens_details':{'cached_tokens':800}}",
            usage(200, 50, 0, 800, 0, 0)),
        row(
            "openai chat without details",
            UsageParsers::openAiChat,
            "{'prompt_tokens':10,'completion_tokens':5}",
            usage(10, 5, 0, 0, 0, 0)),
        row(
            "openai chat reasoning tokens are already in completion tokens",
            UsageParsers::openAiChat,
            "{'prompt_tokens':10,'completion_tokens':500,'completion_tokens_details':{'reasoning_tokens':400}}",
            usage(10, 500, 0, 0, 0, 0)),
        row(
            "openai responses counts web_search_call items",
            UsageParsers::openAiResponses,
            "{'output':[{'type':'web_search_call'},{'type':'message'},{'type':'web_search_call'}],"
                + "'usage':{'input_tokens':900,'input_tokens_details':{'cached_tokens':100},'output_tokens':70}}",
            usage(800, 70, 0, 100, 2, 0)),
        row(
            "openai responses inside a response.completed event",
            UsageParsers::openAiResponses,
            "{'type':'response.completed','response':{'output':[{'type':'web_search_call'}],"
                + "'usage':{'input_tokens':9,'output_tokens':7}}}",
            usage(9, 7, 0, 0, 1, 0)),
        row(
            "transcription duration usage",
            UsageParsers::transcription,
            "{'text':'merhaba','usage':{'type':'duration','seconds':42}}",
            usage(0, 0, 0, 0, 0, 42)),
        row(
            "verbose_json duration rounds up",
            UsageParsers::transcription,
            "{'text':'x','duration':12.01}",
            usage(0, 0, 0, 0, 0, 13)),
        row(
            "a reported zero is a real zero",
            UsageParsers::openAiChat,
            "{'prompt_tokens':0,'completion_tokens':0}",
            usage(0, 0, 0, 0, 0, 0)));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("reported")
  void readsEachProviderShape(
      String sentence, Function<JsonNode, UsageReport> parser, JsonNode node, TokenUsage expected) {
    assertEquals(expected, assertInstanceOf(Reported.class, parser.apply(node)).usage());
  }

  static Stream<Arguments> notReported() {
    return Stream.of(
        row("anthropic without usage", UsageParsers::anthropic, "null", null),
        row("anthropic missing output_tokens", UsageParsers::anthropic, "{'input_tokens':3}", null),
        row(
            "anthropic negative count",
            UsageParsers::anthropic,
            "{'input_tokens':-3,'output_tokens':1}",
            null),
        row(
            "anthropic fractional count",
            UsageParsers::anthropic,
            "{'input_tokens':1.5,'output_tokens':1}",
            null),
        row(
            "anthropic malformed cache count",
            UsageParsers::anthropic,
            "{'input_tokens':1,'output_tokens':1,'cache_read_input_tokens':'x'}",
            null),
        row("openai chat usage null (a mid-stream chunk)", UsageParsers::openAiChat, "null", null),
        row(
            "openai chat missing completion tokens",
            UsageParsers::openAiChat,
            "{'prompt_tokens':3}",
            null),
        row(
            "openai chat cached above prompt",
            UsageParsers::openAiChat,
            "{'prompt_tokens':3,'completion_tokens':1,'prompt_tokens_details':{'cached_tokens':4}}",
            null),
        row("openai responses not an object", UsageParsers::openAiResponses, "[]", null),
        row(
            "openai responses without usage (cut stream)",
            UsageParsers::openAiResponses,
            "{'output':[]}",
            null),
        row(
            "openai responses missing output tokens",
            UsageParsers::openAiResponses,
            "{'usage':{'input_tokens':1}}",
            null),
        row("transcription as plain text", UsageParsers::transcription, "'hello'", null),
        row(
            "transcription billed by tokens",
            UsageParsers::transcription,
            "{'usage':{'type':'tokens','input_tokens':5}}",
            null),
        row(
            "transcription negative duration",
            UsageParsers::transcription,
            "{'duration':-1}",
            null),
        row(
            "transcription duration as text",
            UsageParsers::transcription,
            "{'duration':'12'}",
            null),
        row(
            "anthropic count of 1e30",
            UsageParsers::anthropic,
            "{'input_tokens':1e30,'output_tokens':1}",
            null),
        row(
            "anthropic count of 10^30 written out",
            UsageParsers::anthropic,
            "{'input_tokens':1000000000000000000000000000000,'output_tokens':1}",
            null),
        row(
            "anthropic cache count one above a long",
            UsageParsers::anthropic,
            "{'input_tokens':1,'output_tokens':1,'cache_read_input_tokens':9223372036854775808}",
            null),
        row(
            "openai chat prompt of 1e30",
            UsageParsers::openAiChat,
            "{'prompt_tokens':1e30,'completion_tokens':1}",
            null),
        row(
            "openai responses output of 1e30",
            UsageParsers::openAiResponses,
            "{'usage':{'input_tokens':1,'output_tokens':1e30}}",
            null),
        row(
            "transcription duration of 1e30 seconds",
            UsageParsers::transcription,
            "{'duration':1e30}",
            null),
        row(
            "transcription usage seconds of 1e30",
            UsageParsers::transcription,
            "{'usage':{'type':'duration','seconds':1e30}}",
            null));
  }

  @ParameterizedTest(name = "{0} is not reported")
  @MethodSource("notReported")
  void missingOrMalformedUsageIsNotReportedNeverZero(
      String sentence, Function<JsonNode, UsageReport> parser, JsonNode node, TokenUsage unused) {
    assertInstanceOf(NotReported.class, parser.apply(node));
  }

  @Test
  void aStreamedAnthropicAnswerTakesTheLargerOfStartAndDelta() {
    JsonNode start = json("{'input_tokens':500,'output_tokens':1,'cache_read_input_tokens':100}");
    JsonNode delta = json("{'output_tokens':320,'server_tool_use':{'web_search_requests':2}}");
    assertEquals(
        usage(500, 320, 0, 100, 2, 0),
        assertInstanceOf(Reported.class, UsageParsers.anthropicStream(start, delta)).usage());
  }

  @Test
  void aStreamedAnthropicAnswerWithoutItsDeltaIsNotReported() {
    JsonNode start = json("{'input_tokens':500,'output_tokens':1}");
    assertInstanceOf(NotReported.class, UsageParsers.anthropicStream(start, null));
    assertInstanceOf(NotReported.class, UsageParsers.anthropicStream(null, start));
    assertInstanceOf(
        NotReported.class, UsageParsers.anthropicStream(start, json("{'output_tokens':-1}")));
  }

  private static TokenUsage usage(long in, long out, long cw, long cr, long search, long audio) {
    return new TokenUsage(in, out, cw, cr, search, audio);
  }

  private static Arguments row(
      String sentence, Function<JsonNode, UsageReport> parser, String body, TokenUsage expected) {
    return Arguments.of(sentence, parser, json(body), expected);
  }
}
