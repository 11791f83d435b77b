package dev.spendgateway.policy.request;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.policy.catalog.ModelCatalog;
import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.catalog.ModelKind;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.cost.UnsizedContent;
import dev.spendgateway.policy.cost.WorstCaseEstimator;
import dev.spendgateway.policy.request.PolicyDecision.Allowed;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;

/**
 * Policy of {@code POST /openai/v1/responses}, which exists only for web search: the call must
 * offer exactly one web search tool, and nothing stateful (stored responses, conversations, prompt
 * templates, background runs) is reachable through it.
 */
final class OpenAiResponsesRules {
  static final String ROUTE = "/openai/v1/responses";

  /** The Responses API's generation fields (checked against the API reference). */
  static final Set<String> ALLOWED_FIELDS =
      Set.of(
          "model",
          "input",
          "instructions",
          "max_output_tokens",
          "max_tool_calls",
          "metadata",
          "parallel_tool_calls",
          "reasoning",
          "service_tier",
          "store",
          "stream",
          "stream_options",
          "temperature",
          "top_p",
          "top_logprobs",
          "text",
          "tool_choice",
          "tools",
          "truncation",
          "user",
          "safety_identifier",
          "prompt_cache_key",
          "include");

  static final Map<String, String> FORBIDDEN_FIELDS =
      Map.of(
          "background", "background runs are stored on OpenAI's side and outlive the reservation",
          "previous_response_id", "it reads a stored response; every call here is stateless",
          "conversation", "it reads and writes a stored conversation",
          "prompt", "stored prompt templates can carry tools the gateway cannot see");

  /** OpenAI's web search tool under its current and dated names. */
  static final Set<String> WEB_SEARCH_TOOL_TYPES =
      Set.of(
          "web_search",
          "web_search_2025_08_26",
          "web_search_preview",
          "web_search_preview_2025_03_11");

  private static final Set<String> WEB_SEARCH_TOOL_FIELDS =
      Set.of("type", "search_context_size", "user_location", "filters");

  /** What {@code include} may ask for: nothing that reads stored items or other tools' output. */
  static final Set<String> ALLOWED_INCLUDES =
      Set.of(
          "web_search_call.action.sources",
          "web_search_call.results",
          "reasoning.encrypted_content",
          "message.output_text.logprobs");

  private static final Set<String> TOOL_CHOICE_MODES = Set.of("auto", "none", "required");

  private static final Set<String> SERVICE_TIERS = Set.of("auto", "default", "flex");

  private final ModelCatalog catalog;
  private final PolicyLimits limits;
  private final WorstCaseEstimator estimator;

  OpenAiResponsesRules(ModelCatalog catalog, PolicyLimits limits) {
    this.catalog = catalog;
    this.limits = limits;
    this.estimator = WorstCaseEstimator.of(limits);
  }

  Allowed check(JsonNode json, long bodyBytes, LocalDate today) {
    ObjectNode body =
        BodyRules.checkEnvelope(json, bodyBytes, limits, ROUTE, FORBIDDEN_FIELDS, ALLOWED_FIELDS);
    List<String> warnings = new ArrayList<>();
    ModelInfo model =
        BodyRules.checkModel(
            body.get("model"), "model", catalog, Provider.OPENAI, ModelKind.CHAT, today, warnings);
    checkInput(body.get("input"));
    UnsizedContent unsized = ReferencedContent.openAiResponses(body, limits.urlContent());
    OptionalLong maxOutput =
        BodyRules.boundedWholeNumber(
            body, "max_output_tokens", 1, limits.openAiMaxTokens(), "max_tokens_cap");
    checkWebSearchTool(body.get("tools"));
    OptionalLong maxToolCalls =
        BodyRules.boundedWholeNumber(
            body, "max_tool_calls", 1, limits.webSearchMaxUses(), "web_search_max_uses");
    checkToolChoice(body.get("tool_choice"));
    checkIncludes(body.get("include"));
    BodyRules.checkOneOf(body, "service_tier", SERVICE_TIERS, "service_tier");
    boolean stream = BodyRules.streamFlag(body);

    // Absent limits are written in, so the call can never do more than was reserved.
    TopLevelRewrites upstream = new TopLevelRewrites(body);
    long outputBudget = maxOutput.orElse(limits.openAiMaxTokens());
    int webSearchUses = (int) maxToolCalls.orElse(limits.webSearchMaxUses());
    upstream.set("max_output_tokens", LongNode.valueOf(outputBudget));
    upstream.set("max_tool_calls", IntNode.valueOf(webSearchUses));
    OpenAiBodies.forceStoreFalse(upstream, warnings);
    return new Allowed(
        body,
        upstream.changes(),
        model.name(),
        model,
        estimator.chat(model, bodyBytes, unsized, outputBudget, 1, webSearchUses),
        stream,
        warnings);
  }

