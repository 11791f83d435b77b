package dev.spendgateway.edge.call;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.edge.body.CallerJson;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.json.JsonApi;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.policy.money.Micros;
import java.util.List;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;

/**
 * A reservation the ledger did not hold, as the caller and the access line see it, in one wording
 * for every route: 402 when a cap would be exceeded (naming the cap, its headroom and the call's
 * worst case), 503 when the ledger did not answer in time or its queue was full (with {@code
 * retry-after}: nothing was decided, the caller may simply retry), 500 when it rejected the request
 * itself.
 *
 * @param response the answer in the caller's error shape
 * @param status its HTTP status
 * @param errorClass the access line's word
 */
public record BudgetRefusal(HttpResponse response, int status, String errorClass) {

  /**
   * @param reply the ledger's answer, null when it gave none (timeout, unavailable)
   * @param worstCaseMicros the amount the call asked to reserve: what the 402 says it needs
   */
  public static BudgetRefusal of(
      Shape shape, GlobalBudget.ReserveReply reply, long worstCaseMicros) {
    if (reply instanceof GlobalBudget.Refused refused) {
      return overCap(shape, refused, worstCaseMicros);
    }
    if (reply instanceof GlobalBudget.Busy busy) {
      return new BudgetRefusal(
          GatewayErrors.error(
              shape,
              503,
              "ledger_busy",
              "The budget ledger is busy; nothing was reserved or billed, retry after "
                  + busy.retryAfterSeconds()
                  + " s.",
              CallerJson.object(),
              List.of(RawHeader.create("retry-after", Integer.toString(busy.retryAfterSeconds())))),
          503,
          "ledger_busy");
    }
    if (reply == null) {
      return new BudgetRefusal(
          GatewayErrors.error(
              shape,
              503,
              "ledger_unavailable",
              "The budget ledger did not answer in time; try again shortly.",
              CallerJson.object(),
              List.of(RawHeader.create("retry-after", JsonApi.LEDGER_UNAVAILABLE_RETRY_AFTER))),
          503,
          "ledger_unavailable");
    }
    return new BudgetRefusal(
        GatewayErrors.error(
            shape, 500, "ledger_rejected", "The budget ledger rejected the reservation."),
        500,
        "ledger_rejected");
  }

  private static BudgetRefusal overCap(
      Shape shape, GlobalBudget.Refused refused, long worstCaseMicros) {
    String cap = refused.cap().wireName();
    ObjectNode extra = CallerJson.object();
    extra.put("cap", cap);
    if (refused.subject() == null) {
      extra.putNull("subject");
    } else {
      extra.put("subject", refused.subject());
    }
    extra.put("headroom_usd", Micros.toUsd(refused.headroomMicros()));
    String message =
        "Budget cap "
            + cap
            + (refused.subject() == null ? "" : " for " + refused.subject())
            + " would be exceeded: $"
            + Micros.toUsd(refused.headroomMicros()).toPlainString()
            + " of headroom left, this call needs up to $"
            + Micros.toUsd(worstCaseMicros).toPlainString()
            + ".";
    return new BudgetRefusal(
        GatewayErrors.error(shape, 402, "budget_exceeded", message, extra, List.of()),
        402,
        "budget_exceeded");
  }
}
