package dev.spendgateway.policy.cost;

import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.request.PolicyLimits;

/**
 * The reservation made before a provider is called: one input token per {@code bytes-per-token}
 * bytes of request body, plus the whole output budget, plus every allowed web search at its per-use
 * price and with its results read back as input. Every assumed input token is priced at the dearest
 * input rate (fresh, cache write or cache read), because the provider, not the caller, decides
 * which one applies.
 *
 * <p>Audio has no tokens to count before the call; its duration is bounded from the file size at a
 * conservative (low) bitrate: a real file at a higher bitrate is shorter than assumed.
 */
public record WorstCaseEstimator(PolicyLimits limits) {
  private static final long BITS_PER_BYTE = 8L;

  public static WorstCaseEstimator of(PolicyLimits limits) {
    return new WorstCaseEstimator(limits);
  }

  /**
   * Worst case of a chat-style call.
   *
   * @param bodyBytes size of the request body as received
   * @param maxOutputTokens output budget per choice (what the rewritten body allows)
   * @param choices OpenAI {@code n}; each choice can spend the whole output budget (1 elsewhere)
   * @param webSearchUses most web searches the rewritten body allows (0 without the tool)
   */
  public WorstCase chat(
      ModelInfo model, long bodyBytes, long maxOutputTokens, int choices, int webSearchUses) {
    checkInputs(bodyBytes, maxOutputTokens, choices, webSearchUses);
    return priced(
        model,
        CostCalculator.ceilDiv(bodyBytes, limits.bytesPerToken()),
        maxOutputTokens,
        choices,
        webSearchUses);
  }

  /**
   * Worst case of a chat-style call whose input includes content the provider fetches from a URL
   * (an image or a document the body only names). Its size is unknown before the call, so the input
   * is reserved at the model's whole context window, the one bound known in advance (or at the body
   * estimate, should that ever be larger); outputs and searches as in {@link #chat}.
   */
  public WorstCase chatWithFetchedContent(
      ModelInfo model, long bodyBytes, long maxOutputTokens, int choices, int webSearchUses) {
    checkInputs(bodyBytes, maxOutputTokens, choices, webSearchUses);
    return priced(
        model,
        Math.max(model.contextLimit(), CostCalculator.ceilDiv(bodyBytes, limits.bytesPerToken())),
        maxOutputTokens,
        choices,
        webSearchUses);
  }

  private static void checkInputs(
      long bodyBytes, long maxOutputTokens, int choices, int webSearchUses) {
    if (bodyBytes < 0 || maxOutputTokens < 0 || choices < 1 || webSearchUses < 0) {
      throw new IllegalArgumentException("worst case inputs out of range");
    }
  }

  private WorstCase priced(
      ModelInfo model, long promptTokens, long maxOutputTokens, int choices, int webSearchUses) {
    long inputTokens =
        Math.addExact(
            promptTokens, Math.multiplyExact(webSearchUses, limits.webSearchInputTokensPerUse()));
    long outputTokens = Math.multiplyExact(maxOutputTokens, choices);
    long perMillion =
        Math.addExact(
            Math.multiplyExact(inputTokens, model.prices().dearestInputPerMillion()),
            Math.multiplyExact(outputTokens, model.prices().outputPerMillion()));
    long micros =
        Math.addExact(
            CostCalculator.tokenMicros(perMillion),
            Math.multiplyExact(webSearchUses, limits.webSearchMicrosPerUse()));
    return new WorstCase(micros, inputTokens, outputTokens, webSearchUses, 0);
  }

  /** Just the reservation of {@link #chat}. */
  public long worstCaseMicros(
      ModelInfo model, long bodyBytes, long maxOutputTokens, int choices, int webSearchUses) {
    return chat(model, bodyBytes, maxOutputTokens, choices, webSearchUses).micros();
  }

  /** Worst case of a transcription: the file's duration at the lowest assumed bitrate. */
  public WorstCase transcription(ModelInfo model, long fileBytes) {
    if (fileBytes < 0) {
      throw new IllegalArgumentException("file size cannot be negative");
    }
    long seconds =
        CostCalculator.ceilDiv(
            Math.multiplyExact(fileBytes, BITS_PER_BYTE), limits.audioMinBitsPerSecond());
    return new WorstCase(CostCalculator.audioMicros(seconds, model.prices()), 0, 0, 0, seconds);
  }
}
