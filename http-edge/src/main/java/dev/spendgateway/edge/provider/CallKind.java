package dev.spendgateway.edge.provider;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.body.BodyType;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.cost.UsageReport;
import dev.spendgateway.upstream.usage.ApiKind;
import java.time.LocalDate;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.HttpRequest;

/**
 * What differs between the provider APIs the gateway passes through: how the request is read and
 * vetted, where it goes, how errors look and how usage is read. {@link ProviderCall} does the rest,
 * identically for all.
 */
interface CallKind {
  /** The gateway route, for the access log. */
  String route();

  Provider provider();

  /** The upstream path, e.g. {@code /v1/messages}. */
  String upstreamPath();

  Shape errorShape();

  /** How the body is read, and which declared types are a 415 before it is read (see BodyType). */
  BodyType bodyType();

  /** Reads and vets the caller's body (never a failed stage for bad input: a Rejected instead). */
  CompletionStage<Preparation> prepare(HttpRequest request, CallServices services, LocalDate today);

  /** The API kind whose SSE usage the stream meter reads, when this API streams. */
  Optional<ApiKind> streamKind();

  /** Reads usage from a whole JSON answer. */
  UsageReport usageOfAnswer(JsonNode answer);

  /** Reads usage from the usage document the stream meter produced. */
  UsageReport usageOfStream(JsonNode document);
}
