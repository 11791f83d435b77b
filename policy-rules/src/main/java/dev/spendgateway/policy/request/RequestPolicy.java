package dev.spendgateway.policy.request;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.policy.catalog.ModelCatalog;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The request policy of every provider route (policy-rules/README.md lists the rules): pure, one
 * method per route. Each returns either the body to send upstream (a rewritten copy) with its
 * worst-case cost, or a {@link PolicyDecision.Violation} naming the rule and the field. {@code
 * today} is a parameter (UTC date of the call) so lifecycle rules never read a clock.
 */
public final class RequestPolicy {

  /**
   * Anthropic betas that change nothing about reach or price. Everything else (code execution,
   * computer use, MCP, files, skills, the 1-hour cache, 1M context at premium prices...) is
   * refused.
   */
  static final List<String> ALLOWED_ANTHROPIC_BETA_PREFIXES =
      List.of(
          "prompt-caching-",
          "interleaved-thinking-",
          "structured-outputs-",
          "token-efficient-tools-",
          "fine-grained-tool-streaming-",
          "output-128k-");

  private final ModelCatalog catalog;
  private final PolicyLimits limits;
  private final AnthropicMessagesRules anthropic;
  private final OpenAiChatRules openAiChat;
  private final OpenAiResponsesRules openAiResponses;
  private final TranscriptionRules transcription;

  public RequestPolicy(ModelCatalog catalog, PolicyLimits limits) {
    this.catalog = Objects.requireNonNull(catalog, "catalog");
    this.limits = Objects.requireNonNull(limits, "limits");
    this.anthropic = new AnthropicMessagesRules(catalog, limits);
    this.openAiChat = new OpenAiChatRules(catalog, limits);
    this.openAiResponses = new OpenAiResponsesRules(catalog, limits);
    this.transcription = new TranscriptionRules(catalog, limits);
  }

  /** The model catalog the policy checks models against (its lifecycle warning window included). */
  public ModelCatalog catalog() {
    return catalog;
  }

  public PolicyLimits limits() {
    return limits;
  }

  /** {@code POST /anthropic/v1/messages}. {@code bodyBytes} is the size of the body as received. */
  public PolicyDecision anthropicMessages(JsonNode body, long bodyBytes, LocalDate today) {
    try {
      return anthropic.check(body, bodyBytes, today);
    } catch (Refusal r) {
      return r.violation();
    }
  }

  /** {@code POST /openai/v1/chat/completions}. */
  public PolicyDecision openAiChatCompletions(JsonNode body, long bodyBytes, LocalDate today) {
    try {
      return openAiChat.check(body, bodyBytes, today);
    } catch (Refusal r) {
      return r.violation();
    }
  }

  /** {@code POST /openai/v1/responses} (web search only). */
  public PolicyDecision openAiResponses(JsonNode body, long bodyBytes, LocalDate today) {
    try {
      return openAiResponses.check(body, bodyBytes, today);
    } catch (Refusal r) {
      return r.violation();
    }
  }

  /** {@code POST /openai/v1/audio/transcriptions}, from the parts the edge read off the form. */
  public TranscriptionDecision openAiTranscription(TranscriptionForm form, LocalDate today) {
    try {
      return transcription.check(form, today);
    } catch (Refusal r) {
      return r.violation();
    }
  }

  /**
   * The {@code anthropic-beta} header of a Messages call (comma-separated; null when absent). Betas
   * are how code execution, computer use and MCP are switched on, so only known-harmless ones pass.
   */
  public Optional<PolicyDecision.Violation> anthropicBetaHeader(String headerValue) {
    if (headerValue == null || headerValue.isBlank()) {
      return Optional.empty();
    }
    return Arrays.stream(headerValue.split(","))
        .map(String::trim)
        .filter(beta -> !beta.isEmpty())
        .filter(beta -> ALLOWED_ANTHROPIC_BETA_PREFIXES.stream().noneMatch(beta::startsWith))
        .findFirst()
        .map(
            beta ->
                Refusal.of(
                        "anthropic_beta",
                        "anthropic-beta",
                        "anthropic-beta value '"
                            + beta
                            + "' is not allowed: betas can switch on tools or premium pricing;"
                            + " allowed prefixes: "
                            + String.join(", ", ALLOWED_ANTHROPIC_BETA_PREFIXES))
                    .violation());
  }
}
