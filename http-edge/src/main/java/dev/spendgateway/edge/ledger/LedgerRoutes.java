package dev.spendgateway.edge.ledger;

import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.edge.ledger.LedgerJson.BudgetError;
import dev.spendgateway.edge.ledger.LedgerJson.BudgetErrorBody;
import dev.spendgateway.edge.ledger.LedgerJson.ClosedBody;
import dev.spendgateway.edge.ledger.LedgerJson.ReservationBody;
import dev.spendgateway.edge.ledger.LedgerJson.ReservedBody;
import dev.spendgateway.edge.ledger.LedgerJson.SimpleError;
import dev.spendgateway.edge.ledger.LedgerJson.SimpleErrorBody;
import dev.spendgateway.edge.ledger.LedgerJson.UsageBody;
import dev.spendgateway.edge.ledger.LedgerRequests.BadRequest;
import dev.spendgateway.ledger.GlobalBudget.CloseReply;
import dev.spendgateway.ledger.GlobalBudget.Closed;
import dev.spendgateway.ledger.GlobalBudget.Conflict;
import dev.spendgateway.ledger.GlobalBudget.Invalid;
import dev.spendgateway.ledger.GlobalBudget.NotFound;
import dev.spendgateway.ledger.GlobalBudget.NotOpen;
import dev.spendgateway.ledger.GlobalBudget.Refused;
import dev.spendgateway.ledger.GlobalBudget.ReservationReply;
import dev.spendgateway.ledger.GlobalBudget.ReservationView;
import dev.spendgateway.ledger.GlobalBudget.ReserveReply;
import dev.spendgateway.ledger.GlobalBudget.Reserved;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.money.Micros;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCode;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;

/**
 * The ledger API (SPEC §2): reserve, settle, void, look up a reservation, and {@code /usage}.
 * Authentication is not done here: the main route wraps this one with the gateway-token check.
 *
 * <p>Bodies are validated before the ledger sees them (400 naming the field); the ledger's answers
 * map to statuses in {@link #reserved}, {@link #closed} and {@link #reservation}. A ledger that does
 * not answer within the ask timeout gives 503.
 */
public final class LedgerRoutes extends AllDirectives {
  private static final HttpHeader GATEWAY_ERROR = RawHeader.create("x-gateway-error", "true");

  private final LedgerClient ledger;
  private final ObjectMapper mapper;
  private final LedgerRequests requests;

  public LedgerRoutes(LedgerClient ledger, ObjectMapper mapper) {
    this.ledger = ledger;
    this.mapper = mapper;
    this.requests = new LedgerRequests(mapper);
  }

  public Route route() {
    return concat(
        pathPrefix("ledger", () -> pathPrefix("reservations", () -> concat(
            pathEnd(() -> post(this::reserve)),
            path(segment(), id -> get(() -> reservation(id))),
            path(segment().slash("settle"), id -> post(() -> settle(id))),
            path(segment().slash("void"), id -> post(() -> voidReservation(id)))))),
        path("usage", () -> get(() -> parameterOptional("brand", this::usage))));
  }

  // --- routes ----------------------------------------------------------------------------------

  private Route reserve() {
    return body(text -> {
      ReserveRequest request = requests.reserve(text);
      return answer(ledger.reserve(request), reply -> reserved(request, reply));
    });
  }

  private Route settle(String id) {
    return body(text -> {
      String checkedId = LedgerRequests.pathId(id);
      long actual = requests.settle(text);
      return answer(ledger.settle(checkedId, actual), this::closed);
    });
  }

  private Route voidReservation(String id) {
    return validated(() -> answer(ledger.voidReservation(LedgerRequests.pathId(id)), this::closed));
  }

  private Route reservation(String id) {
    return validated(() -> answer(ledger.get(LedgerRequests.pathId(id)), this::reservation));
  }

  private Route usage(Optional<String> brand) {
    return validated(() -> {
      brand.ifPresent(b -> LedgerRequests.pathId(b));
      return answer(ledger.usage(brand), usage -> json(StatusCodes.OK, UsageBody.of(usage)));
    });
  }

