package dev.spendgateway.edge.ledger;

import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.edge.body.CallerBodies;
import dev.spendgateway.edge.json.JsonApi;
import dev.spendgateway.edge.json.JsonFields;
import dev.spendgateway.edge.ledger.LedgerJson.BudgetError;
import dev.spendgateway.edge.ledger.LedgerJson.BudgetErrorBody;
import dev.spendgateway.edge.ledger.LedgerJson.ClosedBody;
import dev.spendgateway.edge.ledger.LedgerJson.ReservationBody;
import dev.spendgateway.edge.ledger.LedgerJson.ReservedBody;
import dev.spendgateway.edge.ledger.LedgerJson.UsageBody;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol;
import dev.spendgateway.ledger.LedgerProtocol.Busy;
import dev.spendgateway.ledger.LedgerProtocol.CloseReply;
import dev.spendgateway.ledger.LedgerProtocol.Closed;
import dev.spendgateway.ledger.LedgerProtocol.Conflict;
import dev.spendgateway.ledger.LedgerProtocol.Forbidden;
import dev.spendgateway.ledger.LedgerProtocol.Invalid;
import dev.spendgateway.ledger.LedgerProtocol.NotFound;
import dev.spendgateway.ledger.LedgerProtocol.NotOpen;
import dev.spendgateway.ledger.LedgerProtocol.Refused;
import dev.spendgateway.ledger.LedgerProtocol.ReservationReply;
import dev.spendgateway.ledger.LedgerProtocol.ReservationView;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.money.Micros;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The ledger API: reserve, settle, void, look up a reservation, and {@code /usage}, for internal
 * services that pay for other things and for load tests. Authentication is not done here: the main
 * route wraps this one with the gateway-token check.
 *
 * <p>Bodies are validated before the ledger sees them (400 naming the field); the ledger's answers
 * map to statuses in {@link #reserved}, {@link #closed} and {@link #reservation}. A ledger that
 * does not answer within the ask timeout gives 503 {@code ledger_unavailable}; one whose queue is
 * full answers at once, 503 {@code ledger_busy} with {@code retry-after} (see {@link #busy}).
 *
 * <p>Rules of this API, which every token holder can call, so that no call here can move spend it
 * did not first hold against the caps:
 *
 * <ul>
 *   <li>{@code amountUsd} must be greater than 0 (400 naming {@code amountUsd}).
 *   <li>A settle is at most the reserved amount (400 naming {@code actualUsd}; nothing changes). An
 *       operator who must book more uses the admin API's settle, which records who and why.
 *   <li>Reservations made by the provider routes belong to the gateway: settling or voiding one
 *       here is 403 and leaves it open for the call that holds it. Their ids ({@code gw-} followed
 *       by a UUID) are the gateway's namespace: reserving such an id here is 400, settling or
 *       voiding one is 403 whether or not it exists, and looking one up is 404, the answer for any
 *       reservation this API cannot see — so none of these answers tells a caller whether a
 *       provider call holds that id.
 *   <li>Every reservation this API makes is recorded as the ledger API's own; the provider routes
 *       cannot close it either.
 * </ul>
 */
public final class LedgerRoutes extends AllDirectives {

  private final LedgerClient ledger;

  /**
   * What a caller should do when the ledger did not answer: retrying a reserve with its id is safe.
   */
  private static final String RETRY_HINT = "the request may be retried with the same id";

  private final JsonApi api;
  private final LedgerRequests requests;

  /**
   * @param ledger any client of the ledger: this API always acts as {@link Owner#LEDGER_API}
   */
  private final int usageTopSubjects;

  /**
   * @param usageTopSubjects {@code gateway.usage-top-subjects}: subjects listed by {@code /usage}
   *     without a brand
   * @param bodyReadTimeout {@code gateway.body-read-timeout}: how long a request body may take
   */
  public LedgerRoutes(
      LedgerClient ledger, ObjectMapper mapper, int usageTopSubjects, Duration bodyReadTimeout) {
    this.usageTopSubjects = usageTopSubjects;
    // What follows an answer here is mapping it to a response: cheap enough to run where a cluster
    // node's batcher hands the answer out.
    this.ledger = ledger.actingAs(Owner.LEDGER_API).answeredInPlace();
    this.api = new JsonApi(mapper, bodyReadTimeout);
    this.requests = new LedgerRequests(mapper);
  }

  public Route route() {
    return concat(
        pathPrefix(
            "ledger",
            () ->
                pathPrefix(
                    "reservations",
                    () ->
                        concat(
                            pathEnd(() -> post(this::reserve)),
                            path(segment(), id -> get(() -> reservation(id))),
                            path(segment().slash("settle"), id -> post(() -> settle(id))),
                            path(segment().slash("void"), id -> post(() -> voidReservation(id)))))),
        path("usage", () -> get(() -> parameterOptional("brand", this::usage))));
  }

  // --- routes ----------------------------------------------------------------------------------

  private Route reserve() {
    return api.body(
        text -> {
          ReserveRequest request = requests.reserve(text);
          return answer(ledger.reserve(request), reply -> reserved(request, reply));
        });
  }

  private Route settle(String id) {
    return api.body(
        text -> {
          String checkedId = JsonFields.id(id, "id");
          long actual = requests.settle(text);
          return answer(ledger.settle(checkedId, actual), this::closed);
        });
  }

  private Route voidReservation(String id) {
    // A void needs no body, but callers often send one ({}): read it to its end before answering.
    // Answered earlier, Pekko warns "Sending an 2xx 'early' response" and closes the connection, so
    // every void cost the caller a new connection.
    return extractRequestEntity(
        sent ->
            extractMaterializer(
                materializer ->
                    onSuccess(
                        CallerBodies.discard(sent, materializer).thenApply(ignored -> Boolean.TRUE),
                        drained ->
                            api.validated(
                                () ->
                                    answer(
                                        ledger.voidReservation(JsonFields.id(id, "id")),
                                        this::closed)))));
  }

  private Route reservation(String id) {
    return api.validated(
        () -> {
          String checkedId = JsonFields.id(id, "id");
          if (Owner.impliedBy(checkedId) == Owner.GATEWAY) {
            return complete(notVisible(checkedId));
          }
          return answer(ledger.get(checkedId), this::reservation);
        });
  }

  private Route usage(Optional<String> brand) {
    return api.validated(
        () -> {
          brand.ifPresent(b -> JsonFields.id(b, "brand"));
          return answer(
              ledger.usage(brand, usageTopSubjects),
              usage -> api.json(StatusCodes.OK, UsageBody.of(usage)));
        });
  }

  // --- the ledger's answers as HTTP ------------------------------------------------------------

  private HttpResponse reserved(ReserveRequest request, ReserveReply reply) {
    if (reply instanceof Reserved r) {
      return api.json(
          StatusCodes.CREATED,
          new ReservedBody(r.id(), "reserved", Micros.toUsd(r.amountMicros())));
    } else if (reply instanceof Refused r) {
      String message =
          String.format(
              "%s cap%s reached: $%s headroom left, $%s requested",
              r.cap().wireName(),
              r.subject() == null ? "" : " for " + r.subject(),
              Micros.toUsd(r.headroomMicros()).toPlainString(),
              Micros.toUsd(request.amountMicros()).toPlainString());
      return api.error(
          StatusCodes.PAYMENT_REQUIRED,
          new BudgetErrorBody(
              new BudgetError("budget_exceeded", r.cap().wireName(), r.subject(), message)));
    } else if (reply instanceof Conflict c) {
      return api.simpleError(StatusCodes.CONFLICT, "conflict", null, c.message());
    } else if (reply instanceof LedgerProtocol.IdReused u) {
      return api.simpleError(
          StatusCodes.CONFLICT,
          "id_reused",
          null,
          "reservation id "
              + u.id()
              + " was used before the idempotency window (or matches a remembered past id); use a new id");
    } else if (reply instanceof Invalid i) {
      return api.simpleError(StatusCodes.BAD_REQUEST, "invalid_request", i.field(), i.message());
    } else if (reply instanceof Busy b) {
      return busy(api, b);
    }
    throw new IllegalStateException("unexpected reply " + reply);
  }

  private HttpResponse closed(CloseReply reply) {
    return closeAnswer(api, reply);
  }

  /**
   * A settle or void answer as HTTP: the ledger API's shapes, shared with the admin API's operator
   * settle and void so both answer alike.
   */
  public static HttpResponse closeAnswer(JsonApi api, CloseReply reply) {
    if (reply instanceof Closed c) {
      return api.json(StatusCodes.OK, ClosedBody.of(c));
    } else if (reply instanceof NotFound n) {
      return api.simpleError(StatusCodes.NOT_FOUND, "not_found", null, "no reservation " + n.id());
    } else if (reply instanceof Forbidden f) {
      return api.simpleError(StatusCodes.FORBIDDEN, "forbidden", null, f.message());
    } else if (reply instanceof NotOpen n) {
      return api.simpleError(
          StatusCodes.CONFLICT,
          "conflict",
          null,
          "reservation "
              + n.id()
              + " was "
              + n.status().wireName()
              + "; there is nothing to close");
    } else if (reply instanceof Conflict c) {
      return api.simpleError(StatusCodes.CONFLICT, "conflict", null, c.message());
    } else if (reply instanceof Invalid i) {
      return api.simpleError(StatusCodes.BAD_REQUEST, "invalid_request", i.field(), i.message());
    } else if (reply instanceof Busy b) {
      return busy(api, b);
    }
    throw new IllegalStateException("unexpected reply " + reply);
  }

  /**
   * The ledger's queue was full: 503 {@code ledger_busy} at once, with {@code retry-after}. Nothing
   * was decided, so the same request (same id) may simply be sent again.
   */
  public static HttpResponse busy(JsonApi api, Busy busy) {
    return api.simpleError(
            StatusCodes.SERVICE_UNAVAILABLE,
            "ledger_busy",
            null,
            "the ledger has more requests waiting than it takes (ledger.max-queued-commands); nothing was done: "
                + "retry the same request after "
                + busy.retryAfterSeconds()
                + " s")
        .addHeader(RawHeader.create("retry-after", String.valueOf(busy.retryAfterSeconds())));
  }

  private HttpResponse reservation(ReservationReply reply) {
    if (reply instanceof ReservationView v) {
      return v.owner() == Owner.LEDGER_API
          ? api.json(StatusCodes.OK, ReservationBody.of(v))
          : notVisible(v.id());
    } else if (reply instanceof NotFound n) {
      return api.simpleError(StatusCodes.NOT_FOUND, "not_found", null, "no reservation " + n.id());
    }
    throw new IllegalStateException("unexpected reply " + reply);
  }

  /**
   * A reservation of the provider routes, or any id of their namespace: answered as unknown,
   * without repeating the id, so the answer is the same whether a provider call holds it or not.
   */
  private HttpResponse notVisible(String id) {
    return api.simpleError(
        StatusCodes.NOT_FOUND,
        "not_found",
        null,
        Owner.impliedBy(id) == Owner.GATEWAY
            ? "no such reservation through the ledger API"
            : "no reservation " + id);
  }

  // --- helpers ---------------------------------------------------------------------------------

  /** Completes with the mapped answer, or 503 when the ledger does not answer in time. */
  private <R> Route answer(CompletionStage<R> reply, Function<R, HttpResponse> toResponse) {
    return api.answer(reply, toResponse, RETRY_HINT);
  }
}
