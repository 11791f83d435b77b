package dev.spendgateway.edge.call;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.edge.body.CallerJson;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.log.AccessLog;
import dev.spendgateway.edge.log.AccessRecord;
import java.time.Clock;
import java.util.List;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The answer when this node is at one of its capacity limits: a 503 in the caller's provider error
 * shape with {@code retry-after}, given at once. Nothing was sent to a provider, so nothing is
 * billed; a call that already held a reservation has it voided by its attempt. Every refusal is
 * counted by kind on {@code /metrics} ({@code gateway_overload_refusals_total{kind}}).
 *
 * <p>Why 503 and not a reset or a wait: an SDK retries a 503 after {@code retry-after}, while a
 * call queued behind busy connections could wait until an idle timeout reset it, and the SDK would
 * then retry a call whose reservation was still held.
 */
public final class Overload {
  /** Kinds, as the metric's label and the access line's error word. */
  public static final String OPEN_CALLS = "open_calls";

  /** The bodies being read and held would pass {@code gateway.body-memory-share} of the heap. */
  public static final String BODY_MEMORY = "body_memory";

  /**
   * Seconds a refused caller is asked to wait. One: at this load long streams end every moment,
   * each freeing a place, and the official SDKs add their own jittered backoff on top.
   */
  static final int RETRY_AFTER_SECONDS = 1;

  private Overload() {}

  /**
   * The caller's answer for a refusal of {@code kind}.
   *
   * @param kind {@link #OPEN_CALLS}, {@link #BODY_MEMORY}, or the upstream's {@code upstream_busy}
   *     / {@code pool_overflow}
   */
  public static HttpResponse refusal(Shape shape, String kind, CallMetrics metrics) {
    metrics.overloadRefused(kind);
    String type = shape == Shape.ANTHROPIC ? "overloaded_error" : "server_error";
    ObjectNode extra = CallerJson.object();
    if (shape == Shape.OPENAI) {
      extra.put("code", "gateway_overloaded");
    }
    String message =
        "The gateway is at capacity ("
            + kind
            + "); nothing was sent or billed, retry after "
            + RETRY_AFTER_SECONDS
            + " s.";
    return GatewayErrors.error(
        shape,
        503,
        type,
        message,
        extra,
        List.of(RawHeader.create("retry-after", Integer.toString(RETRY_AFTER_SECONDS))));
  }

  /**
   * Whether {@code request} is a provider or router call, the kind of answer {@code
   * gateway.max-open-calls} limits. The ops and ledger routes are short and must stay reachable on
   * a full node.
   */
  public static boolean isProviderCall(HttpRequest request) {
    String path = request.getUri().path();
    return path.startsWith("/anthropic/") || path.startsWith("/openai/") || path.startsWith("/v1/");
  }

  /**
   * The route answering a call refused because {@code gateway.max-open-calls} are open: the 503 in
   * the shape of the path's provider (the router speaks OpenAI's), with the request id echoed and
   * one access line naming only the route family, as for any call refused before a route ran.
   */
  public static Route openCallsRefused(CallMetrics metrics, Clock clock) {
    return extractRequest(
        request -> {
          String path = request.getUri().path();
          boolean anthropic = path.startsWith("/anthropic/");
          String family =
              anthropic ? "/anthropic/*" : path.startsWith("/openai/") ? "/openai/*" : "/v1/*";
          String requestId =
              SpendHeaders.requestId(name -> request.getHeader(name).map(HttpHeader::value));
          HttpResponse response =
              refusal(anthropic ? Shape.ANTHROPIC : Shape.OPENAI, OPEN_CALLS, metrics);
          AccessLog.write(
              AccessRecord.refusedAtTheDoor(
                  clock.instant(),
                  requestId,
                  family,
                  anthropic ? "anthropic" : "openai",
                  503,
                  OPEN_CALLS));
          return complete(response.addHeader(RawHeader.create(SpendHeaders.REQUEST_ID, requestId)));
        });
  }
}
