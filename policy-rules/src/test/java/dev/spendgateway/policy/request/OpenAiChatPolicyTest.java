package dev.spendgateway.policy.request;

import static dev.spendgateway.policy.Fixtures.POLICY;
import static dev.spendgateway.policy.Fixtures.TODAY;
import static dev.spendgateway.policy.Fixtures.json;
import static dev.spendgateway.policy.Fixtures.sizeOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.policy.request.PolicyDecision.Allowed;
import dev.spendgateway.policy.request.PolicyDecision.Violation;
import java.time.LocalDate;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class OpenAiChatPolicyTest {
  private static final String MSG = "'messages':[{'role':'user','content':'hi'}]";
  private static final String BASE = "'model':'gpt-6.1-sol'," + MSG;

  static Stream<Arguments> refusals() {
    return Stream.of(
        row("a body that is not an object", "'text'", "json_object", "body"),
        row(
            "function tools",
            "{" + BASE + ",'tools':[{'type':'function','function':{'name':'f'}}]}",
            "forbidden_field",
            "tools"),
        row(
            "legacy functions",
            "{" + BASE + ",'functions':[{'name':'f'}]}",
            "forbidden_field",
            "functions"),
        row(
            "legacy function_call",
            "{" + BASE + ",'function_call':'auto'}",
            "forbidden_field",
            "function_call"),
        row(
            "parallel_tool_calls",
            "{" + BASE + ",'parallel_tool_calls':true}",
            "forbidden_field",
            "parallel_tool_calls"),
        row(
            "web search options belong to the responses route",
            "{" + BASE + ",'web_search_options':{}}",
            "forbidden_field",
            "web_search_options"),
        row(
            "audio output",
            "{" + BASE + ",'audio':{'voice':'alloy','format':'mp3'}}",
            "forbidden_field",
            "audio"),
        row(
            "predicted outputs",
            "{" + BASE + ",'prediction':{'type':'content','content':'x'}}",
            "forbidden_field",
            "prediction"),
        row("an unknown field", "{" + BASE + ",'background':true}", "unknown_field", "background"),
        row(
            "tool_choice auto",
            "{" + BASE + ",'tool_choice':'auto'}",
            "tool_choice",
            "tool_choice"),
        row(
            "tool_choice naming a function",
            "{" + BASE + ",'tool_choice':{'type':'function','function':{'name':'f'}}}",
            "tool_choice",
            "tool_choice"),
        row("no model", "{" + MSG + "}", "model_required", "model"),
        row(
            "a model off the allow-list",
            "{'model':'gpt-4o'," + MSG + "}",
            "model_allow_list",
            "model"),
        row(
            "a Claude model on the OpenAI route",
            "{'model':'claude-opus-5-5'," + MSG + "}",
            "model_allow_list",
            "model"),
        row(
            "the transcription model on the chat route",
            "{'model':'gpt-6-transcribe'," + MSG + "}",
            "model_allow_list",
            "model"),
        row("a retired model", "{'model':'gpt-4.1'," + MSG + "}", "model_retired", "model"),
        row("no messages", "{'model':'gpt-6.1-sol'}", "messages_count", "messages"),
        row(
            "thirteen messages",
            "{'model':'gpt-6.1-sol','messages':" + AnthropicMessagesPolicyTest.messages(13) + "}",
            "messages_count",
            "messages"),
        row(
            "max_tokens above 32000",
            "{" + BASE + ",'max_tokens':32001}",
            "max_tokens_cap",
            "max_tokens"),
        row(
            "max_completion_tokens above 32000",
            "{" + BASE + ",'max_completion_tokens':40000}",
            "max_tokens_cap",
            "max_completion_tokens"),
        row(
            "max_completion_tokens zero",
            "{" + BASE + ",'max_completion_tokens':0}",
            "max_tokens_cap",
            "max_completion_tokens"),
        row("n above the choice cap", "{" + BASE + ",'n':5}", "choices", "n"),
        row("n zero", "{" + BASE + ",'n':0}", "choices", "n"),
        row(
            "audio modality",
            "{" + BASE + ",'modalities':['text','audio']}",
            "modalities",
            "modalities"),
        row(
            "priority service tier",
            "{" + BASE + ",'service_tier':'priority'}",
            "service_tier",
            "service_tier"),
        row(
            "stream_options that is not an object",
            "{" + BASE + ",'stream':true,'stream_options':true}",
            "stream_options",
            "stream_options"),
        row("stream that is not a boolean", "{" + BASE + ",'stream':1}", "stream_type", "stream"));
  }

  @ParameterizedTest(name = "{0} -> {2} on {3}")
  @MethodSource("refusals")
  void refusesWithTheRuleAndField(String sentence, JsonNode body, String rule, String field) {
    Violation v =
        assertInstanceOf(Violation.class, POLICY.openAiChatCompletions(body, sizeOf(body), TODAY));
    assertEquals(rule, v.rule(), v.message());
    assertEquals(field, v.field(), v.message());
    assertEquals(400, v.httpStatus());
  }

  @Test
  void aBodyOverFourMebibytesIs413() {
    Violation v =
        assertInstanceOf(
            Violation.class,
            POLICY.openAiChatCompletions(json("{" + BASE + "}"), 5L * 1024 * 1024, TODAY));
    assertEquals(413, v.httpStatus());
    assertEquals("body_size", v.rule());
  }

  static Stream<Arguments> allowed() {
    return Stream.of(
        Arguments.of("a plain SDK call assumes the 32000 cap", "{" + BASE + "}", 32_000, 1),
        Arguments.of(
            "every ordinary generation field",
            "{"
                + BASE
                + ",'temperature':0.3,'top_p':1,'stop':['x'],'seed':7,'user':'u',"
                + "'metadata':{'k':'v'},'response_format':{'type':'json_schema','json_schema':"
                + "{'name':'s','strict':true,'schema':{'type':'object'}}},'reasoning_effort':'low',"
                + "'frequency_penalty':0,'presence_penalty':0,'logprobs':true,'top_logprobs':2,"
                + "'logit_bias':{'50256':-100},'verbosity':'low','safety_identifier':'h',"
                + "'prompt_cache_key':'k','service_tier':'auto','modalities':['text'],"
                + "'tool_choice':'none','max_completion_tokens':500}",
            500,
            1),
        Arguments.of("legacy max_tokens", "{" + BASE + ",'max_tokens':700}", 700, 1),
        Arguments.of(
            "both limits take the larger",
            "{" + BASE + ",'max_tokens':700,'max_completion_tokens':900}",
            900,
            1),
        Arguments.of("n of 3 triples the output", "{" + BASE + ",'max_tokens':100,'n':3}", 300, 3),
        Arguments.of(
            "json_object mode",
            "{" + BASE + ",'response_format':{'type':'json_object'}}",
            32_000,
            1));
  }

  @ParameterizedTest(name = "{0}: {2} output tokens reserved")
  @MethodSource("allowed")
  void allowsOrdinaryCallsAndForcesStoreFalse(
      String sentence, String body, long outputAssumed, int choices) {
    JsonNode node = json(body);
    Allowed a =
        assertInstanceOf(Allowed.class, POLICY.openAiChatCompletions(node, sizeOf(node), TODAY));
    assertEquals(outputAssumed, a.worstCase().outputTokensAssumed());
    assertFalse(a.upstreamBody().get("store").asBoolean());
    assertEquals(0, a.worstCase().webSearchUses());
    assertFalse(a.stream());
    assertFalse(node.has("store"), "the caller's tree is not modified");
  }

  @Test
  void anAbsentLimitIsWrittenIntoTheUpstreamBody() {
    Allowed a =
        assertInstanceOf(
            Allowed.class, POLICY.openAiChatCompletions(json("{" + BASE + "}"), 300, TODAY));
    assertEquals(32_000, a.upstreamBody().get("max_completion_tokens").asLong());
    // 100 input tokens at $2/M + 32000 output at $10/M = 200 + 320000 micros
    assertEquals(320_200, a.worstCase().micros());
  }

  @Test
  void aStreamedCallAsksForUsage() {
    JsonNode body =
        json("{" + BASE + ",'stream':true,'stream_options':{'include_obfuscation':false}}");
    Allowed a = assertInstanceOf(Allowed.class, POLICY.openAiChatCompletions(body, 100, TODAY));
    assertTrue(a.stream());
    assertTrue(a.upstreamBody().at("/stream_options/include_usage").asBoolean());
    assertFalse(a.upstreamBody().at("/stream_options/include_obfuscation").asBoolean());
    JsonNode bare = json("{" + BASE + ",'stream':true}");
    Allowed b = assertInstanceOf(Allowed.class, POLICY.openAiChatCompletions(bare, 100, TODAY));
    assertTrue(b.upstreamBody().at("/stream_options/include_usage").asBoolean());
  }

  @Test
  void storeTrueIsOverriddenWithAWarning() {
    JsonNode body = json("{" + BASE + ",'store':true}");
    Allowed a = assertInstanceOf(Allowed.class, POLICY.openAiChatCompletions(body, 100, TODAY));
    assertFalse(a.upstreamBody().get("store").asBoolean());
    assertTrue(a.warnings().get(0).contains("store"));
  }

  @Test
  void aDeprecatedModelPassesWithAWarningNamingItsEnd() {
    JsonNode body = json("{'model':'gpt-6-sol'," + MSG + "}");
    Allowed a = assertInstanceOf(Allowed.class, POLICY.openAiChatCompletions(body, 100, TODAY));
    assertEquals(1, a.warnings().size());
    assertTrue(a.warnings().get(0).contains("2027-02-28"), a.warnings().get(0));
  }

  @Test
  void aDeprecatedModelPastItsEndIsRefusedAsRetired() {
    JsonNode body = json("{'model':'gpt-6-sol'," + MSG + "}");
    Violation v =
        assertInstanceOf(
            Violation.class, POLICY.openAiChatCompletions(body, 100, LocalDate.of(2027, 3, 1)));
    assertEquals("model_retired", v.rule());
    assertTrue(v.message().contains("gpt-6.1-sol"), "the message suggests live models");
  }

  private static Arguments row(String sentence, String body, String rule, String field) {
    return Arguments.of(sentence, json(body), rule, field);
  }
}
