package dev.spendgateway.upstream.translate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.policy.cost.TokenUsage;
import dev.spendgateway.policy.cost.UsageParsers;
import dev.spendgateway.policy.cost.UsageReport;

/**
 * Translates an Anthropic Messages answer into an OpenAI {@code chat.completion}. Pure: the
 * creation time and the model name to report are passed in.
 *
 * <ul>
 *   <li>{@code id}: {@code chatcmpl-} + the Anthropic message id (traceable in Anthropic's
 *       console).
 *   <li>{@code choices[0].message.content}: the text blocks joined in order; thinking blocks are
 *       dropped (OpenAI chat has no place for them); {@code refusal} is null.
 *   <li>{@code finish_reason}: see {@link FinishReasons#toOpenAi}.
 *   <li>{@code usage}: {@code prompt_tokens = input + cache read + cache write} (OpenAI's prompt
 *       count includes cached tokens), {@code completion_tokens = output}, {@code
 *       prompt_tokens_details.cached_tokens = cache read}. When Anthropic reported no readable
 *       usage the field is left out — never a zero, which would read as a free call.
 * </ul>
 */
public final class MessagesToChat {
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  private MessagesToChat() {}

  /**
   * @param messagesResponse an Anthropic Messages answer ({@code type: "message"})
   * @param model the model name to report: the profile name the caller asked for, or the answering
   *     model, as the router chooses
   * @param createdEpochSeconds the {@code created} field (the router's clock, never read here)
   */
  public static ObjectNode translate(
      JsonNode messagesResponse, String model, long createdEpochSeconds) {
    ObjectNode out = JSON.objectNode();
    out.put("id", chatId(messagesResponse.path("id").asText("")));
    out.put("object", "chat.completion");
    out.put("created", createdEpochSeconds);
    out.put("model", model);
    ObjectNode choice = out.putArray("choices").addObject();
    choice.put("index", 0);
    ObjectNode message = choice.putObject("message");
    message.put("role", "assistant");
    message.put("content", text(messagesResponse.path("content")));
    message.putNull("refusal");
    choice.putNull("logprobs");
    String stopReason =
        messagesResponse.path("stop_reason").isTextual()
            ? messagesResponse.path("stop_reason").asText()
            : null;
    choice.put("finish_reason", FinishReasons.toOpenAi(stopReason));
    UsageReport usage = UsageParsers.anthropic(messagesResponse.get("usage"));
    if (usage instanceof UsageReport.Reported reported) {
      out.set("usage", usage(reported.usage()));
    }
    return out;
  }

  /** {@code chatcmpl-} + the Anthropic id, the same for the JSON and the streamed answer. */
  static String chatId(String anthropicId) {
    return "chatcmpl-" + (anthropicId.isEmpty() ? "anthropic" : anthropicId);
  }

  /** OpenAI usage from normalised Anthropic counts (shared with the chunk translator). */
  static ObjectNode usage(TokenUsage u) {
    long prompt = u.inputTokens() + u.cacheReadTokens() + u.cacheWriteTokens();
    ObjectNode usage = JSON.objectNode();
    usage.put("prompt_tokens", prompt);
    usage.put("completion_tokens", u.outputTokens());
    usage.put("total_tokens", prompt + u.outputTokens());
    usage.putObject("prompt_tokens_details").put("cached_tokens", u.cacheReadTokens());
    return usage;
  }

  private static String text(JsonNode content) {
    StringBuilder text = new StringBuilder();
    for (JsonNode block : content) {
      if ("text".equals(block.path("type").asText())) {
        text.append(block.path("text").asText(""));
      }
    }
    return text.toString();
  }
}
