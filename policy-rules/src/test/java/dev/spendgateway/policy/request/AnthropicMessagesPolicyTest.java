package dev.spendgateway.policy.request;

import static dev.spendgateway.policy.Fixtures.POLICY;
import static dev.spendgateway.policy.Fixtures.TODAY;
import static dev.spendgateway.policy.Fixtures.json;
import static dev.spendgateway.policy.Fixtures.sizeOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.policy.request.PolicyDecision.Allowed;
import dev.spendgateway.policy.request.PolicyDecision.Violation;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

class AnthropicMessagesPolicyTest {
  private static final String MSG = "'messages':[{'role':'user','content':'hi'}]";
  private static final String BASE = "'model':'claude-opus-5-5','max_tokens':1000," + MSG;
  private static final String SEARCH =
      "{'type':'web_search_20250305','name':'web_search','max_uses':5}";

  static Stream<Arguments> refusals() {
    return Stream.of(
        row("a body that is not an object", "[1,2]", "json_object", "body"),
        row(
            "mcp_servers reach remote tools",
            "{" + BASE + ",'mcp_servers':[]}",
            "forbidden_field",
            "mcp_servers"),
        row(
            "container is the code sandbox",
            "{" + BASE + ",'container':'c1'}",
            "forbidden_field",
            "container"),
        row(
            "context_management edits tool results",
            "{" + BASE + ",'context_management':{}}",
            "forbidden_field",
            "context_management"),
        row(
            "an unknown top-level field",
            "{" + BASE + ",'speed':'fast'}",
            "unknown_field",
            "speed"),
        row(
            "betas in the body are unknown",
            "{" + BASE + ",'betas':['x']}",
            "unknown_field",
            "betas"),
        row("no model", "{'max_tokens':10," + MSG + "}", "model_required", "model"),
        row(
            "model is not a string",
            "{'model':5,'max_tokens':10," + MSG + "}",
            "model_required",
            "model"),
        row(
            "a Claude model off the allow-list",
            "{'model':'claude-3-opus','max_tokens':10," + MSG + "}",
            "model_allow_list",
            "model"),
        row(
            "an OpenAI model on the Anthropic route",
            "{'model':'gpt-6.1-sol','max_tokens':10," + MSG + "}",
            "model_allow_list",
            "model"),
        row(
            "no messages",
            "{'model':'claude-opus-5-5','max_tokens':10}",
            "messages_count",
            "messages"),
        row(
            "messages is not an array",
            "{'model':'claude-opus-5-5','max_tokens':10,'messages':'hi'}",
            "messages_count",
            "messages"),
        row(
            "zero messages",
            "{'model':'claude-opus-5-5','max_tokens':10,'messages':[]}",
            "messages_count",
            "messages"),
        row(
            "thirteen messages",
            "{'model':'claude-opus-5-5','max_tokens':10,'messages':" + messages(13) + "}",
            "messages_count",
            "messages"),
        row(
            "max_tokens missing",
            "{'model':'claude-opus-5-5'," + MSG + "}",
            "max_tokens_required",
            "max_tokens"),
        row(
            "max_tokens above 64000",
            "{'model':'claude-opus-5-5','max_tokens':64001," + MSG + "}",
            "max_tokens_cap",
            "max_tokens"),
        row(
            "max_tokens zero",
            "{'model':'claude-opus-5-5','max_tokens':0," + MSG + "}",
            "max_tokens_cap",
            "max_tokens"),
        row(
            "max_tokens not a whole number",
            "{'model':'claude-opus-5-5','max_tokens':'many'," + MSG + "}",
            "max_tokens_cap",
            "max_tokens"),
        row(
            "max_tokens beyond a long",
            "{'model':'claude-opus-5-5','max_tokens':99999999999999999999," + MSG + "}",
            "max_tokens_cap",
            "max_tokens"),
        row(
            "thinking budget at max_tokens",
            "{" + BASE + ",'thinking':{'type':'enabled','budget_tokens':1000}}",
            "thinking_budget",
            "thinking.budget_tokens"),
        row(
            "thinking enabled without a budget",
            "{" + BASE + ",'thinking':{'type':'enabled'}}",
            "thinking_budget",
            "thinking.budget_tokens"),
        row(
            "a custom tool",
            "{" + BASE + ",'tools':[{'name':'get_weather','input_schema':{}}]}",
            "tools_web_search_only",
            "tools[0].type"),
        row(
            "the code execution tool",
            "{" + BASE + ",'tools':[{'type':'code_execution_20250825','name':'code_execution'}]}",
            "tools_web_search_only",
            "tools[0].type"),
        row(
            "the computer use tool",
            "{" + BASE + ",'tools':[{'type':'computer_20250124','name':'computer'}]}",
            "tools_web_search_only",
            "tools[0].type"),
        row(
            "the bash tool",
            "{" + BASE + ",'tools':[{'type':'bash_20250124','name':'bash'}]}",
            "tools_web_search_only",
            "tools[0].type"),
        row(
            "the text editor tool",
            "{"
                + BASE
                + ",'tools':[{'type':'text_editor_20250728','name':'str_replace_based_edit_tool'}]}",
            "tools_web_search_only",
            "tools[0].type"),
        row(
            "the web fetch tool",
            "{" + BASE + ",'tools':[{'type':'web_fetch_20250910','name':'web_fetch'}]}",
            "tools_web_search_only",
            "tools[0].type"),
        row(
            "a tool that is not an object",
            "{" + BASE + ",'tools':['web_search']}",
            "tools_web_search_only",
            "tools[0].type"),
        row("tools not an array", "{" + BASE + ",'tools':{}}", "tools_web_search_only", "tools"),
        row(
            "two web search tools",
            "{" + BASE + ",'tools':[" + SEARCH + "," + SEARCH + "]}",
            "tools_web_search_only",
            "tools"),
        row(
            "web search renamed",
            "{" + BASE + ",'tools':[{'type':'web_search_20250305','name':'search','max_uses':2}]}",
            "tools_web_search_only",
            "tools[0].name"),
        row(
            "web search with an unknown setting",
            "{"
                + BASE
                + ",'tools':[{'type':'web_search_20250305','name':'web_search','max_uses':2,'defer_loading':true}]}",
            "tools_web_search_only",
            "tools[0].defer_loading"),
        row(
            "web search without max_uses",
            "{" + BASE + ",'tools':[{'type':'web_search_20250305','name':'web_search'}]}",
            "web_search_max_uses",
            "tools[0].max_uses"),
        row(
            "web search with 9 uses",
            "{"
                + BASE
                + ",'tools':[{'type':'web_search_20250305','name':'web_search','max_uses':9}]}",
            "web_search_max_uses",
            "tools[0].max_uses"),
        row(
            "tool_choice naming another tool",
            "{" + BASE + ",'tools':[" + SEARCH + "],'tool_choice':{'type':'tool','name':'bash'}}",
            "tool_choice",
            "tool_choice"),
        row(
            "tool_choice naming web search that is not offered",
            "{" + BASE + ",'tool_choice':{'type':'tool','name':'web_search'}}",
            "tool_choice",
            "tool_choice"),
        row(
            "tool_choice as a string",
            "{" + BASE + ",'tool_choice':'auto'}",
            "tool_choice",
            "tool_choice"),
        row(
            "a 1-hour cache in a message",
            "{'model':'claude-opus-5-5','max_tokens':10,'messages':[{'role':'user','content':[{'type':'text','text':'x','cache_control':{'type':'ephemeral','ttl':'1h'}}]}]}",
            "cache_ttl",
            "messages[0].content[0].cache_control.ttl"),
        row(
            "a 1-hour cache on the system prompt",
            "{"
                + BASE
                + ",'system':[{'type':'text','text':'s','cache_control':{'type':'ephemeral','ttl':'1h'}}]}",
            "cache_ttl",
            "system[0].cache_control.ttl"),
        row(
            "priority service tier",
            "{" + BASE + ",'service_tier':'priority'}",
            "service_tier",
            "service_tier"),
        row(
            "stream that is not a boolean",
            "{" + BASE + ",'stream':'yes'}",
            "stream_type",
            "stream"));
  }

