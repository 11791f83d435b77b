package dev.spendgateway.sim;

/**
 * Token usage the simulator reports. One provider-neutral record, mapped onto each wire format:
 *
 * <ul>
 *   <li>Anthropic: {@code input_tokens = inputTokens} (uncached input, as Anthropic counts it),
 *       {@code cache_read_input_tokens = cacheReadTokens}, {@code cache_creation_input_tokens =
 *       cacheWriteTokens}, {@code output_tokens = outputTokens}; {@code
 *       server_tool_use.web_search_requests = webSearches} when the request declares a web search
 *       tool.
 *   <li>OpenAI chat: {@code prompt_tokens = inputTokens + cacheReadTokens} (OpenAI's prompt count
 *       includes cached tokens), {@code prompt_tokens_details.cached_tokens = cacheReadTokens},
 *       {@code completion_tokens = outputTokens}, {@code total_tokens} the sum.
 *   <li>OpenAI responses: {@code input_tokens = inputTokens + cacheReadTokens}, {@code
 *       input_tokens_details.cached_tokens = cacheReadTokens}, {@code output_tokens}; {@code
 *       webSearches} {@code web_search_call} output items.
 *   <li>Transcription: {@code input_tokens}, {@code output_tokens}, {@code total_tokens}.
 * </ul>
 */
public record Usage(
    long inputTokens,
    long outputTokens,
    long cacheReadTokens,
    long cacheWriteTokens,
    int webSearches) {

  public Usage {
    if (inputTokens < 0
        || outputTokens < 0
        || cacheReadTokens < 0
        || cacheWriteTokens < 0
        || webSearches < 0) {
      throw new IllegalArgumentException("usage numbers must be >= 0");
    }
  }

  /** The defaults: small, round, easy to assert. */
  public static Usage defaults() {
    return new Usage(25, 15, 0, 0, 1);
  }

  public static Usage of(long inputTokens, long outputTokens) {
    return new Usage(inputTokens, outputTokens, 0, 0, 1);
  }

  public Usage withCache(long cacheReadTokens, long cacheWriteTokens) {
    return new Usage(inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, webSearches);
  }

  public Usage withWebSearches(int webSearches) {
    return new Usage(inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, webSearches);
  }

  /** OpenAI's prompt count, which includes cached tokens. */
  long openAiPromptTokens() {
    return inputTokens + cacheReadTokens;
  }
}
