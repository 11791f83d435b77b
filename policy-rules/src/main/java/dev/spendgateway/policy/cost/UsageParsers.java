package dev.spendgateway.policy.cost;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Optional;

/**
 * Reads what a provider reported it used, from each provider's JSON shape, into one {@link
 * TokenUsage}. A missing or unreadable usage is {@link UsageReport.NotReported} — never a zero,
 * which would settle a call the provider did bill at $0.
 */
public final class UsageParsers {
  private UsageParsers() {}

  /**
   * Anthropic {@code usage} (a Messages answer, or the usage of a {@code message_start} / {@code
   * message_delta} event). {@code input_tokens} already excludes cache tokens, so the three input
   * counts are added, never subtracted. Web searches come from {@code
   * server_tool_use.web_search_requests}.
   */
  public static UsageReport anthropic(JsonNode usage) {
    return guarded(() -> readAnthropic(usage));
  }

  private static UsageReport readAnthropic(JsonNode usage) {
    if (!isObject(usage)) {
      return notReported("anthropic answer has no usage object");
    }
    Optional<Long> input = count(usage, "input_tokens");
    Optional<Long> output = count(usage, "output_tokens");
    if (input.isEmpty() || output.isEmpty()) {
      return notReported("anthropic usage lacks input_tokens or output_tokens");
    }
    return reported(
        new TokenUsage(
            input.get(),
            output.get(),
            optionalCount(usage, "cache_creation_input_tokens"),
            optionalCount(usage, "cache_read_input_tokens"),
            optionalCount(usage.path("server_tool_use"), "web_search_requests"),
            0));
  }

  /**
   * A streamed Anthropic answer: {@code message_start} carries the input counts, {@code
   * message_delta} the cumulative output (and, in newer versions, final input and tool counts).
   * Each count is the larger of the two, since both are running totals of the same call.
   */
  public static UsageReport anthropicStream(
      JsonNode messageStartUsage, JsonNode messageDeltaUsage) {
    return guarded(() -> readAnthropicStream(messageStartUsage, messageDeltaUsage));
  }

  private static UsageReport readAnthropicStream(
      JsonNode messageStartUsage, JsonNode messageDeltaUsage) {
    UsageReport start = anthropic(messageStartUsage);
    if (!(start instanceof UsageReport.Reported s)) {
      return start;
    }
    if (!isObject(messageDeltaUsage) || count(messageDeltaUsage, "output_tokens").isEmpty()) {
      return notReported("anthropic stream ended without a final message_delta usage");
    }
    return reported(
        new TokenUsage(
            Math.max(s.usage().inputTokens(), optionalCount(messageDeltaUsage, "input_tokens")),
            Math.max(s.usage().outputTokens(), optionalCount(messageDeltaUsage, "output_tokens")),
            Math.max(
                s.usage().cacheWriteTokens(),
                optionalCount(messageDeltaUsage, "cache_creation_input_tokens")),
            Math.max(
                s.usage().cacheReadTokens(),
                optionalCount(messageDeltaUsage, "cache_read_input_tokens")),
            Math.max(
                s.usage().webSearchCalls(),
                optionalCount(messageDeltaUsage.path("server_tool_use"), "web_search_requests")),
            0));
  }

  /**
   * OpenAI Chat Completions {@code usage} (the answer's, or the final chunk's when streaming with
   * {@code include_usage}). {@code prompt_tokens} INCLUDES {@code
   * prompt_tokens_details.cached_tokens}: the cached part is charged at the cache-read price and
   * the rest as input, never both.
   */
  public static UsageReport openAiChat(JsonNode usage) {
    if (!isObject(usage)) {
      return notReported("openai answer has no usage object");
    }
    return guarded(
        () ->
            openAiTokens(usage, "prompt_tokens", "completion_tokens", "prompt_tokens_details", 0));
  }

  /**
   * An OpenAI Responses object (the answer, or the {@code response} of a {@code response.completed}
   * event). {@code input_tokens} includes {@code input_tokens_details.cached_tokens}; web searches
   * are the {@code web_search_call} items of {@code output}.
   */
  public static UsageReport openAiResponses(JsonNode response) {
    if (!isObject(response)) {
      return notReported("openai response is not an object");
    }
    JsonNode body = isObject(response.get("response")) ? response.get("response") : response;
    JsonNode usage = body.get("usage");
    if (!isObject(usage)) {
      return notReported("openai response has no usage object");
    }
    long searches = 0;
    for (JsonNode item : body.path("output")) {
      if ("web_search_call".equals(item.path("type").asText())) {
        searches++;
      }
    }
    long webSearches = searches;
    return guarded(
        () ->
            openAiTokens(
                usage, "input_tokens", "output_tokens", "input_tokens_details", webSearches));
  }

