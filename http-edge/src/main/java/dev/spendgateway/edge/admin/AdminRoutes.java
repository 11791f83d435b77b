package dev.spendgateway.edge.admin;

import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.edge.admin.AdminRequests.Who;
import dev.spendgateway.edge.json.JsonApi;
import dev.spendgateway.edge.json.JsonFields;
import dev.spendgateway.edge.ledger.LedgerRoutes;
import dev.spendgateway.ledger.GlobalBudget.AdjustReply;
import dev.spendgateway.ledger.GlobalBudget.Adjusted;
import dev.spendgateway.ledger.GlobalBudget.CloseReply;
import dev.spendgateway.ledger.GlobalBudget.Conflict;
import dev.spendgateway.ledger.GlobalBudget.Invalid;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.money.Micros;
import java.math.BigDecimal;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operators' write API, used by {@code bin/gateway-admin}. Every action goes to the running
 * ledger actor as a command and is journaled as an event carrying the operator and the reason;
 * nothing here touches the journal. Behind the gateway token (composed with the gateway API).
 *
 * <ul>
 *   <li>{@code POST /admin/brands/{brand}/credit} {@code {"usd","operator","reason"[,"adjustmentId"]}}:
 *       lowers the brand's (and the global caps') settled spend in the current windows;
 *   <li>{@code POST /admin/adjustments}
 *       {@code {"lane","brand","deltaUsd","operator","reason"[,"adjustmentId"]}}: signed correction
 *       on a lane's caps;
 *   <li>{@code POST /admin/reservations/{id}/settle} {@code {"actualUsd","operator","reason"}} and
 *       {@code POST /admin/reservations/{id}/void} {@code {"operator","reason"}}: close an open
 *       reservation on the caller's behalf (same answers as the ledger API's settle and void).
 * </ul>
 *
 * <p>Credit and adjust are idempotent by {@code adjustmentId} (chosen by the client, else by the
 * server as {@code adj-<uuid>}): the same id with the same lane, brand, amount and operator answers
 * the first result again (200, same body) and changes nothing; the same id for a different
 * adjustment is a 409 {@code conflict}, like a reused reservation id on the ledger API. So a credit
 * that timed out is retried safely with the id it was sent with.
 */
public final class AdminRoutes extends AllDirectives {
  private static final Logger log = LoggerFactory.getLogger(AdminRoutes.class);

  private final LedgerClient ledger;
  /**
   * Settle and void when the ledger did not answer in time (credit and adjust name their id
   * instead). Closing a reservation twice answers the first result, so the same call is safe.
   */
  private static final String RETRY_HINT =
      "retrying the same call is safe: a reservation closes once and a repeat answers the first result";

  private final JsonApi api;
  private final AdminRequests requests;

  public AdminRoutes(LedgerClient ledger, ObjectMapper mapper) {
    this.ledger = ledger;
    this.api = new JsonApi(mapper);
    this.requests = new AdminRequests(mapper);
  }

  public Route route() {
    return pathPrefix("admin", () -> concat(
        path(segment("brands").slash(segment()).slash("credit"), brand -> post(() -> credit(brand))),
        path("adjustments", () -> post(this::adjust)),
        path(segment("reservations").slash(segment()).slash("settle"), id -> post(() -> settle(id))),
        path(segment("reservations").slash(segment()).slash("void"), id -> post(() -> voidReservation(id)))));
  }

  /** The answer to credit and adjust: the facts of the adjustment applied under that id (the first). */
  @JsonInclude(JsonInclude.Include.ALWAYS)
  record AdjustedBody(String adjustmentId, String lane, String brand, BigDecimal deltaUsd, String operator, String reason) {}

  @JsonInclude(JsonInclude.Include.ALWAYS)

  private Route credit(String brand) {
    return api.body(text -> {
      String subject = JsonFields.id(brand, "brand");
      AdminRequests.Credit credit = requests.credit(text);
      return adjusted(credit.adjustmentId(), Lane.APP, subject, -credit.usdMicros(), credit.who());
    });
  }

  private Route adjust() {
    return api.body(text -> {
      AdminRequests.Adjustment a = requests.adjustment(text);
      return adjusted(a.adjustmentId(), a.lane(), a.subject(), a.deltaMicros(), a.who());
    });
  }

  private Route adjusted(Optional<String> requestedId, Lane lane, String subject, long deltaMicros, Who who) {
    String adjustmentId = requestedId.orElseGet(() -> "adj-" + UUID.randomUUID());
    log.info("admin adjust: id={} ({}) operator={} lane={} subject={} deltaUsd={} reason={}", adjustmentId,
        requestedId.isPresent() ? "client's" : "server's", who.operator(), lane.wireName(), subject,
        Micros.toUsd(deltaMicros), who.reason());
    CompletionStage<AdjustReply> reply =
        ledger.adjust(adjustmentId, who.operator(), who.reason(), lane, subject, deltaMicros);
    return api.answer(reply, this::adjusted, "retrying with the same adjustmentId (" + adjustmentId
        + ") is safe: the ledger applies an adjustment id at most once");
  }

  /** The ledger's adjustment answers as HTTP; a reused id is a conflict like a reused reservation id. */
  private HttpResponse adjusted(AdjustReply reply) {
    if (reply instanceof Adjusted a) {
      return api.json(StatusCodes.OK, new AdjustedBody(a.adjustmentId(), a.lane().wireName(), a.subject(),
          Micros.toUsd(a.deltaMicros()), a.operator(), a.reason()));
    } else if (reply instanceof Conflict c) {
      return api.simpleError(StatusCodes.CONFLICT, "conflict", null, c.message());
    } else if (reply instanceof Invalid i) {
      return api.simpleError(StatusCodes.BAD_REQUEST, "invalid_request", i.field(), i.message());
    }
    throw new IllegalStateException("unexpected reply " + reply);
  }

  private Route settle(String id) {
    return api.body(text -> {
      String checked = JsonFields.id(id, "id");
      AdminRequests.Settle s = requests.settle(text);
      log.info("admin settle: id={} operator={} actualUsd={} reason={}", checked, s.who().operator(),
          Micros.toUsd(s.actualMicros()), s.who().reason());
      return answer(ledger.operatorSettle(checked, s.actualMicros(), s.who().operator(), s.who().reason()), this::closed);
    });
  }

  private Route voidReservation(String id) {
    return api.body(text -> {
      String checked = JsonFields.id(id, "id");
      Who who = requests.who(text);
      log.info("admin void: id={} operator={} reason={}", checked, who.operator(), who.reason());
      return answer(ledger.operatorVoid(checked, who.operator(), who.reason()), this::closed);
    });
  }

  /** The ledger's close answers as HTTP, exactly as the ledger API gives them. */
  private HttpResponse closed(CloseReply reply) {
    return LedgerRoutes.closeAnswer(api, reply);
  }

  // --- helpers ---------------------------------------------------------------------------------

  /** Completes with the mapped answer, or 503 when the ledger does not answer in time. */
  private <R> Route answer(CompletionStage<R> reply, Function<R, HttpResponse> toResponse) {
    return api.answer(reply, toResponse, RETRY_HINT);
  }
}
