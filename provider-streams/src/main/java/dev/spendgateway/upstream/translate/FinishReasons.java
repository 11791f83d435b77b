package dev.spendgateway.upstream.translate;

/**
 * Anthropic {@code stop_reason} → OpenAI {@code finish_reason}, shared by the JSON and SSE paths.
 */
public final class FinishReasons {
  private FinishReasons() {}

  /**
   * {@code end_turn}, {@code stop_sequence}, {@code pause_turn} → {@code stop}; {@code max_tokens}
   * and {@code model_context_window_exceeded} → {@code length}; {@code refusal} → {@code
   * content_filter}; {@code tool_use} → {@code tool_calls}; null → null; anything newer → {@code
   * stop} (the answer did end, and SDKs reject unknown values).
   */
  public static String toOpenAi(String anthropicStopReason) {
    if (anthropicStopReason == null) {
      return null;
    }
    return switch (anthropicStopReason) {
      case "max_tokens", "model_context_window_exceeded" -> "length";
      case "refusal" -> "content_filter";
      case "tool_use" -> "tool_calls";
      default -> "stop";
    };
  }
}