  /**
   * An OpenAI transcription answer. Per-minute models report {@code usage: {type: "duration",
   * seconds}}; {@code verbose_json} also carries a top-level {@code duration}. Seconds are rounded
   * up. Plain {@code text}, {@code srt} and {@code vtt} answers carry no usage: pass null and the
   * call keeps its worst case.
   */
  public static UsageReport transcription(JsonNode response) {
    if (!isObject(response)) {
      return notReported("transcription answer is not JSON (text, srt or vtt carry no usage)");
    }
    JsonNode usage = response.get("usage");
    if (isObject(usage) && "duration".equals(usage.path("type").asText())) {
      return seconds(usage.get("seconds"));
    }
    if (response.has("duration")) {
      return seconds(response.get("duration"));
    }
    return notReported("transcription answer reports no duration");
  }

  private static UsageReport seconds(JsonNode value) {
    if (value == null
        || !value.isNumber()
        || !hasDecimalValue(value)
        || value.decimalValue().signum() < 0) {
      return notReported("transcription duration is not a non-negative number");
    }
    BigDecimal rounded = value.decimalValue().setScale(0, RoundingMode.CEILING);
    if (rounded.compareTo(LARGEST_COUNT) > 0) {
      return notReported("transcription duration is too large to be real");
    }
    long seconds = rounded.longValueExact();
    return new UsageReport.Reported(new TokenUsage(0, 0, 0, 0, 0, seconds));
  }

  private static UsageReport openAiTokens(
      JsonNode usage, String inputKey, String outputKey, String detailsKey, long searches) {
    Optional<Long> input = count(usage, inputKey);
    Optional<Long> output = count(usage, outputKey);
    if (input.isEmpty() || output.isEmpty()) {
      return notReported("openai usage lacks " + inputKey + " or " + outputKey);
    }
    long cached = optionalCount(usage.path(detailsKey), "cached_tokens");
    if (cached > input.get()) {
      throw new MalformedUsage("cached_tokens above " + inputKey);
    }
    return reported(new TokenUsage(input.get() - cached, output.get(), 0, cached, searches, 0));
  }

  /** A non-negative integer count, or empty when absent or null. */
  private static Optional<Long> count(JsonNode node, String key) {
    JsonNode value = node.get(key);
    if (value == null || value.isNull()) {
      return Optional.empty();
    }
    // canConvertToExactIntegral is false for NaN and infinities (a lenient parser's), so no float
    // test is needed.
    if (!value.isNumber()
        || !value.canConvertToExactIntegral()
        || value.decimalValue().signum() < 0) {
      throw new MalformedUsage(key + " is not a non-negative integer");
    }
    BigDecimal exact = value.decimalValue();
    if (exact.compareTo(LARGEST_COUNT) > 0) {
      // 1e30 tokens is no real call; it is unreadable, like any other broken count.
      throw new MalformedUsage(key + " is too large to be a real count");
    }
    return Optional.of(exact.longValueExact());
  }

  /**
   * The largest count read as such; anything above does not fit a {@code long} and is malformed.
   */
  private static final BigDecimal LARGEST_COUNT = BigDecimal.valueOf(Long.MAX_VALUE);

  /** NaN and infinities (which a lenient parser may produce) have no exact decimal value. */
  private static boolean hasDecimalValue(JsonNode value) {
    try {
      value.decimalValue();
      return true;
    } catch (NumberFormatException e) {
      return false;
    }
  }

  private static long optionalCount(JsonNode node, String key) {
    return isObject(node) ? count(node, key).orElse(0L) : 0L;
  }

  private static boolean isObject(JsonNode node) {
    return node != null && node.isObject();
  }

  private interface Reader {
    UsageReport read();
  }

  /** Runs a reader; a count that is present but malformed makes the whole usage unreported. */
  private static UsageReport guarded(Reader reader) {
    try {
      return reader.read();
    } catch (MalformedUsage e) {
      return notReported("malformed usage: " + e.getMessage());
    }
  }

  private static UsageReport reported(TokenUsage usage) {
    return new UsageReport.Reported(usage);
  }

  private static UsageReport notReported(String reason) {
    return new UsageReport.NotReported(reason);
  }

  /** Thrown inside this class only, turned into NotReported at its boundary. */
  private static final class MalformedUsage extends RuntimeException {
    MalformedUsage(String message) {
      super(message, null, false, false);
    }
  }
}
