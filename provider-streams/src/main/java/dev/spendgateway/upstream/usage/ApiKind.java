package dev.spendgateway.upstream.usage;

import dev.spendgateway.policy.catalog.Provider;
import java.util.Optional;

/**
 * The provider APIs whose answers carry usage, each with its {@link UsageExtractor}. The usage
 * document shape, streamed or not, is what {@code UsageParsers} in policy-rules reads:
 *
 * <ul>
 *   <li>{@link #ANTHROPIC_MESSAGES}: the {@code usage} object;
 *   <li>{@link #OPENAI_CHAT_COMPLETIONS}: the {@code usage} object;
 *   <li>{@link #OPENAI_RESPONSES}: the whole {@code response} object (usage under {@code usage}).
 * </ul>
 */
public enum ApiKind {
  ANTHROPIC_MESSAGES(Provider.ANTHROPIC, "/v1/messages", AnthropicMessagesUsage.INSTANCE),
  OPENAI_CHAT_COMPLETIONS(Provider.OPENAI, "/v1/chat/completions", OpenAiChatUsage.INSTANCE),
  OPENAI_RESPONSES(Provider.OPENAI, "/v1/responses", OpenAiResponsesUsage.INSTANCE);

  private final Provider provider;
  private final String path;
  private final UsageExtractor extractor;

  ApiKind(Provider provider, String path, UsageExtractor extractor) {
    this.provider = provider;
    this.path = path;
    this.extractor = extractor;
  }

  public Provider provider() {
    return provider;
  }

  /** The upstream path, e.g. {@code /v1/messages}. */
  public String path() {
    return path;
  }

  public UsageExtractor extractor() {
    return extractor;
  }

  /** The kind served at {@code provider} + {@code path}, if that path reports usage. */
  public static Optional<ApiKind> of(Provider provider, String path) {
    for (ApiKind kind : values()) {
      if (kind.provider == provider && kind.path.equals(path)) {
        return Optional.of(kind);
      }
    }
    return Optional.empty();
  }
}
