package dev.spendgateway.policy.cost;

/**
 * The most a call can cost, reserved before the provider is called, with the assumptions that
 * produced it (logged and shown in refusals so an operator can see why a reservation was large).
 *
 * @param micros the reservation, in micro-dollars
 * @param inputTokensAssumed input tokens assumed: body bytes / bytes-per-token (the model's whole
 *     context window when the provider fetches content from a URL) plus the allowance for web
 *     search results read back
 * @param outputTokensAssumed output tokens assumed: the whole output budget times the choice count
 * @param webSearchUses web searches assumed (the allowed maximum)
 * @param audioSecondsAssumed seconds of audio assumed for a transcription (0 for chat)
 */
public record WorstCase(
    long micros,
    long inputTokensAssumed,
    long outputTokensAssumed,
    long webSearchUses,
    long audioSecondsAssumed) {

  public WorstCase {
    if (micros < 0
        || inputTokensAssumed < 0
        || outputTokensAssumed < 0
        || webSearchUses < 0
        || audioSecondsAssumed < 0) {
      throw new IllegalArgumentException("worst case parts cannot be negative");
    }
  }

  /**
   * Whether a reported usage stays inside these assumptions. When it does, its actual cost is never
   * above {@link #micros()} (the property test holds the estimator to that).
   */
  public boolean covers(TokenUsage usage) {
    return usage.inputTokens() + usage.cacheWriteTokens() + usage.cacheReadTokens()
            <= inputTokensAssumed
        && usage.outputTokens() <= outputTokensAssumed
        && usage.webSearchCalls() <= webSearchUses
        && usage.audioSeconds() <= audioSecondsAssumed;
  }
}
