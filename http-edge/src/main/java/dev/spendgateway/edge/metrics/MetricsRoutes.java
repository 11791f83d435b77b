package dev.spendgateway.edge.metrics;

import java.nio.charset.StandardCharsets;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * {@code GET /metrics}: Prometheus text exposition format 0.0.4. Behind the gateway token, like the
 * rest of the gateway API (configure the scraper with {@code authorization: Bearer <token>}).
 */
public final class MetricsRoutes extends AllDirectives {
  /** {@code text/plain; version=0.0.4; charset=utf-8}. */
  static final ContentType PROMETHEUS_TEXT =
      ContentTypes.parse("text/plain; version=0.0.4; charset=utf-8");

  private final GatewayMetrics metrics;

  public MetricsRoutes(GatewayMetrics metrics) {
    this.metrics = metrics;
  }

  public Route route() {
    return path(
        "metrics",
        () ->
            get(
                () ->
                    completeWithFuture(
                        metrics
                            .scrape()
                            .thenApply(
                                text ->
                                    HttpResponse.create()
                                        .withEntity(
                                            HttpEntities.create(
                                                PROMETHEUS_TEXT,
                                                text.getBytes(StandardCharsets.UTF_8)))))));
  }
}
