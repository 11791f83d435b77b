package dev.spendgateway.policy.cost;

/**
 * What a provider reported it used for one call, normalised across providers.
 *
 * <p>{@code inputTokens} are uncached input tokens only: Anthropic already reports them that way;
 * for OpenAI the extractor subtracts {@code cached_tokens} from {@code prompt_tokens} so no token
 * is charged twice. A call whose usage was not reported has no {@code TokenUsage} at all (see
 * {@link UsageReport}); zero tokens is a real, reported zero.
 *
 * @param inputTokens uncached input tokens
 * @param outputTokens output tokens (including reasoning / thinking tokens)
 * @param cacheWriteTokens tokens written to the prompt cache (Anthropic
 *     cache_creation_input_tokens)
 * @param cacheReadTokens tokens read from the prompt cache
 * @param webSearchCalls web search tool uses billed per use
 * @param audioSeconds seconds of audio transcribed (0 for text models)
 */
public record TokenUsage(
    long inputTokens,
    long outputTokens,
    long cacheWriteTokens,
    long cacheReadTokens,
    long webSearchCalls,
    long audioSeconds) {

  public TokenUsage {
    if (inputTokens < 0
        || outputTokens < 0
        || cacheWriteTokens < 0
        || cacheReadTokens < 0
        || webSearchCalls < 0
        || audioSeconds < 0) {
      throw new IllegalArgumentException("usage counts cannot be negative");
    }
  }

  public static TokenUsage ofTokens(long inputTokens, long outputTokens) {
    return new TokenUsage(inputTokens, outputTokens, 0, 0, 0, 0);
  }
}
