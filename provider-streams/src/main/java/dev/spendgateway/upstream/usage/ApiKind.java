package dev.spendgateway.upstream.usage;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.cost.UsageParsers;
import dev.spendgateway.policy.cost.UsageReport;
import java.util.Optional;
import java.util.function.Function;

/**
 * The provider APIs the gateway passes through, in one table: for each, the provider, the upstream
 * path (the gateway's route is the provider's prefix followed by it, e.g. {@code
 * /anthropic/v1/messages}), the {@link UsageExtractor} that finds the usage document in a streamed
 * or whole answer, and the {@code UsageParsers} rule (policy-rules) that prices that document. The
 * edge's routes, the stream meter and the router read these; a new pass-through API starts with a
 * constant here (docs/ARCHITECTURE.md, "Where to make common changes", lists the rest).
 *
 * <p>The usage document each extractor yields:
 *
 * <ul>
 *   <li>{@link #ANTHROPIC_MESSAGES}: the {@code usage} object;
 *   <li>{@link #OPENAI_CHAT_COMPLETIONS}: the {@code usage} object;
 *   <li>{@link #OPENAI_RESPONSES}: the whole {@code response} object (usage under {@code usage});
 *   <li>{@link #OPENAI_TRANSCRIPTIONS}: the whole answer (never streamed through the meter).
 * </ul>
 */
public enum ApiKind {
  ANTHROPIC_MESSAGES(
      Provider.ANTHROPIC, "/v1/messages", AnthropicMessagesUsage.INSTANCE, UsageParsers::anthropic),
  OPENAI_CHAT_COMPLETIONS(
      Provider.OPENAI, "/v1/chat/completions", OpenAiChatUsage.INSTANCE, UsageParsers::openAiChat),
  OPENAI_RESPONSES(
      Provider.OPENAI,
      "/v1/responses",
      OpenAiResponsesUsage.INSTANCE,
      UsageParsers::openAiResponses),
  OPENAI_TRANSCRIPTIONS(
      Provider.OPENAI,
      "/v1/audio/transcriptions",
      TranscriptionUsage.INSTANCE,
      UsageParsers::transcription);

  private final Provider provider;
  private final String path;
  private final UsageExtractor extractor;
  private final Function<JsonNode, UsageReport> usageOfDocument;

  ApiKind(
      Provider provider,
      String path,
      UsageExtractor extractor,
      Function<JsonNode, UsageReport> usageOfDocument) {
    this.provider = provider;
    this.path = path;
    this.extractor = extractor;
    this.usageOfDocument = usageOfDocument;
  }

  public Provider provider() {
    return provider;
  }

  /** The upstream path, e.g. {@code /v1/messages}. */
  public String path() {
    return path;
  }

  /** The gateway's route for this API: the provider's prefix and the upstream path. */
  public String route() {
    return "/" + provider.wireName() + path;
  }

  public UsageExtractor extractor() {
    return extractor;
  }

  /** Prices-ready usage from the usage document the extractor (or the stream meter) produced. */
  public UsageReport usageOf(JsonNode document) {
    return usageOfDocument.apply(document);
  }

  /** Usage from a whole (non-streamed) answer; not reported when the answer holds none. */
  public UsageReport usageOfAnswer(JsonNode answer) {
    return extractor
        .fromJsonAnswer(answer)
        .map(usageOfDocument)
        .orElseGet(() -> new UsageReport.NotReported("no usage in the answer"));
  }

  /** The kind served at {@code provider} + {@code path}, if the gateway passes it through. */
  public static Optional<ApiKind> of(Provider provider, String path) {
    for (ApiKind kind : values()) {
      if (kind.provider == provider && kind.path.equals(path)) {
        return Optional.of(kind);
      }
    }
    return Optional.empty();
  }
}
