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
   * Worst case of a chat-style call whose body is text only ({@link UnsizedContent#NONE}).
   *
   * @param bodyBytes size of the request body as received
   * @param maxOutputTokens output budget per choice (what the rewritten body allows)
   * @param choices OpenAI {@code n}; each choice can spend the whole output budget (1 elsewhere)
   * @param webSearchUses most web searches the rewritten body allows (0 without the tool)
   */
  public WorstCase chat(
      ModelInfo model, long bodyBytes, long maxOutputTokens, int choices, int webSearchUses) {
    return chat(model, bodyBytes, UnsizedContent.NONE, maxOutputTokens, choices, webSearchUses);
  }

  /**
   * Worst case of a chat-style call. The input is the body's bytes / {@code bytes-per-token}, plus
   * {@code inline-image-tokens} per inline image, at most the model's context window (a provider
   * refuses, unbilled, a call whose input does not fit it). A call holding content only the context
   * window bounds (an inline document, content fetched from a URL) reserves that whole window. The
   * input never goes below the byte count, whatever the window says.
   *
   * @param unsized what the walk of the conversation found that its bytes do not bound
   */
  public WorstCase chat(
      ModelInfo model,
      long bodyBytes,
      UnsizedContent unsized,
      long maxOutputTokens,
      int choices,
      int webSearchUses) {
    checkInputs(bodyBytes, maxOutputTokens, choices, webSearchUses);
    long byBytes = CostCalculator.ceilDiv(bodyBytes, limits.bytesPerToken());
    long input;
    if (unsized.wholeContext()) {
      input = model.contextLimit();
    } else {
      long images = Math.multiplyExact(unsized.inlineImages(), limits.inlineImageTokens());
      long withImages = Math.addExact(byBytes, images);
      input = model.contextLimit() > 0 ? Math.min(withImages, model.contextLimit()) : withImages;
    }
    return priced(model, Math.max(byBytes, input), maxOutputTokens, choices, webSearchUses);
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
