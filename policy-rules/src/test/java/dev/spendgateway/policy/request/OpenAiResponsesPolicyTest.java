package dev.spendgateway.policy.request;

import static dev.spendgateway.policy.Fixtures.POLICY;
import static dev.spendgateway.policy.Fixtures.TODAY;
import static dev.spendgateway.policy.Fixtures.json;
import static dev.spendgateway.policy.Fixtures.sizeOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.policy.request.PolicyDecision.Allowed;
import dev.spendgateway.policy.request.PolicyDecision.Violation;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class OpenAiResponsesPolicyTest {
  private static final String SEARCH = "'tools':[{'type':'web_search'}]";
  private static final String BASE = "'model':'gpt-6.1-sol','input':'news today?'," + SEARCH;

  static Stream<Arguments> refusals() {
    return Stream.of(
        row("a body that is not an object", "null", "json_object", "body"),
        row("background runs", "{" + BASE + ",'background':true}", "forbidden_field", "background"),
        row(
            "a stored previous response",
            "{" + BASE + ",'previous_response_id':'resp_1'}",
            "forbidden_field",
            "previous_response_id"),
        row(
            "a stored conversation",
            "{" + BASE + ",'conversation':'conv_1'}",
            "forbidden_field",
            "conversation"),
        row(
            "a stored prompt template",
            "{" + BASE + ",'prompt':{'id':'pmpt_1'}}",
            "forbidden_field",
            "prompt"),
        row("an unknown field", "{" + BASE + ",'messages':[]}", "unknown_field", "messages"),
        row(
            "a model off the allow-list",
            "{'model':'o3','input':'x'," + SEARCH + "}",
            "model_allow_list",
            "model"),
        row("no input", "{'model':'gpt-6.1-sol'," + SEARCH + "}", "messages_count", "input"),
        row(
            "an empty input list",
            "{'model':'gpt-6.1-sol','input':[]," + SEARCH + "}",
            "messages_count",
            "input"),
        row(
            "thirteen input items",
            "{'model':'gpt-6.1-sol','input':"
                + AnthropicMessagesPolicyTest.messages(13)
                + ","
                + SEARCH
                + "}",
            "messages_count",
            "input"),
        row(
            "a reference to a stored item",
            "{'model':'gpt-6.1-sol','input':[{'role':'user','content':'x'},{'type':'item_reference','id':'msg_1'}],"
                + SEARCH
                + "}",
            "stored_items",
            "input[1]"),
        row(
            "max_output_tokens above 32000",
            "{" + BASE + ",'max_output_tokens':32001}",
            "max_tokens_cap",
            "max_output_tokens"),
        row(
            "no tools: the route is web search only",
            "{'model':'gpt-6.1-sol','input':'x'}",
            "web_search_required",
            "tools"),
        row(
            "two tools",
            "{'model':'gpt-6.1-sol','input':'x','tools':[{'type':'web_search'},{'type':'web_search'}]}",
            "web_search_required",
            "tools"),
        row(
            "a function tool",
            "{'model':'gpt-6.1-sol','input':'x','tools':[{'type':'function','name':'f'}]}",
            "tools_web_search_only",
            "tools[0].type"),
        row(
            "file search",
            "{'model':'gpt-6.1-sol','input':'x','tools':[{'type':'file_search','vector_store_ids':['v']}]}",
            "tools_web_search_only",
            "tools[0].type"),
        row(
            "code interpreter",
            "{'model':'gpt-6.1-sol','input':'x','tools':[{'type':'code_interpreter','container':{'type':'auto'}}]}",
            "tools_web_search_only",
            "tools[0].type"),
        row(
            "computer use",
            "{'model':'gpt-6.1-sol','input':'x','tools':[{'type':'computer_use_preview'}]}",
            "tools_web_search_only",
            "tools[0].type"),
        row(
            "an MCP server",
            "{'model':'gpt-6.1-sol','input':'x','tools':[{'type':'mcp','server_url':'https://x'}]}",
            "tools_web_search_only",
            "tools[0].type"),
        row(
            "web search with an unknown setting",
            "{'model':'gpt-6.1-sol','input':'x','tools':[{'type':'web_search','container':'c'}]}",
            "tools_web_search_only",
            "tools[0].container"),
        row(
            "nine tool calls",
            "{" + BASE + ",'max_tool_calls':9}",
            "web_search_max_uses",
            "max_tool_calls"),
        row(
            "tool_choice naming a function",
            "{" + BASE + ",'tool_choice':{'type':'function','name':'f'}}",
            "tool_choice",
            "tool_choice"),
        row(
            "tool_choice with an unknown mode",
            "{" + BASE + ",'tool_choice':'always'}",
            "tool_choice",
            "tool_choice"),
        row(
            "include of file search results",
            "{" + BASE + ",'include':['file_search_call.results']}",
            "include_allow_list",
            "include[0]"),
        row(
            "include of code interpreter output",
            "{"
                + BASE
                + ",'include':['web_search_call.action.sources','code_interpreter_call.outputs']}",
            "include_allow_list",
            "include[1]"),
        row(
            "include of stored input images",
            "{" + BASE + ",'include':['message.input_image.image_url']}",
            "include_allow_list",
            "include[0]"),
        row(
            "include that is not a list",
            "{" + BASE + ",'include':'reasoning.encrypted_content'}",
            "include_allow_list",
            "include"),
        row(
            "priority service tier",
            "{" + BASE + ",'service_tier':'priority'}",
            "service_tier",
            "service_tier"));
  }

  @ParameterizedTest(name = "{0} -> {2} on {3}")
  @MethodSource("refusals")
  void refusesWithTheRuleAndField(String sentence, JsonNode body, String rule, String field) {
    Violation v =
        assertInstanceOf(Violation.class, POLICY.openAiResponses(body, sizeOf(body), TODAY));
    assertEquals(rule, v.rule(), v.message());
    assertEquals(field, v.field(), v.message());
  }

  static Stream<Arguments> allowed() {
    return Stream.of(
        Arguments.of(
            "a plain web search call gets the caps written in", "{" + BASE + "}", 32_000, 8),
        Arguments.of(
            "every ordinary field",
            "{"
                + BASE
                + ",'instructions':'cite','max_output_tokens':2000,'max_tool_calls':3,"
                + "'metadata':{'k':'v'},'parallel_tool_calls':false,'reasoning':{'effort':'low'},"
                + "'service_tier':'flex','stream':true,'temperature':1,'top_p':1,"
                + "'text':{'format':{'type':'json_schema','name':'s','schema':{}}},"
                + "'tool_choice':'required','truncation':'auto','user':'u','safety_identifier':'s',"
                + "'prompt_cache_key':'k','include':['web_search_call.action.sources','reasoning.encrypted_content']}",
            2000,
            3),
        Arguments.of(
            "a dated preview tool with settings and forced choice",
            "{'model':'gpt-6.1-sol-mini','input':[{'role':'user','content':'x'}],"
                + "'tools':[{'type':'web_search_preview','search_context_size':'low',"
                + "'user_location':{'type':'approximate','country':'TR'}}],"
                + "'tool_choice':{'type':'web_search_preview'}}",
            32_000,
            8));
  }

  @ParameterizedTest(name = "{0}: {2} output tokens and {3} searches reserved")
  @MethodSource("allowed")
  void allowsWebSearchCalls(String sentence, String body, long output, int searches) {
    JsonNode node = json(body);
    Allowed a = assertInstanceOf(Allowed.class, POLICY.openAiResponses(node, sizeOf(node), TODAY));
    assertEquals(output, a.worstCase().outputTokensAssumed());
    assertEquals(searches, a.worstCase().webSearchUses());
    assertEquals(output, a.upstreamBody().get("max_output_tokens").asLong());
    assertEquals(searches, a.upstreamBody().get("max_tool_calls").asLong());
    assertFalse(a.upstreamBody().get("store").asBoolean());
  }

  @Test
  void searchesArePricedAndTheirResultsReservedAsInput() {
    Allowed a =
        assertInstanceOf(
            Allowed.class,
            POLICY.openAiResponses(
                json("{" + BASE + ",'max_output_tokens':1000,'max_tool_calls':2}"), 3, TODAY));
    // 1 body token + 2 x 4000 result tokens at $2/M, 1000 output at $10/M, 2 searches at $0.01
    assertEquals(8001, a.worstCase().inputTokensAssumed());
    assertEquals(
        CeilMicros.of(8001L * 2_000_000 + 1000L * 10_000_000) + 20_000, a.worstCase().micros());
  }

  /** Test-side rounding so the expectation is computed independently of the code under test. */
  static final class CeilMicros {
    static long of(long tokensTimesPricePerMillion) {
      return (tokensTimesPricePerMillion + 999_999) / 1_000_000;
    }
  }

  private static Arguments row(String sentence, String body, String rule, String field) {
    return Arguments.of(sentence, json(body), rule, field);
  }
}
