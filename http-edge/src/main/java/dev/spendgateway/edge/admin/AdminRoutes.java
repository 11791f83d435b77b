package dev.spendgateway.edge.admin;

import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.edge.admin.AdminRequests.Who;
import dev.spendgateway.edge.auth.GatewayAuth;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.json.JsonApi;
import dev.spendgateway.edge.json.JsonFields;
import dev.spendgateway.edge.ledger.LedgerRoutes;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerProtocol.AdjustRefused;
import dev.spendgateway.ledger.LedgerProtocol.AdjustReply;
import dev.spendgateway.ledger.LedgerProtocol.Adjusted;
import dev.spendgateway.ledger.LedgerProtocol.CloseReply;
import dev.spendgateway.ledger.LedgerProtocol.Conflict;
import dev.spendgateway.ledger.LedgerProtocol.Invalid;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.money.Micros;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The operators' write API, used by {@code bin/gateway-admin}. Every action goes to the running
 * ledger actor as a command and is journaled as an event carrying the operator and the reason;
 * nothing here touches the journal.
 *
 * <p>Behind the operator's own token ({@code gateway.admin-token}), never the callers' token: these
 * routes can credit away any cap, and every caller holds the gateway token. The gateway mounts them
 * only when an admin token is configured, ahead of (not behind) the caller-token check. Every write
 * that reaches the ledger is logged as one JSON line ({@link AdminLog}).
 *
 * <ul>
 *   <li>{@code POST /admin/brands/{brand}/credit} {@code
 *       {"usd","window","scope","operator","reason"[,"adjustmentId"]}}: lowers the brand's settled
 *       spend in the named day or month (and, for {@code "scope":"refund"}, the lane's and the
 *       global caps' too);
 *   <li>{@code POST /admin/adjustments} {@code
 *       {"lane","brand","deltaUsd","window","scope","operator","reason"[,"adjustmentId"]}}: signed
 *       correction on a lane's caps in the named day or month;
 *   <li>{@code POST /admin/reservations/{id}/settle} {@code {"actualUsd","operator","reason"}} and
 *       {@code POST /admin/reservations/{id}/void} {@code {"operator","reason"}}: close an open
 *       reservation on the caller's behalf (same answers as the ledger API's settle and void).
 * </ul>
 *
 * <p>An adjustment moves only the cap windows that contain the one it names ({@code window}: a UTC
 * day {@code 2026-11-29} or month {@code 2026-11}): a refund for yesterday lowers yesterday and
 * this month, never today's daily caps. {@code scope} says whose money it is: a {@code grant} moves
 * only the brand's (or preview's) own caps, a {@code refund} — the provider gave money back — moves
 * the lane pool and the global caps too.
 *
 * <p>Credit and adjust are idempotent by {@code adjustmentId} (chosen by the client, else by the
 * server as {@code adj-<uuid>}): the same id with the same lane, brand, amount, window, scope and
 * operator answers the first result again (200, same body) and changes nothing; the same id for a
 * different adjustment is a 409 {@code conflict}, like a reused reservation id on the ledger API.
 * So a credit that timed out is retried safely with the id it was sent with.
 *
 * <p>The ledger bounds every credit and adjustment: one above {@code ledger.max-adjustment-usd} is
 * a 400 naming the amount field; one that would take a touched cap window's settled spend below
 * zero (more headroom than the cap) is a 409 {@code adjustment_refused} naming that window. Either
 * way nothing is journaled.
 */
public final class AdminRoutes extends AllDirectives {
  private final LedgerClient ledger;
  private final GatewayAuth adminAuth;

  /**
   * Settle and void when the ledger did not answer in time (credit and adjust name their id
   * instead). Closing a reservation twice answers the first result, so the same call is safe.
   */
  private static final String RETRY_HINT =
      "retrying the same call is safe: a reservation closes once and a repeat answers the first result";

  private final JsonApi api;
  private final AdminRequests requests;

