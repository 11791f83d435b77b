package dev.spendgateway.edge.e2e;

import com.anthropic.models.messages.MessageCreateParams;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.responses.ResponseCreateParams;
import dev.spendgateway.edge.testkit.TestGateway.Brand;

/**
 * The SDK requests the e2e tests start from: one short user message on a catalog model, the brand's
 * spend headers, and the output budget the test names (it sets the worst case held).
 */
final class SdkParams {
  private SdkParams() {}

  static MessageCreateParams.Builder claude(Brand brand, long maxTokens) {
    MessageCreateParams.Builder b =
        MessageCreateParams.builder()
            .model("claude-opus-5-5")
            .maxTokens(maxTokens)
            .addUserMessage("Say hello");
    brand.headerMap().forEach(b::putAdditionalHeader);
    return b;
  }

  static ChatCompletionCreateParams.Builder chat(Brand brand, long maxCompletionTokens) {
    ChatCompletionCreateParams.Builder b =
        ChatCompletionCreateParams.builder()
            .model("gpt-6.1-sol")
            .maxCompletionTokens(maxCompletionTokens)
            .addUserMessage("Say hello");
    brand.headerMap().forEach(b::putAdditionalHeader);
    return b;
  }

  /** A Responses call; a test adds the tools it needs. */
  static ResponseCreateParams.Builder responses(Brand brand, long maxOutputTokens) {
    ResponseCreateParams.Builder b =
        ResponseCreateParams.builder()
            .model("gpt-6.1-sol")
            .maxOutputTokens(maxOutputTokens)
            .input("latest pekko release");
    brand.headerMap().forEach(b::putAdditionalHeader);
    return b;
  }
}
