package dev.spendgateway.edge;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.concat;

import dev.spendgateway.edge.auth.GatewayAuth;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.errors.WrongMethod;
import java.util.List;
import org.apache.pekko.http.javadsl.model.HttpMethod;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The whole HTTP surface, composed from small route values: health probes (no token), the provider
 * routes (token, in each provider's error shape), then the gateway's own API (token, gateway error
 * shape). A known path with the wrong method is a 405 naming the allowed ones; anything else is a
 * 404.
 */
public final class GatewayRoutes {
  private GatewayRoutes() {}

  /**
   * @param open routes that need no caller token (health probes; the admin routes, which check the
   *     operator's own token)
   * @param providerRoutes routes that check the token themselves, in their provider's error shape
   * @param gatewayApi the gateway's own API (ledger, usage, metrics), behind the caller token
   */
  public static Route compose(
      GatewayAuth auth, List<Route> open, List<Route> providerRoutes, List<Route> gatewayApi) {
    Route notFound =
        complete(GatewayErrors.notFound(Shape.GATEWAY, "No such route on this gateway."));
    Route api =
        auth.authorized(
            () -> complete(GatewayErrors.unauthorized(Shape.GATEWAY)),
            () ->
                concat(
                    WrongMethod.answered(concatAll(gatewayApi), GatewayRoutes::wrongMethod),
                    notFound));
    return concat(concatAll(open), concatAll(providerRoutes), api);
  }

  private static Route wrongMethod(List<HttpMethod> allowed) {
    return complete(WrongMethod.answer(Shape.GATEWAY, allowed));
  }

  private static Route concatAll(List<Route> routes) {
    if (routes.isEmpty()) {
      return org.apache.pekko.http.javadsl.server.Directives.reject();
    }
    Route first = routes.get(0);
    return routes.size() == 1
        ? first
        : concat(first, routes.subList(1, routes.size()).toArray(Route[]::new));
  }
}