  /**
   * @param adminAuth checks the operator's token (never the callers'); the gateway builds these
   *     routes only when one is configured
   * @param bodyReadTimeout {@code gateway.body-read-timeout}: how long a request body may take
   */
  public AdminRoutes(
      LedgerClient ledger, ObjectMapper mapper, GatewayAuth adminAuth, Duration bodyReadTimeout) {
    this.ledger = ledger;
    this.adminAuth = adminAuth;
    this.api = new JsonApi(mapper, bodyReadTimeout);
    this.requests = new AdminRequests(mapper);
  }

  /**
   * Everything under {@code /admin}: 401 without the admin token (the caller token included), and
   * with it the writes below or a 404; nothing under {@code /admin} falls through to other routes.
   */
  public Route route() {
    return pathPrefix(
        "admin",
        () ->
            adminAuth.authorized(
                () ->
                    complete(
                        api.simpleError(
                            StatusCodes.UNAUTHORIZED, "unauthorized", null, UNAUTHORIZED)),
                () ->
                    concat(
                        path(
                            segment("brands").slash(segment()).slash("credit"),
                            brand -> post(() -> credit(brand))),
                        path("adjustments", () -> post(this::adjust)),
                        path(
                            segment("reservations").slash(segment()).slash("settle"),
                            id -> post(() -> settle(id))),
                        path(
                            segment("reservations").slash(segment()).slash("void"),
                            id -> post(() -> voidReservation(id))),
                        complete(
                            GatewayErrors.notFound(
                                Shape.GATEWAY, "No such route on this gateway.")))));
  }

  private static final String UNAUTHORIZED =
      "Missing or wrong admin token: the /admin routes take the operator's "
          + "token (GATEWAY_ADMIN_TOKEN, not the callers' GATEWAY_TOKEN) as `x-api-key: <token>` or "
          + "`Authorization: Bearer <token>`.";

  /**
   * The answer to credit and adjust: the facts of the adjustment applied under that id (the first).
   */
  @JsonInclude(JsonInclude.Include.ALWAYS)
  record AdjustedBody(
      String adjustmentId,
      String lane,
      String brand,
      BigDecimal deltaUsd,
      String window,
      String scope,
      String operator,
      String reason) {}

  /** 409 when the adjustment would take a cap window's settled spend below zero. */
  @JsonInclude(JsonInclude.Include.ALWAYS)
  record RefusedBody(Refusal error) {}

  @JsonInclude(JsonInclude.Include.ALWAYS)
  record Refusal(
      String type,
      String cap,
      String subject,
      String window,
      BigDecimal spentUsd,
      String message) {}

  private Route credit(String brand) {
    return api.body(
        text -> {
          String subject = JsonFields.id(brand, "brand");
          AdminRequests.Credit credit = requests.credit(text);
          return adjusted(
              "credit",
              "usd",
              credit.adjustmentId(),
              Lane.APP,
              subject,
              -credit.usdMicros(),
              credit.who(),
              credit.target());
        });
  }

  private Route adjust() {
    return api.body(
        text -> {
          AdminRequests.Adjustment a = requests.adjustment(text);
          return adjusted(
              "adjust",
              "deltaUsd",
              a.adjustmentId(),
              a.lane(),
              a.subject(),
              a.deltaMicros(),
              a.who(),
              a.target());
        });
  }

  /**
   * @param amountField the body field holding the amount, named by a refusal of its size
   */
  private Route adjusted(
      String action,
      String amountField,
      Optional<String> requestedId,
      Lane lane,
      String subject,
      long deltaMicros,
      Who who,
      AdminRequests.Target target) {
    String adjustmentId = requestedId.orElseGet(() -> "adj-" + UUID.randomUUID());
    CompletionStage<AdjustReply> reply =
        ledger.adjust(
            adjustmentId,
            who.operator(),
            who.reason(),
            lane,
            subject,
            deltaMicros,
            target.window(),
            target.scope());
    IntFunction<AdminLog.Entry> entry =
        status ->
            new AdminLog.Entry(
                Instant.now(),
                action,
                adjustmentId,
                requestedId.isPresent() ? "client" : "server",
                lane.wireName(),
                subject,
                Micros.toUsd(deltaMicros),
                who.operator(),
                who.reason(),
                status);
    return logged(
        reply,
        r -> adjusted(r, amountField),
        entry,
        "retrying with the same adjustmentId ("
            + adjustmentId
            + ") is safe: the ledger applies an adjustment id at most once");
  }

