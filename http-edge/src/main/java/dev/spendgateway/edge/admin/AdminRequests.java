package dev.spendgateway.edge.admin;

import static dev.spendgateway.edge.json.JsonFields.id;
import static dev.spendgateway.edge.json.JsonFields.lane;
import static dev.spendgateway.edge.json.JsonFields.signedUsd;
import static dev.spendgateway.edge.json.JsonFields.text;
import static dev.spendgateway.edge.json.JsonFields.usd;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.edge.json.JsonFields;
import dev.spendgateway.edge.json.JsonFields.BadRequest;
import dev.spendgateway.policy.access.Lane;

/**
 * Parses and validates the admin API's bodies; every problem is a {@link BadRequest} naming the
 * field. Every write needs an {@code operator} and a {@code reason}: they are journaled with it.
 */
final class AdminRequests {
  static final int MAX_TEXT = 500;

  /** Who and why, required on every admin write. */
  record Who(String operator, String reason) {}

  /** {@code credit}: a positive amount taken off a brand's settled spend. */
  record Credit(long usdMicros, Who who) {}

  /** {@code adjustments}: a signed amount on a lane's caps (positive = charge). */
  record Adjustment(Lane lane, String subject, long deltaMicros, Who who) {}

  record Settle(long actualMicros, Who who) {}

  private final JsonFields fields;

  AdminRequests(ObjectMapper mapper) {
    this.fields = new JsonFields(mapper);
  }

  Credit credit(String body) {
    JsonNode json = fields.object(body);
    long usd = usd(json.get("usd"), "usd");
    if (usd == 0) {
      throw new BadRequest("usd", "usd must be positive");
    }
    return new Credit(usd, who(json));
  }

  Adjustment adjustment(String body) {
    JsonNode json = fields.object(body);
    Lane lane = lane(json.get("lane"));
    String subject = lane.needsSubject() ? id(text(json.get("brand"), "brand"), "brand") : null;
    return new Adjustment(lane, subject, signedUsd(json.get("deltaUsd"), "deltaUsd"), who(json));
  }

  Settle settle(String body) {
    JsonNode json = fields.object(body);
    return new Settle(usd(json.get("actualUsd"), "actualUsd"), who(json));
  }

  Who who(String body) {
    return who(fields.object(body));
  }

  private static Who who(JsonNode json) {
    return new Who(limited(text(json.get("operator"), "operator"), "operator"),
        limited(text(json.get("reason"), "reason"), "reason"));
  }

  private static String limited(String value, String field) {
    if (value.isBlank()) {
      throw new BadRequest(field, field + " must not be blank");
    }
    if (value.length() > MAX_TEXT) {
      throw new BadRequest(field, field + " must be at most " + MAX_TEXT + " characters");
    }
    return value;
  }
}
