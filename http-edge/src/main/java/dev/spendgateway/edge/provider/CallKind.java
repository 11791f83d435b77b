package dev.spendgateway.edge.provider;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.body.BodyType;
import dev.spendgateway.edge.call.CallServices;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.cost.UsageReport;
import dev.spendgateway.upstream.usage.ApiKind;
import java.time.LocalDate;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.HttpRequest;

/**
 * What differs between the provider APIs the gateway passes through, at the edge: how the request
 * is read and vetted. Where it goes, its route and how its usage is read come from its {@link
 * ApiKind}, the one table of pass-through APIs. {@link ProviderCall} does the rest, identically for
 * all.
 */
interface CallKind {
  /** The API this call passes through: provider, upstream path, gateway route, usage rules. */
  ApiKind api();

  /** How the body is read, and which declared types are a 415 before it is read (see BodyType). */
  BodyType bodyType();

  /** The largest body this route reads (a longer one is a 413, read and dropped, never held). */
  long bodyLimit(CallServices services);

  /** Reads and vets the caller's body (never a failed stage for bad input: a Rejected instead). */
  CompletionStage<Preparation> prepare(HttpRequest request, CallServices services, LocalDate today);

  /** The API kind whose SSE usage the stream meter reads, when this API streams. */
  Optional<ApiKind> streamKind();

  /** The gateway route, for the access log. */
  default String route() {
    return api().route();
  }

  default Provider provider() {
    return api().provider();
  }

  /** The upstream path, e.g. {@code /v1/messages}. */
  default String upstreamPath() {
    return api().path();
  }

  default Shape errorShape() {
    return errorShapeOf(provider());
  }

  /** Reads usage from a whole JSON answer. */
  default UsageReport usageOfAnswer(JsonNode answer) {
    return api().usageOfAnswer(answer);
  }

  /** Reads usage from the usage document the stream meter produced. */
  default UsageReport usageOfStream(JsonNode document) {
    return api().usageOf(document);
  }

  /**
   * How the edge reads each pass-through API's body. A switch over every {@link ApiKind}, so a new
   * API in that table does not compile until the edge knows how to read and vet its body.
   */
  static CallKind of(ApiKind api) {
    return switch (api) {
      case ANTHROPIC_MESSAGES -> Dialect.ANTHROPIC_MESSAGES;
      case OPENAI_CHAT_COMPLETIONS -> Dialect.OPENAI_CHAT;
      case OPENAI_RESPONSES -> Dialect.OPENAI_RESPONSES;
      case OPENAI_TRANSCRIPTIONS -> Transcription.INSTANCE;
    };
  }

  /** Every route under a provider's prefix answers in that provider's error shape. */
  static Shape errorShapeOf(Provider provider) {
    return switch (provider) {
      case ANTHROPIC -> Shape.ANTHROPIC;
      case OPENAI -> Shape.OPENAI;
    };
  }
}
