package dev.spendgateway.edge.admin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.money.Micros;
import java.math.BigDecimal;
import java.util.regex.Pattern;

/**
 * Parses and validates the admin API's bodies; every problem is a {@link BadRequest} naming the
 * field. Every write needs an {@code operator} and a {@code reason}: they are journaled with it.
 */
final class AdminRequests {
  static final BigDecimal MAX_USD = new BigDecimal("1000000");
  static final int MAX_TEXT = 500;
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9._:\\-]{1," + GlobalBudget.MAX_ID_LENGTH + "}");

  static final class BadRequest extends RuntimeException {
    final String field;

    BadRequest(String field, String message) {
      super(message);
      this.field = field;
    }
  }

  /** Who and why, required on every admin write. */
  record Who(String operator, String reason) {}

  /** {@code credit}: a positive amount taken off a brand's settled spend. */
  record Credit(long usdMicros, Who who) {}

  /** {@code adjustments}: a signed amount on a lane's caps (positive = charge). */
  record Adjustment(Lane lane, String subject, long deltaMicros, Who who) {}

  record Settle(long actualMicros, Who who) {}

  private final ObjectReader reader;

  AdminRequests(ObjectMapper mapper) {
    this.reader = mapper.reader().with(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
  }

  Credit credit(String body) {
    JsonNode json = object(body);
    long usd = usd(json.get("usd"), "usd", false);
    if (usd == 0) {
      throw new BadRequest("usd", "usd must be positive");
    }
    return new Credit(usd, who(json));
  }

  Adjustment adjustment(String body) {
    JsonNode json = object(body);
    String laneName = text(json.get("lane"), "lane");
    Lane lane = Lane.fromWireName(laneName)
        .orElseThrow(() -> new BadRequest("lane", "lane must be one of app, trial, free"));
    String subject = null;
    if (lane.needsSubject()) {
      subject = id(text(json.get("brand"), "brand"), "brand");
    }
    return new Adjustment(lane, subject, usd(json.get("deltaUsd"), "deltaUsd", true), who(json));
  }

  Settle settle(String body) {
    JsonNode json = object(body);
    return new Settle(usd(json.get("actualUsd"), "actualUsd", false), who(json));
  }

  Who who(String body) {
    return who(object(body));
  }

  static String id(String value, String field) {
    if (value == null || !ID.matcher(value).matches()) {
      throw new BadRequest(field, field + " must be 1-" + GlobalBudget.MAX_ID_LENGTH + " characters of [A-Za-z0-9._:-]");
    }
    return value;
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

  private JsonNode object(String body) {
    JsonNode json;
    try {
      json = reader.readTree(body);
    } catch (JsonProcessingException e) {
      throw new BadRequest("body", "body is not valid JSON");
    }
    if (json == null || !json.isObject()) {
      throw new BadRequest("body", "body must be a JSON object");
    }
    return json;
  }

  private static String text(JsonNode node, String field) {
    if (node == null || node.isNull()) {
      throw new BadRequest(field, field + " is required");
    }
    if (!node.isTextual()) {
      throw new BadRequest(field, field + " must be a string");
    }
    return node.textValue();
  }

  /** A dollar amount with at most 6 decimals, |x| up to {@link #MAX_USD}, as micros. */
  private static long usd(JsonNode node, String field, boolean signed) {
    if (node == null || node.isNull()) {
      throw new BadRequest(field, field + " is required");
    }
    if (!node.isNumber()) {
      throw new BadRequest(field, field + " must be a number of US dollars");
    }
    BigDecimal usd = node.decimalValue();
    if (!signed && usd.signum() < 0) {
      throw new BadRequest(field, field + " must not be negative");
    }
    if (usd.abs().compareTo(MAX_USD) > 0) {
      throw new BadRequest(field, field + " must be at most " + MAX_USD.toPlainString() + " in size");
    }
    try {
      return Micros.ofUsdExact(usd);
    } catch (ArithmeticException e) {
      throw new BadRequest(field, field + " must have at most 6 decimals");
    }
  }
}