  @ParameterizedTest(name = "{0} -> {2} on {3}")
  @MethodSource("refusals")
  void refusesWithTheRuleAndField(String sentence, JsonNode body, String rule, String field) {
    Violation v =
        assertInstanceOf(Violation.class, POLICY.anthropicMessages(body, sizeOf(body), TODAY));
    assertEquals(rule, v.rule(), v.message());
    assertEquals(field, v.field(), v.message());
    assertEquals(400, v.httpStatus());
    assertTrue(v.message().contains("rule " + rule), v.message());
  }

  @Test
  void aBodyOverFourMebibytesIs413BeforeAnythingElse() {
    Violation v =
        assertInstanceOf(
            Violation.class, POLICY.anthropicMessages(json("[]"), 4L * 1024 * 1024 + 1, TODAY));
    assertEquals("body_size", v.rule());
    assertEquals(413, v.httpStatus());
  }

  static Stream<Arguments> allowed() {
    return Stream.of(
        Arguments.of("a plain SDK call", "{" + BASE + "}", 0),
        Arguments.of(
            "every ordinary generation field",
            "{"
                + BASE
                + ",'system':'be brief','temperature':0.2,'top_p':0.9,'top_k':40,"
                + "'stop_sequences':['END'],'metadata':{'user_id':'u1'},'stream':false,"
                + "'service_tier':'auto','output_config':{'effort':'low'}}",
            0),
        Arguments.of(
            "thinking inside max_tokens",
            "{" + BASE + ",'thinking':{'type':'enabled','budget_tokens':999}}",
            0),
        Arguments.of("adaptive thinking", "{" + BASE + ",'thinking':{'type':'adaptive'}}", 0),
        Arguments.of("an empty tool list", "{" + BASE + ",'tools':[]}", 0),
        Arguments.of(
            "web search with 5 uses and forced choice",
            "{"
                + BASE
                + ",'tools':["
                + SEARCH
                + "],'tool_choice':{'type':'tool','name':'web_search'}}",
            5),
        Arguments.of(
            "web search with domain filters and auto choice",
            "{"
                + BASE
                + ",'tools':[{'type':'web_search_20250305','name':'web_search','max_uses':8,"
                + "'allowed_domains':['a.com'],'user_location':{'type':'approximate'}}],"
                + "'tool_choice':{'type':'auto'}}",
            8),
        Arguments.of(
            "a 5-minute cache breakpoint",
            "{'model':'claude-opus-5-5','max_tokens':10,'cache_control':{'type':'ephemeral','ttl':'5m'},"
                + "'messages':[{'role':'user','content':[{'type':'text','text':'x','cache_control':{'type':'ephemeral'}}]}]}",
            0),
        Arguments.of(
            "twelve messages",
            "{'model':'claude-haiku-5-5','max_tokens':10,'messages':" + messages(12) + "}",
            0));
  }

