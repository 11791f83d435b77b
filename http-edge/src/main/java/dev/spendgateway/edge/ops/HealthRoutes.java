package dev.spendgateway.edge.ops;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.onComplete;
import static org.apache.pekko.http.javadsl.server.Directives.path;

import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.errors.WrongMethod;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * {@code GET /healthz} (the process is up) and {@code GET /readyz} (the ledger has recovered). Both
 * are unauthenticated so orchestrators can probe them; neither reveals anything but a status.
 */
public final class HealthRoutes {
  private final Readiness readiness;
  private final Duration timeout;

  public HealthRoutes(Readiness readiness, Duration timeout) {
    this.readiness = readiness;
    this.timeout = timeout;
  }

  /** Both paths take GET only; another method there is a 405 with {@code Allow: GET}. */
  public Route route() {
    return WrongMethod.answered(
        concat(path("healthz", () -> get(this::healthz)), path("readyz", () -> get(this::readyz))),
        allowed -> complete(WrongMethod.answer(Shape.GATEWAY, allowed)));
  }

  private Route healthz() {
    return complete(json(200, "{\"status\":\"up\"}"));
  }

  private Route readyz() {
    CompletableFuture<Boolean> ready =
        readiness
            .isReady()
            .toCompletableFuture()
            .orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS);
    return onComplete(
        ready,
        result ->
            result.isSuccess() && Boolean.TRUE.equals(result.get())
                ? complete(json(200, "{\"status\":\"ready\"}"))
                : complete(json(503, "{\"status\":\"recovering\"}")));
  }

  private static HttpResponse json(int status, String body) {
    return HttpResponse.create()
        .withStatus(StatusCodes.get(status))
        .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, body));
  }
}
