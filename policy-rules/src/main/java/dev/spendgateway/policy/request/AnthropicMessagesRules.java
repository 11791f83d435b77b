package dev.spendgateway.policy.request;

import com.fasterxml.jackson.databind.JsonNode;
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
import java.util.Set;

/** Policy of {@code POST /anthropic/v1/messages}. */
final class AnthropicMessagesRules {
  static final String ROUTE = "/anthropic/v1/messages";

  /**
   * Every top-level field an ordinary SDK call may send without tools: the Messages API's
   * generation fields (checked against Anthropic's API reference), plus {@code tools}/{@code
   * tool_choice} for the web search tool only.
   */
  static final Set<String> ALLOWED_FIELDS =
      Set.of(
          "model",
          "messages",
          "max_tokens",
          "system",
          "metadata",
          "stop_sequences",
          "stream",
          "temperature",
          "top_p",
          "top_k",
          "thinking",
          "output_config",
          "output_format",
          "cache_control",
          "service_tier",
          "tools",
          "tool_choice");

  /** Fields that reach tools or code execution on our key, with the reason told to the caller. */
  static final Map<String, String> FORBIDDEN_FIELDS =
      Map.of(
          "mcp_servers", "MCP servers would run remote tools on the gateway's key",
          "container", "containers are the code execution sandbox",
          "context_management", "it edits tool results, and the only tool allowed is web search");

  /**
   * The one tool allowed: Anthropic's basic server-side web search. Later versions
   * (web_search_20260209 and on) add "dynamic filtering", in which Claude writes and runs code over
   * the results: that is code execution on our key, so they are refused.
   */
  static final Set<String> WEB_SEARCH_TOOL_TYPES = Set.of("web_search_20250305");

  static final String WEB_SEARCH_TOOL_NAME = "web_search";

  private static final Set<String> WEB_SEARCH_TOOL_FIELDS =
      Set.of(
          "type",
          "name",
          "max_uses",
          "allowed_domains",
          "blocked_domains",
          "user_location",
          "strict",
          "cache_control");

  /** Priority capacity is billed differently; only the standard tiers are priced in the catalog. */
  private static final Set<String> SERVICE_TIERS = Set.of("auto", "standard_only");

  private static final Set<String> TOOL_CHOICE_TYPES = Set.of("auto", "any", "none");

  /**
   * Cache writes are priced at the 5-minute rate; the 1-hour TTL costs twice the input price and
   * the usage report does not let us tell the two apart when settling.
   */
  private static final String REFUSED_CACHE_TTL = "1h";

  private final ModelCatalog catalog;
  private final PolicyLimits limits;
  private final WorstCaseEstimator estimator;

