package dev.spendgateway.policy.request;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
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
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/** Policy of {@code POST /openai/v1/chat/completions}. No tools at all here. */
final class OpenAiChatRules {
  static final String ROUTE = "/openai/v1/chat/completions";

  /**
   * Every generation field of the Chat Completions API an SDK call without tools may send (checked
   * against the API reference); {@code tool_choice} only as "none".
   */
  static final Set<String> ALLOWED_FIELDS =
      Set.of(
          "model",
          "messages",
          "max_tokens",
          "max_completion_tokens",
          "temperature",
          "top_p",
          "n",
          "stop",
          "seed",
          "user",
          "safety_identifier",
          "metadata",
          "stream",
          "stream_options",
          "response_format",
          "reasoning_effort",
          "verbosity",
          "frequency_penalty",
          "presence_penalty",
          "logit_bias",
          "logprobs",
          "top_logprobs",
          "prompt_cache_key",
          "service_tier",
          "modalities",
          "store",
          "tool_choice");

  static final Map<String, String> FORBIDDEN_FIELDS =
      Map.of(
          "tools", "function calling would let a caller drive tools through the gateway's key",
          "functions", "legacy function calling is a tool call",
          "function_call", "legacy function calling is a tool call",
          "parallel_tool_calls", "tool calls are not allowed on chat completions",
          "web_search_options", "web search goes through /openai/v1/responses only",
          "audio", "audio output is billed per audio token, which the estimate does not cover",
          "prediction", "rejected prediction tokens are billed beyond the output budget");

  /** Priority processing is billed above the catalog price; flex is cheaper, so it is safe. */
  private static final Set<String> SERVICE_TIERS = Set.of("auto", "default", "flex");

  private final ModelCatalog catalog;
  private final PolicyLimits limits;
  private final WorstCaseEstimator estimator;

  OpenAiChatRules(ModelCatalog catalog, PolicyLimits limits) {
    this.catalog = catalog;
    this.limits = limits;
    this.estimator = WorstCaseEstimator.of(limits);
  }

  Allowed check(JsonNode json, long bodyBytes, LocalDate today) {
    ObjectNode body =
        BodyRules.checkEnvelope(json, bodyBytes, limits, ROUTE, FORBIDDEN_FIELDS, ALLOWED_FIELDS);
    checkToolChoice(body.get("tool_choice"));
    List<String> warnings = new ArrayList<>();
    ModelInfo model =
        BodyRules.checkModel(
            body.get("model"), "model", catalog, Provider.OPENAI, ModelKind.CHAT, today, warnings);
    BodyRules.checkMessages(body.get("messages"), "messages", limits);
    UnsizedContent unsized = ReferencedContent.openAiChat(body, limits.urlContent());
    OptionalLong maxTokens =
        BodyRules.boundedWholeNumber(
            body, "max_tokens", 1, limits.openAiMaxTokens(), "max_tokens_cap");
    OptionalLong maxCompletionTokens =
        BodyRules.boundedWholeNumber(
            body, "max_completion_tokens", 1, limits.openAiMaxTokens(), "max_tokens_cap");
    int choices =
        (int) BodyRules.boundedWholeNumber(body, "n", 1, limits.maxChoices(), "choices").orElse(1);
    checkTextOnly(body.get("modalities"));
    BodyRules.checkOneOf(body, "service_tier", SERVICE_TIERS, "service_tier");
    boolean stream = BodyRules.streamFlag(body);

    TopLevelRewrites upstream = new TopLevelRewrites(body);
    long outputBudget = writeOutputBudget(upstream, maxTokens, maxCompletionTokens);
    OpenAiBodies.forceStoreFalse(upstream, warnings);
    if (stream) {
      askForStreamUsage(upstream);
    }
    return new Allowed(
        body,
        upstream.changes(),
        model.name(),
        model,
        estimator.chat(model, bodyBytes, unsized, outputBudget, choices, 0),
        stream,
        warnings);
  }

  /**
   * The output budget the reservation assumes. With neither field the model could write up to its
   * own limit, so the gateway writes its cap into {@code max_completion_tokens}: the reservation
   * and the call then agree.
   */
  private long writeOutputBudget(
      TopLevelRewrites upstream, OptionalLong maxTokens, OptionalLong maxCompletionTokens) {
    if (maxTokens.isEmpty() && maxCompletionTokens.isEmpty()) {
      upstream.set("max_completion_tokens", LongNode.valueOf(limits.openAiMaxTokens()));
      return limits.openAiMaxTokens();
    }
    return Math.max(maxTokens.orElse(0), maxCompletionTokens.orElse(0));
  }

  private static void checkToolChoice(JsonNode choice) {
    if (choice == null || choice.isNull() || "none".equals(choice.asText(null))) {
      return;
    }
    throw Refusal.of(
        "tool_choice",
        "tool_choice",
        "'tool_choice' may only be \"none\" on " + ROUTE + ": tools are not allowed here");
  }

  /** Audio output is billed per audio token and is not estimated; text is the only modality. */
  private static void checkTextOnly(JsonNode modalities) {
    if (modalities == null || modalities.isNull()) {
      return;
    }
    boolean textOnly =
        modalities.isArray() && modalities.size() == 1 && "text".equals(modalities.get(0).asText());
    if (!textOnly) {
      throw Refusal.of(
          "modalities", "modalities", "'modalities' may only be [\"text\"]; was " + modalities);
    }
  }

  /**
   * A streamed answer reports usage only when asked; without it the call would keep its worst case.
   */
  private static void askForStreamUsage(TopLevelRewrites upstream) {
    JsonNode options = upstream.current("stream_options");
    if (options != null && !options.isNull() && !options.isObject()) {
      throw Refusal.of(
          "stream_options", "stream_options", "field 'stream_options' must be an object");
    }
    // A copy of the caller's small options object (never the caller's tree itself).
    ObjectNode streamOptions =
        options != null && options.isObject()
            ? ((ObjectNode) options).deepCopy()
            : JsonNodeFactory.instance.objectNode();
    streamOptions.put("include_usage", true);
    upstream.set("stream_options", streamOptions);
  }
}