  // --- the ledger's answers as HTTP ------------------------------------------------------------

  private HttpResponse reserved(ReserveRequest request, ReserveReply reply) {
    if (reply instanceof Reserved r) {
      return json(StatusCodes.CREATED, new ReservedBody(r.id(), "reserved", Micros.toUsd(r.amountMicros())));
    } else if (reply instanceof Refused r) {
      String message = String.format("%s cap%s reached: $%s headroom left, $%s requested",
          r.cap().wireName(), r.subject() == null ? "" : " for " + r.subject(),
          Micros.toUsd(r.headroomMicros()).toPlainString(), Micros.toUsd(request.amountMicros()).toPlainString());
      return error(StatusCodes.PAYMENT_REQUIRED,
          new BudgetErrorBody(new BudgetError("budget_exceeded", r.cap().wireName(), r.subject(), message)));
    } else if (reply instanceof Conflict c) {
      return simpleError(StatusCodes.CONFLICT, "conflict", null, c.message());
    } else if (reply instanceof Invalid i) {
      return simpleError(StatusCodes.BAD_REQUEST, "invalid_request", i.field(), i.message());
    }
    throw new IllegalStateException("unexpected reply " + reply);
  }

  private HttpResponse closed(CloseReply reply) {
    if (reply instanceof Closed c) {
      return json(StatusCodes.OK, ClosedBody.of(c));
    } else if (reply instanceof NotFound n) {
      return simpleError(StatusCodes.NOT_FOUND, "not_found", null, "no reservation " + n.id());
    } else if (reply instanceof NotOpen n) {
      return simpleError(StatusCodes.CONFLICT, "conflict", null,
          "reservation " + n.id() + " was " + n.status().wireName() + "; there is nothing to close");
    } else if (reply instanceof Conflict c) {
      return simpleError(StatusCodes.CONFLICT, "conflict", null, c.message());
    } else if (reply instanceof Invalid i) {
      return simpleError(StatusCodes.BAD_REQUEST, "invalid_request", i.field(), i.message());
    }
    throw new IllegalStateException("unexpected reply " + reply);
  }

  private HttpResponse reservation(ReservationReply reply) {
    if (reply instanceof ReservationView v) {
      return json(StatusCodes.OK, ReservationBody.of(v));
    } else if (reply instanceof NotFound n) {
      return simpleError(StatusCodes.NOT_FOUND, "not_found", null, "no reservation " + n.id());
    }
    throw new IllegalStateException("unexpected reply " + reply);
  }

  // --- helpers ---------------------------------------------------------------------------------

  /** The body as text, then {@code inner}; a {@link BadRequest} anywhere becomes a 400. */
  private Route body(Function<String, Route> inner) {
    return entity(Unmarshaller.entityToString(), text -> validated(() -> inner.apply(text)));
  }

  private Route validated(java.util.function.Supplier<Route> inner) {
    try {
      return inner.get();
    } catch (BadRequest bad) {
      return complete(simpleError(StatusCodes.BAD_REQUEST, "invalid_request", bad.field, bad.getMessage()));
    }
  }

  /** Completes with the mapped answer, or 503 when the ledger does not answer in time. */
  private <R> Route answer(CompletionStage<R> reply, Function<R, HttpResponse> toResponse) {
    return completeWithFuture(reply.handle((r, failure) -> failure == null
        ? toResponse.apply(r)
        : simpleError(StatusCodes.SERVICE_UNAVAILABLE, "ledger_unavailable", null,
            "the ledger did not answer in time; the request may be retried with the same id")));
  }

  private HttpResponse json(StatusCode status, Object body) {
    try {
      return HttpResponse.create().withStatus(status)
          .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, mapper.writeValueAsBytes(body)));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write " + body.getClass().getSimpleName(), e);
    }
  }

  private HttpResponse error(StatusCode status, Object body) {
    return json(status, body).addHeaders(List.of(GATEWAY_ERROR));
  }

  private HttpResponse simpleError(StatusCode status, String type, String field, String message) {
    return error(status, new SimpleErrorBody(new SimpleError(type, field, message)));
  }
}