  AnthropicMessagesRules(ModelCatalog catalog, PolicyLimits limits) {
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
            body.get("model"),
            "model",
            catalog,
            Provider.ANTHROPIC,
            ModelKind.CHAT,
            today,
            warnings);
    BodyRules.checkMessages(body.get("messages"), "messages", limits);
    long maxTokens = checkMaxTokens(body);
    checkThinkingBudget(body, maxTokens);
    int webSearchUses = checkTools(body.get("tools"));
    checkToolChoice(body.get("tool_choice"), webSearchUses > 0);
    checkCacheTtl(body, "");
    UnsizedContent unsized = ReferencedContent.anthropic(body, limits.urlContent());
    BodyRules.checkOneOf(body, "service_tier", SERVICE_TIERS, "service_tier");
    boolean stream = BodyRules.streamFlag(body);
    return new Allowed(
        body,
        Map.of(),
        model.name(),
        model,
        estimator.chat(model, bodyBytes, unsized, maxTokens, 1, webSearchUses),
        stream,
        warnings);
  }

  /** Anthropic requires {@code max_tokens}; the reservation is exactly what it allows. */
  private long checkMaxTokens(ObjectNode body) {
    if (!body.hasNonNull("max_tokens")) {
      throw Refusal.of("max_tokens_required", "max_tokens", "field 'max_tokens' is required");
    }
    return BodyRules.boundedWholeNumber(
            body, "max_tokens", 1, limits.anthropicMaxTokens(), "max_tokens_cap")
        .getAsLong();
  }

  /**
   * Thinking tokens are output tokens inside {@code max_tokens}. A budget at or above it (allowed
   * with interleaved thinking) could bill past the reservation, so it is refused.
   */
  private static void checkThinkingBudget(ObjectNode body, long maxTokens) {
    JsonNode thinking = body.get("thinking");
    if (thinking == null
        || !thinking.isObject()
        || !"enabled".equals(thinking.path("type").asText())) {
      return;
    }
    JsonNode budget = thinking.get("budget_tokens");
    if (budget == null || !budget.canConvertToExactIntegral() || budget.asLong() >= maxTokens) {
      throw Refusal.of(
          "thinking_budget",
          "thinking.budget_tokens",
          "'thinking.budget_tokens' must be a whole number below max_tokens (" + maxTokens + ")");
    }
  }

  /** Returns the web searches the call may make (0 without the tool). */
  private int checkTools(JsonNode tools) {
    if (tools == null || tools.isNull()) {
      return 0;
    }
    if (!tools.isArray()) {
      throw Refusal.of("tools_web_search_only", "tools", "field 'tools' must be an array");
    }
    if (tools.size() > 1) {
      throw Refusal.of(
          "tools_web_search_only",
          "tools",
          "'tools' lists " + tools.size() + " tools; the only tool allowed is one web search tool");
    }
    if (tools.isEmpty()) {
      return 0;
    }
    return checkWebSearchTool(tools.get(0), "tools[0]");
  }

  private int checkWebSearchTool(JsonNode tool, String field) {
    String type = tool.path("type").asText("");
    if (!tool.isObject() || !WEB_SEARCH_TOOL_TYPES.contains(type)) {
      throw Refusal.of(
          "tools_web_search_only",
          field + ".type",
          field
              + " has type '"
              + type
              + "'; the only tool the gateway allows is web search (type "
              + String.join(", ", WEB_SEARCH_TOOL_TYPES)
              + "); custom tools, code execution, computer use, bash and text editor are refused");
    }
    if (!WEB_SEARCH_TOOL_NAME.equals(tool.path("name").asText())) {
      throw Refusal.of(
          "tools_web_search_only",
          field + ".name",
          field + ".name must be '" + WEB_SEARCH_TOOL_NAME + "'");
    }
    Iterator<String> keys = tool.fieldNames();
    while (keys.hasNext()) {
      String key = keys.next();
      if (!WEB_SEARCH_TOOL_FIELDS.contains(key)) {
        throw Refusal.of(
            "tools_web_search_only",
            field + "." + key,
            field + "." + key + " is not a web search setting the gateway supports");
      }
    }
    if (!tool.hasNonNull("max_uses")) {
      throw Refusal.of(
          "web_search_max_uses",
          field + ".max_uses",
          field
              + ".max_uses is required (1 to "
              + limits.webSearchMaxUses()
              + "): each search is paid for and reserved in advance");
    }
    return (int)
        BodyRules.boundedWholeNumber(
                (ObjectNode) tool,
                "max_uses",
                field + ".max_uses",
                1,
                limits.webSearchMaxUses(),
                "web_search_max_uses")
            .getAsLong();
  }

  private static void checkToolChoice(JsonNode choice, boolean webSearchOffered) {
    if (choice == null || choice.isNull()) {
      return;
    }
    String type = choice.path("type").asText("");
    if (choice.isObject() && TOOL_CHOICE_TYPES.contains(type)) {
      return;
    }
    if (choice.isObject()
        && "tool".equals(type)
        && webSearchOffered
        && WEB_SEARCH_TOOL_NAME.equals(choice.path("name").asText())) {
      return;
    }
    throw Refusal.of(
        "tool_choice",
        "tool_choice",
        "'tool_choice' may be auto, any, none, or the web search tool when it is offered; was "
            + choice);
  }

  /** Walks the body for {@code cache_control} blocks asking for the 1-hour TTL. */
  private static void checkCacheTtl(JsonNode node, String path) {
    if (node.isObject()) {
      Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> f = fields.next();
        String here = path.isEmpty() ? f.getKey() : path + "." + f.getKey();
        if ("cache_control".equals(f.getKey())
            && REFUSED_CACHE_TTL.equals(f.getValue().path("ttl").asText())) {
          throw Refusal.of(
              "cache_ttl",
              here + ".ttl",
              "'" + here + ".ttl' is 1h; only the default 5-minute cache is allowed");
        }
        checkCacheTtl(f.getValue(), here);
      }
    } else if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) {
        checkCacheTtl(node.get(i), path + "[" + i + "]");
      }
    }
  }
}
