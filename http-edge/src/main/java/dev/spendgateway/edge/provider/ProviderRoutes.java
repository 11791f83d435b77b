package dev.spendgateway.edge.provider;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.post;
import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import dev.spendgateway.edge.auth.GatewayAuth;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The provider pass-through routes (SPEC §2): {@code /anthropic/v1/messages}, {@code
 * /openai/v1/chat/completions}, {@code /openai/v1/responses}, {@code
 * /openai/v1/audio/transcriptions}. Each prefix answers in its provider's error shape, 401 and 404
 * included, so the official SDKs surface every gateway error normally.
 */
public final class ProviderRoutes {
  private final CallServices services;
  private final GatewayAuth auth;

  public ProviderRoutes(CallServices services, GatewayAuth auth) {
    this.services = services;
    this.auth = auth;
  }

  public Route route() {
    return concat(
        pathPrefix("anthropic", () -> provider(Shape.ANTHROPIC, this::anthropic)),
        pathPrefix("openai", () -> provider(Shape.OPENAI, this::openAi)));
  }

  private Route anthropic() {
    return path(segment("v1").slash("messages"), () -> post(() -> call(Dialect.ANTHROPIC_MESSAGES)));
  }

  private Route openAi() {
    return concat(
        path(segment("v1").slash("chat").slash("completions"), () -> post(() -> call(Dialect.OPENAI_CHAT))),
        path(segment("v1").slash("responses"), () -> post(() -> call(Dialect.OPENAI_RESPONSES))),
        path(
            segment("v1").slash("audio").slash("transcriptions"),
            () -> post(() -> call(Transcription.INSTANCE))));
  }

  /** Token first, then the provider's routes, then a 404 in the same dialect. */
  private Route provider(Shape shape, Supplier<Route> routes) {
    return auth.authorized(
        () -> complete(GatewayErrors.unauthorized(shape)),
        () -> concat(routes.get(), complete(GatewayErrors.notFound(shape, "No such route on this gateway."))));
  }

  private Route call(CallKind kind) {
    return extractRequest(request -> completeWithFuture(new ProviderCall(services, kind, request).run()));
  }
}
