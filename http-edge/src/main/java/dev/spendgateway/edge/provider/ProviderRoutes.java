package dev.spendgateway.edge.provider;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.post;
import static org.apache.pekko.http.javadsl.server.PathMatchers.separateOnSlashes;

import dev.spendgateway.edge.auth.GatewayAuth;
import dev.spendgateway.edge.call.CallPipeline;
import dev.spendgateway.edge.call.CallServices;
import dev.spendgateway.edge.call.ProviderGuards;
import dev.spendgateway.edge.call.SpendHeaders;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.errors.WrongMethod;
import dev.spendgateway.edge.log.AccessLog;
import dev.spendgateway.edge.log.AccessRecord;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.usage.ApiKind;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The provider pass-through routes (docs/ARCHITECTURE.md, "The contract"): one per {@link ApiKind},
 * at its route — today {@code /anthropic/v1/messages}, {@code /openai/v1/chat/completions}, {@code
 * /openai/v1/responses} and {@code /openai/v1/audio/transcriptions}. Each provider's prefix answers
 * in its provider's error shape, 401 and 404 included, so the official SDKs surface every gateway
 * error normally.
 */
public final class ProviderRoutes {
  private final CallServices services;
  private final GatewayAuth auth;
  private final ProviderGuards guards;

  /**
   * Built once in the constructor. Pekko's Java directives call their inner route's supplier on
   * every request, so a supplier that builds routes rebuilds the whole tree per call; every
   * supplier here hands back a route built beforehand.
   */
  private final Route route;

  /**
   * @param guards the pools, breakers and model circuits every provider call goes through
   */
  public ProviderRoutes(CallServices services, GatewayAuth auth, ProviderGuards guards) {
    this.services = services;
    this.auth = auth;
    this.guards = guards;
    List<Route> prefixes = new ArrayList<>();
    for (Provider provider : Provider.values()) {
      List<Route> calls = new ArrayList<>();
      for (ApiKind api : ApiKind.values()) {
        if (api.provider() == provider) {
          // The upstream path below the provider's prefix, e.g. v1/chat/completions.
          calls.add(
              path(
                  separateOnSlashes(api.path().substring(1)),
                  once(postOnly(call(CallKind.of(api))))));
        }
      }
      if (!calls.isEmpty()) {
        prefixes.add(pathPrefix(provider.wireName(), once(underPrefix(provider, anyOf(calls)))));
      }
    }
    this.route = anyOf(prefixes);
  }

  public Route route() {
    return route;
  }

  /** The first of {@code routes} that takes the request. */
  private static Route anyOf(List<Route> routes) {
    return concat(routes.get(0), routes.subList(1, routes.size()).toArray(new Route[0]));
  }

  /**
   * Token first, then the provider's routes (a known path with the wrong method is a 405 with
   * {@code Allow}), then a 404, all in the same dialect.
   */
  private Route underPrefix(Provider provider, Route routes) {
    Shape shape = CallKind.errorShapeOf(provider);
    return auth.authorized(
        refused(provider, GatewayErrors.unauthorized(shape), "unauthorized"),
        concat(
            WrongMethod.answered(
                routes,
                allowed ->
                    refused(provider, WrongMethod.answer(shape, allowed), "method_not_allowed")),
            refused(
                provider,
                GatewayErrors.notFound(shape, "No such route on this gateway."),
                "not_found")));
  }

  private static Route postOnly(Route inner) {
    return post(once(inner));
  }

  /** A supplier of a route already built (see {@link #route}). */
  private static Supplier<Route> once(Route built) {
    return () -> built;
  }

  /**
   * A call refused before it reached a provider route (wrong token, unknown path or method): still
   * one access line (every call is logged, refused ones included) and the request id echoed. The
   * raw path is caller text, so the line names only the provider prefix.
   */
  private Route refused(Provider prefix, HttpResponse response, String errorClass) {
    String provider = prefix.wireName();
    return extractRequest(
        request -> {
          String requestId =
              SpendHeaders.requestId(name -> request.getHeader(name).map(HttpHeader::value));
          AccessLog.write(
              AccessRecord.refusedAtTheDoor(
                  services.clock().instant(),
                  requestId,
                  "/" + provider + "/*",
                  provider,
                  response.status().intValue(),
                  errorClass));
          return complete(response.addHeader(RawHeader.create(SpendHeaders.REQUEST_ID, requestId)));
        });
  }

  private Route call(CallKind kind) {
    CallPipeline<Preparation.Prepared> pipeline =
        new CallPipeline<>(new ProviderCall(services, kind), services, guards, System::nanoTime);
    return extractRequest(request -> completeWithFuture(pipeline.run(request)));
  }
}
