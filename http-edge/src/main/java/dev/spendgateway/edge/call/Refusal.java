package dev.spendgateway.edge.call;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.edge.body.CallerJson;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.policy.request.PolicyDecision;
import dev.spendgateway.upstream.failover.PoolFull;
import dev.spendgateway.upstream.failover.ProviderRateLimits;
import java.util.List;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;

/**
 * A call the gateway answers itself, as a value: what the caller gets (in its route's error shape)
 * and the access line's word. The wordings every route shares are made here, once.
 *
 * @param response the answer, in the caller's error shape
 * @param errorClass the access line's {@code error}
 */
public record Refusal(HttpResponse response, String errorClass) {

  public int status() {
    return response.status().intValue();
  }

  /**
   * A gateway-made error; {@code param} (the request part at fault, may be null) is named in the
   * OpenAI shape only, which has the field.
   */
  public static Refusal of(
      Shape shape, int status, String type, String message, String param, String errorClass) {
    return of(shape, status, type, message, param, errorClass, List.of());
  }

  public static Refusal of(
      Shape shape,
      int status,
      String type,
      String message,
      String param,
      String errorClass,
      List<HttpHeader> headers) {
    ObjectNode extra = CallerJson.object();
    if (param != null && shape == Shape.OPENAI) {
      extra.put("param", param);
    }
    return new Refusal(
        GatewayErrors.error(shape, status, type, message, extra, headers), errorClass);
  }

  /** A request the policy refuses (Anthropic names a too-large request apart). */
  public static Refusal policy(Shape shape, PolicyDecision.Violation v) {
    String type =
        v.httpStatus() == 413 && shape == Shape.ANTHROPIC
            ? "request_too_large"
            : "invalid_request_error";
    return of(shape, v.httpStatus(), type, v.message(), v.field(), "policy:" + v.rule());
  }

  /**
   * A 429 the gateway makes (its own pace, a full pool, an attempt budget spent on 429s), with
   * {@code retry-after} in whole seconds; typed as each provider's SDK expects a rate limit.
   */
  public static Refusal tooManyRequests(
      Shape shape, String message, long retryAfterSeconds, String errorClass) {
    return of(
        shape,
        429,
        shape == Shape.ANTHROPIC ? "rate_limit_error" : "rate_limited",
        message,
        null,
        errorClass,
        List.of(RawHeader.create("retry-after", Long.toString(retryAfterSeconds))));
  }

  /** The node's pace towards {@code provider} is further away than the limits let a call wait. */
  public static Refusal rateLimited(
      Shape shape, String provider, ProviderRateLimits.Turn.Refused refused) {
    long retryAfter = ProviderGuards.retryAfterSeconds(refused.retryAfter());
    return tooManyRequests(
        shape,
        provider
            + " is over this gateway's "
            + refused.limit()
            + "; nothing was sent or reserved, retry after "
            + retryAfter
            + " s.",
        retryAfter,
        "rate_limited");
  }

  /** The call's admission pool queue is full. */
  public static Refusal poolFull(Shape shape, PoolFull full) {
    return tooManyRequests(shape, full.getMessage(), full.retryAfterSeconds(), "pool_full");
  }

  /**
   * The caller hung up before its call was sent ({@code what}: the sentence the caller would read);
   * nobody reads the answer, the line records 499 (the convention for a client that closed its
   * request).
   */
  public static Refusal callerGone(Shape shape, String what) {
    return of(shape, GatewayErrors.CALLER_GONE, "caller_gone", what, null, "caller_gone");
  }

  /** A failure inside the gateway. */
  public static Refusal internal(Shape shape) {
    return of(
        shape, 500, "internal_error", "The gateway failed to handle this call.", null, "internal");
  }

  /** This answer with {@code headers} added. */
  public Refusal withHeaders(List<HttpHeader> headers) {
    return headers.isEmpty() ? this : new Refusal(response.addHeaders(headers), errorClass);
  }
}
