package dev.spendgateway.edge.ledger;

import static dev.spendgateway.edge.json.JsonFields.id;
import static dev.spendgateway.edge.json.JsonFields.lane;
import static dev.spendgateway.edge.json.JsonFields.text;
import static dev.spendgateway.edge.json.JsonFields.usd;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.edge.json.JsonFields;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.access.SpendModel;
import dev.spendgateway.policy.access.SpendTag;

/**
 * Reads and validates ledger API bodies. Every problem becomes a {@link JsonFields.BadRequest}
 * naming the field, so a malformed request gets a 400 and never reaches the books.
 */
final class LedgerRequests {
  private final JsonFields fields;

  LedgerRequests(ObjectMapper mapper) {
    this.fields = new JsonFields(mapper);
  }

  /**
   * {@code {"id","lane","brand","amountUsd","brandDailyUsd","brandMonthlyUsd","tag","model",
   * "provider"}} ({@code tag} optional: the workflow tag, as {@code x-spend-tag} on the provider
   * routes; {@code model} and {@code provider} optional: what the hold pays for, journaled for
   * reports, as the provider routes journal their own). The id must lie outside the provider
   * routes' namespace ({@code gw-}), so a caller can never collide with, or pose as, a provider
   * call; the amount must be above 0, since an empty hold reserves nothing.
   */
  ReserveRequest reserve(String body) {
    JsonNode json = fields.object(body);
    String id = id(text(json.get("id"), "id"), "id");
    if (Owner.impliedBy(id) == Owner.GATEWAY) {
      throw new JsonFields.BadRequest(
          "id",
          "ids starting with "
              + Owner.GATEWAY_ID_PREFIX
              + " are the gateway's own; choose another id");
    }
    Lane lane = lane(json.get("lane"));
    // A field the lane does not use is ignored when well-formed and refused when malformed, as
    // the provider routes treat their spend headers: a malformed field is a bug in the caller.
    String brand = null;
    if (lane.needsSubject() || present(json, "brand")) {
      String checked = id(text(json.get("brand"), "brand"), "brand");
      brand = lane.needsSubject() ? checked : null;
    }
    long amount = usd(json.get("amountUsd"), "amountUsd");
    if (amount == 0) {
      throw new JsonFields.BadRequest("amountUsd", "amountUsd must be greater than 0");
    }
    long daily = cap(json, lane, "brandDailyUsd");
    long monthly = cap(json, lane, "brandMonthlyUsd");
    String tag = null;
    if (present(json, "tag")) {
      tag = text(json.get("tag"), "tag");
      if (!SpendTag.isValid(tag)) {
        throw new JsonFields.BadRequest("tag", "tag must be " + SpendTag.DESCRIPTION);
      }
    }
    return new ReserveRequest(
        id,
        lane,
        brand,
        amount,
        daily,
        monthly,
        tag,
        label(json, "model"),
        label(json, "provider"));
  }

  /** An optional model or provider name, for reports; null when absent. */
  private static String label(JsonNode json, String field) {
    if (!present(json, field)) {
      return null;
    }
    String name = text(json.get(field), field);
    if (!SpendModel.isValid(name)) {
      throw new JsonFields.BadRequest(field, field + " must be " + SpendModel.DESCRIPTION);
    }
    return name;
  }

  private static boolean present(JsonNode json, String field) {
    return json.hasNonNull(field);
  }

  /** A brand cap: required on the app lane; elsewhere unused, but still refused when malformed. */
  private static long cap(JsonNode json, Lane lane, String field) {
    if (lane != Lane.APP && !present(json, field)) {
      return 0;
    }
    long micros = usd(json.get(field), field);
    return lane == Lane.APP ? micros : 0;
  }

  /** {@code {"actualUsd"}}: the real cost (the ledger refuses it above the reserved amount). */
  long settle(String body) {
    return usd(fields.object(body).get("actualUsd"), "actualUsd");
  }
}
