package dev.spendgateway.edge.errors;

import static org.apache.pekko.http.javadsl.server.Directives.handleRejections;

import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import java.util.List;
import java.util.function.Function;
import org.apache.pekko.http.javadsl.model.HttpMethod;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.Allow;
import org.apache.pekko.http.javadsl.server.MethodRejection;
import org.apache.pekko.http.javadsl.server.RejectionHandler;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * A known path asked with a method it does not take is a 405 with {@code Allow} naming the methods
 * it does take, in the caller's error shape — not the 404 of an unknown path, which would send a
 * caller with a wrong verb looking for a typo in the URL.
 *
 * <p>Pekko's routes say "path matched, method did not" by rejecting with a {@link MethodRejection};
 * {@link #answered} turns those into the answer and lets every other rejection (an unknown path
 * included) through, so the route group's own fallback (its 404) still runs after it.
 */
public final class WrongMethod {
  private WrongMethod() {}

  /**
   * {@code inner}, with a request its paths know but its methods do not answered by {@code
   * wrongMethod} (given the methods the path takes); other rejections pass on unchanged.
   */
  public static Route answered(Route inner, Function<List<HttpMethod>, Route> wrongMethod) {
    RejectionHandler handler =
        RejectionHandler.newBuilder()
            .handleAll(
                MethodRejection.class, rejections -> wrongMethod.apply(supported(rejections)))
            .build();
    return handleRejections(handler, () -> inner);
  }

  /** The 405 in {@code shape} with {@code Allow: <allowed>}. */
  public static HttpResponse answer(Shape shape, List<HttpMethod> allowed) {
    String names = String.join(", ", allowed.stream().map(HttpMethod::name).toList());
    return GatewayErrors.error(
            shape,
            405,
            shape == Shape.GATEWAY ? "method_not_allowed" : "invalid_request_error",
            "This path does not take that method; it takes " + names + ".")
        .addHeader(Allow.create(allowed.toArray(HttpMethod[]::new)));
  }

  private static List<HttpMethod> supported(List<MethodRejection> rejections) {
    return rejections.stream().map(MethodRejection::supported).distinct().toList();
  }
}
