package dev.spendgateway.edge.json;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.extractMaterializer;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequestEntity;
import static org.apache.pekko.http.javadsl.server.Directives.onSuccess;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.edge.body.BodyType;
import dev.spendgateway.edge.body.CallerBodies;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.json.JsonFields.BadRequest;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.RequestEntity;
import org.apache.pekko.http.javadsl.model.StatusCode;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * What the gateway's own JSON APIs (ledger, admin) share: reading a body (415 for a multipart one,
 * 413 over 64 KiB) with 400s naming the field, answering with JSON, and the 503 when the ledger
 * does not answer in time.
 */
public final class JsonApi {
  /**
   * {@code {"error":{"type":…,"field":…,"message":…}}}; field only for 400s and 413s (the body
   * field to fix) and 415s ({@code content-type}).
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record SimpleError(String type, String field, String message) {}

  public record SimpleErrorBody(SimpleError error) {}

  /**
   * Largest body the gateway's own API reads. Its bodies are a few hundred bytes (an id, a lane, a
   * few amounts, an operator's reason); 64 KiB is generous and keeps the socket's 30m limit for the
   * transcription route from being buffered here.
   */
  public static final long MAX_BODY_BYTES = 64 * 1024;

  private final ObjectMapper mapper;
  private final Duration bodyReadTimeout;

  /**
   * @param bodyReadTimeout how long a body may take to arrive: {@code gateway.body-read-timeout},
   *     the one setting that bounds the body of every route
   */
  public JsonApi(ObjectMapper mapper, Duration bodyReadTimeout) {
    this.mapper = mapper;
    this.bodyReadTimeout = bodyReadTimeout;
  }

  /**
   * The body as text, then {@code inner}; a {@link BadRequest} anywhere becomes a 400. A multipart
   * body is a 415 naming the header, before it is read (any other declared type is read as JSON,
   * see {@link BodyType}); one over {@link #MAX_BODY_BYTES} a 413, before it is buffered; broken
   * framing a 400 and one not finished within the body-read timeout a 408.
   */
  public Route body(Function<String, Route> inner) {
    return extractRequestEntity(
        sent ->
            extractMaterializer(
                materializer -> {
                  if (!BodyType.JSON.accepts(sent)) {
                    return completeWithFuture(
                        CallerBodies.discard(sent, materializer)
                            .thenApply(drained -> unsupported(sent)));
                  }
                  CompletionStage<CallerBodies.Body> read =
                      CallerBodies.readStrict(
                              sent, MAX_BODY_BYTES, bodyReadTimeout.toMillis(), materializer)
                          .exceptionally(failure -> null);
                  return onSuccess(
                      read,
                      body -> {
                        if (body instanceof CallerBodies.Read text) {
                          return validated(() -> inner.apply(text.bytes().utf8String()));
                        }
                        return complete(refusal(body));
                      });
                }));
  }

  private HttpResponse refusal(CallerBodies.Body body) {
    if (body instanceof CallerBodies.TooLarge) {
      return simpleError(
          StatusCodes.PAYLOAD_TOO_LARGE,
          "request_too_large",
          "body",
          "body is larger than the gateway API's limit of " + MAX_BODY_BYTES + " bytes");
    }
    if (body instanceof CallerBodies.Unreadable unreadable) {
      return simpleError(
          StatusCodes.get(unreadable.status()),
          unreadable.status() == 408 ? "request_timeout" : "invalid_request",
          "body",
          unreadable.message());
    }
    return simpleError(
        StatusCodes.BAD_REQUEST, "invalid_request", "body", "body could not be read to its end");
  }

  private HttpResponse unsupported(RequestEntity sent) {
    return simpleError(
        StatusCodes.UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
        BodyType.HEADER,
        BodyType.JSON.refusal(sent));
  }

  /** Runs {@code inner}; a {@link BadRequest} becomes a 400 naming the field. */
  public Route validated(java.util.function.Supplier<Route> inner) {
    try {
      return inner.get();
    } catch (BadRequest bad) {
      return complete(
          simpleError(StatusCodes.BAD_REQUEST, "invalid_request", bad.field, bad.getMessage()));
    }
  }

  /**
   * Completes with the mapped answer, or 503 {@code ledger_unavailable} with {@code retryHint} when
   * the ledger does not answer in time.
   */
  public <R> Route answer(
      CompletionStage<R> reply, Function<R, HttpResponse> toResponse, String retryHint) {
    return completeWithFuture(
        reply.handle(
            (r, failure) ->
                failure == null
                    ? toResponse.apply(r)
                    : simpleError(
                            StatusCodes.SERVICE_UNAVAILABLE,
                            "ledger_unavailable",
                            null,
                            "the ledger did not answer in time; " + retryHint)
                        .addHeader(
                            RawHeader.create("retry-after", LEDGER_UNAVAILABLE_RETRY_AFTER))));
  }

  /**
   * {@code retry-after} (seconds) on a 503 {@code ledger_unavailable}: a ledger that did not answer
   * is restarting or, in a cluster, moving to another node, which takes seconds, not minutes.
   */
  public static final String LEDGER_UNAVAILABLE_RETRY_AFTER = "2";

  public HttpResponse json(StatusCode status, Object body) {
    try {
      return HttpResponse.create()
          .withStatus(status)
          .withEntity(
              HttpEntities.create(ContentTypes.APPLICATION_JSON, mapper.writeValueAsBytes(body)));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write " + body.getClass().getSimpleName(), e);
    }
  }

  /** A gateway-made error: JSON plus {@code x-gateway-error: true}. */
  public HttpResponse error(StatusCode status, Object body) {
    return json(status, body).addHeader(GatewayErrors.GATEWAY_ERROR);
  }

  public HttpResponse simpleError(StatusCode status, String type, String field, String message) {
    return error(status, new SimpleErrorBody(new SimpleError(type, field, message)));
  }
}