  @ParameterizedTest(name = "{0} is allowed with {2} web searches reserved")
  @MethodSource("allowed")
  void allowsOrdinaryCalls(String sentence, String body, int searches) {
    JsonNode node = json(body);
    Allowed a =
        assertInstanceOf(Allowed.class, POLICY.anthropicMessages(node, sizeOf(node), TODAY));
    assertEquals(node, a.upstreamBody(), "Anthropic bodies are forwarded unchanged");
    assertEquals(searches, a.worstCase().webSearchUses());
    assertTrue(a.warnings().isEmpty());
  }

  @Test
  void theReservationIsBodyBytesOverThreePlusTheWholeOutputBudget() {
    JsonNode body = json("{" + BASE + "}");
    Allowed a = assertInstanceOf(Allowed.class, POLICY.anthropicMessages(body, 3000, TODAY));
    assertEquals(1000, a.worstCase().inputTokensAssumed());
    assertEquals(1000, a.worstCase().outputTokensAssumed());
    // 1000 input at the dearest input rate (cache write $5/M) + 1000 output at $20/M
    assertEquals(5_000 + 20_000, a.worstCase().micros());
    assertEquals("claude-opus-5-5", a.model());
  }

  @Test
  void streamIsReported() {
    JsonNode body = json("{" + BASE + ",'stream':true}");
    Allowed a = assertInstanceOf(Allowed.class, POLICY.anthropicMessages(body, 100, TODAY));
    assertTrue(a.stream());
  }

  @ParameterizedTest(name = "anthropic-beta ''{0}'' allowed={1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "                                                   | true",
        "prompt-caching-2024-07-31                          | true",
        "interleaved-thinking-2025-05-14, output-128k-2025-02-19 | true",
        "code-execution-2025-08-25                          | false",
        "computer-use-2025-01-24                            | false",
        "mcp-client-2025-04-04                              | false",
        "files-api-2025-04-14                               | false",
        "extended-cache-ttl-2025-04-11                      | false",
        "context-1m-2025-08-07                              | false",
        "prompt-caching-2024-07-31,skills-2025-10-02        | false",
      })
  void betaHeadersThatEnableToolsAreRefused(String header, boolean allowed) {
    var v = POLICY.anthropicBetaHeader(header);
    assertEquals(allowed, v.isEmpty());
    v.ifPresent(violation -> assertEquals("anthropic_beta", violation.rule()));
    // The message names the header, so a caller knows which of its headers to fix.
    v.ifPresent(
        violation ->
            assertTrue(
                violation.message().startsWith("anthropic-beta value '"), violation.message()));
  }

  private static Arguments row(String sentence, String body, String rule, String field) {
    return Arguments.of(sentence, json(body), rule, field);
  }

  static String messages(int n) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < n; i++) {
      b.append(i == 0 ? "" : ",").append("{'role':'").append(i % 2 == 0 ? "user" : "assistant");
      b.append("','content':'m").append(i).append("'}");
    }
    return b.append("]").toString();
  }
}