  /**
   * The ledger's adjustment answers as HTTP; a reused id is a conflict like a reused reservation
   * id.
   */
  private HttpResponse adjusted(AdjustReply reply, String amountField) {
    if (reply instanceof Adjusted a) {
      return api.json(
          StatusCodes.OK,
          new AdjustedBody(
              a.adjustmentId(),
              a.lane().wireName(),
              a.subject(),
              Micros.toUsd(a.deltaMicros()),
              a.window(),
              a.scope().wireName(),
              a.operator(),
              a.reason()));
    } else if (reply instanceof Conflict c) {
      return api.simpleError(StatusCodes.CONFLICT, "conflict", null, c.message());
    } else if (reply instanceof AdjustRefused r) {
      return api.error(
          StatusCodes.CONFLICT,
          new RefusedBody(
              new Refusal(
                  "adjustment_refused",
                  r.cap().wireName(),
                  r.subject(),
                  r.window(),
                  Micros.toUsd(r.settledMicros()),
                  r.message())));
    } else if (reply instanceof Invalid i) {
      // The ledger names its own command's field; a credit's body calls the amount "usd".
      String field = i.field().equals("deltaUsd") ? amountField : i.field();
      String message =
          i.field().equals("deltaUsd")
              ? amountField + i.message().substring("deltaUsd".length())
              : i.message();
      return api.simpleError(StatusCodes.BAD_REQUEST, "invalid_request", field, message);
    }
    throw new IllegalStateException("unexpected reply " + reply);
  }

  private Route settle(String id) {
    return api.body(
        text -> {
          String checked = JsonFields.id(id, "id");
          AdminRequests.Settle s = requests.settle(text);
          IntFunction<AdminLog.Entry> entry =
              status ->
                  new AdminLog.Entry(
                      Instant.now(),
                      "settle",
                      checked,
                      null,
                      null,
                      null,
                      Micros.toUsd(s.actualMicros()),
                      s.who().operator(),
                      s.who().reason(),
                      status);
          return logged(
              ledger.operatorSettle(
                  checked, s.actualMicros(), s.who().operator(), s.who().reason()),
              this::closed,
              entry,
              RETRY_HINT);
        });
  }

  private Route voidReservation(String id) {
    return api.body(
        text -> {
          String checked = JsonFields.id(id, "id");
          Who who = requests.who(text);
          IntFunction<AdminLog.Entry> entry =
              status ->
                  new AdminLog.Entry(
                      Instant.now(),
                      "void",
                      checked,
                      null,
                      null,
                      null,
                      null,
                      who.operator(),
                      who.reason(),
                      status);
          return logged(
              ledger.operatorVoid(checked, who.operator(), who.reason()),
              this::closed,
              entry,
              RETRY_HINT);
        });
  }

  /** The ledger's close answers as HTTP, exactly as the ledger API gives them. */
  private HttpResponse closed(CloseReply reply) {
    return LedgerRoutes.closeAnswer(api, reply);
  }

  // --- helpers ---------------------------------------------------------------------------------

  /**
   * Completes with the mapped answer, or 503 when the ledger does not answer in time; either way
   * writes the one admin log line with the status answered.
   */
  private <R> Route logged(
      CompletionStage<R> reply,
      Function<R, HttpResponse> toResponse,
      IntFunction<AdminLog.Entry> entry,
      String retryHint) {
    reply.whenComplete(
        (answered, failure) -> {
          if (failure != null) {
            AdminLog.write(entry.apply(StatusCodes.SERVICE_UNAVAILABLE.intValue()));
          }
        });
    return api.answer(
        reply,
        answered -> {
          HttpResponse response = toResponse.apply(answered);
          AdminLog.write(entry.apply(response.status().intValue()));
          return response;
        },
        retryHint);
  }
}