  /** A string is one turn; an array is the conversation, with no references to stored items. */
  private void checkInput(JsonNode input) {
    if (input != null && input.isTextual()) {
      return;
    }
    BodyRules.checkMessages(input, "input", limits);
    for (int i = 0; i < input.size(); i++) {
      if ("item_reference".equals(input.get(i).path("type").asText())) {
        throw Refusal.of(
            "stored_items",
            "input[" + i + "]",
            "input[" + i + "] references a stored item; send the item itself instead");
      }
    }
  }

  private void checkWebSearchTool(JsonNode tools) {
    if (tools == null || !tools.isArray() || tools.size() != 1) {
      throw Refusal.of(
          "web_search_required",
          "tools",
          ROUTE
              + " serves web search only: 'tools' must hold exactly one web search tool ("
              + String.join(", ", WEB_SEARCH_TOOL_TYPES)
              + ")");
    }
    JsonNode tool = tools.get(0);
    String type = tool.path("type").asText("");
    if (!WEB_SEARCH_TOOL_TYPES.contains(type)) {
      throw Refusal.of(
          "tools_web_search_only",
          "tools[0].type",
          "tools[0] has type '"
              + type
              + "'; the only tool the gateway allows is web search (functions, file search, code"
              + " interpreter, computer use, MCP, image generation and shell are refused)");
    }
    Iterator<String> keys = tool.fieldNames();
    while (keys.hasNext()) {
      String key = keys.next();
      if (!WEB_SEARCH_TOOL_FIELDS.contains(key)) {
        throw Refusal.of(
            "tools_web_search_only",
            "tools[0]." + key,
            "tools[0]." + key + " is not a web search setting the gateway supports");
      }
    }
  }

  private static void checkToolChoice(JsonNode choice) {
    if (choice == null || choice.isNull()) {
      return;
    }
    if (choice.isTextual() && TOOL_CHOICE_MODES.contains(choice.asText())) {
      return;
    }
    if (choice.isObject() && WEB_SEARCH_TOOL_TYPES.contains(choice.path("type").asText())) {
      return;
    }
    throw Refusal.of(
        "tool_choice",
        "tool_choice",
        "'tool_choice' may be auto, none, required or the web search tool; was " + choice);
  }

  private static void checkIncludes(JsonNode include) {
    if (include == null || include.isNull()) {
      return;
    }
    if (!include.isArray()) {
      throw Refusal.of("include_allow_list", "include", "field 'include' must be an array");
    }
    for (int i = 0; i < include.size(); i++) {
      String item = include.get(i).asText("");
      if (!ALLOWED_INCLUDES.contains(item)) {
        throw Refusal.of(
            "include_allow_list",
            "include[" + i + "]",
            "include["
                + i
                + "] '"
                + item
                + "' is not allowed; allowed: "
                + String.join(", ", new TreeSet<>(ALLOWED_INCLUDES)));
      }
    }
  }
}
