package dev.spendgateway.edge.json;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.entity;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.json.JsonFields.BadRequest;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCode;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;

/**
 * What the gateway's own JSON APIs (ledger, admin) share: reading a body with 400s naming the
 * field, answering with JSON, and the 503 when the ledger does not answer in time.
 */
public final class JsonApi {
  /** {@code {"error":{"type":…,"field":…,"message":…}}}; field only for 400s. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record SimpleError(String type, String field, String message) {}

  public record SimpleErrorBody(SimpleError error) {}

  private final ObjectMapper mapper;

  public JsonApi(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  /** The body as text, then {@code inner}; a {@link BadRequest} anywhere becomes a 400. */
  public Route body(Function<String, Route> inner) {
    return entity(Unmarshaller.entityToString(), text -> validated(() -> inner.apply(text)));
  }

  /** Runs {@code inner}; a {@link BadRequest} becomes a 400 naming the field. */
  public Route validated(java.util.function.Supplier<Route> inner) {
    try {
      return inner.get();
    } catch (BadRequest bad) {
      return complete(simpleError(StatusCodes.BAD_REQUEST, "invalid_request", bad.field, bad.getMessage()));
    }
  }

  /**
   * Completes with the mapped answer, or 503 {@code ledger_unavailable} with {@code retryHint}
   * when the ledger does not answer in time.
   */
  public <R> Route answer(CompletionStage<R> reply, Function<R, HttpResponse> toResponse, String retryHint) {
    return completeWithFuture(reply.handle((r, failure) -> failure == null
        ? toResponse.apply(r)
        : simpleError(StatusCodes.SERVICE_UNAVAILABLE, "ledger_unavailable", null,
            "the ledger did not answer in time; " + retryHint)));
  }

  public HttpResponse json(StatusCode status, Object body) {
    try {
      return HttpResponse.create().withStatus(status)
          .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, mapper.writeValueAsBytes(body)));
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
