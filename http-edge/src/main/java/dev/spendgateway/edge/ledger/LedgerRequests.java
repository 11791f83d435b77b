package dev.spendgateway.edge.ledger;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.money.Micros;
import java.math.BigDecimal;
import java.util.regex.Pattern;

/**
 * Reads and validates ledger API bodies. Every problem becomes a {@link BadRequest} naming the
 * field, so a malformed request gets a 400 and never reaches the books.
 */
final class LedgerRequests {
  /** Largest amount or cap one request may name, in USD; anything above is a typo or an attack. */
  static final BigDecimal MAX_USD = new BigDecimal("1000000");

  /** Reservation ids: request ids, UUIDs and the like; no whitespace or control characters. */
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9._:\\-]{1," + GlobalBudget.MAX_ID_LENGTH + "}");

  /** A request the ledger must not see; {@code field} is what to fix. */
  static final class BadRequest extends RuntimeException {
    final String field;

    BadRequest(String field, String message) {
      super(message, null, false, false);
      this.field = field;
    }
  }

  private final ObjectReader reader;

  LedgerRequests(ObjectMapper mapper) {
    // exact decimals: 0.30 stays 0.30, never the double 0.29999…; a key given twice is refused, not
    // read as its last value ({"amountUsd":5,"amountUsd":0.01} means different things to different parsers)
    this.reader =
        mapper.reader()
            .with(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .with(com.fasterxml.jackson.core.JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
  }

  /** {@code {"id","lane","brand","amountUsd","brandDailyUsd","brandMonthlyUsd"}}. */
  ReserveRequest reserve(String body) {
    JsonNode json = object(body);
    String id = id(json.get("id"), "id");
    Lane lane = lane(json.get("lane"));
    String brand = null;
    if (lane.needsSubject()) {
      brand = text(json.get("brand"), "brand");
      if (!ID.matcher(brand).matches()) {
        throw new BadRequest("brand", "brand must be 1-" + GlobalBudget.MAX_ID_LENGTH + " characters of [A-Za-z0-9._:-]");
      }
    }
    long amount = usd(json.get("amountUsd"), "amountUsd");
    long daily = lane == Lane.APP ? usd(json.get("brandDailyUsd"), "brandDailyUsd") : 0;
    long monthly = lane == Lane.APP ? usd(json.get("brandMonthlyUsd"), "brandMonthlyUsd") : 0;
    return new ReserveRequest(id, lane, brand, amount, daily, monthly);
  }

  /** {@code {"actualUsd"}}: the real cost. */
  long settle(String body) {
    return usd(object(body).get("actualUsd"), "actualUsd");
  }

  /** A reservation id from the path. */
  static String pathId(String id) {
    if (!ID.matcher(id).matches()) {
      throw new BadRequest("id", "id must be 1-" + GlobalBudget.MAX_ID_LENGTH + " characters of [A-Za-z0-9._:-]");
    }
    return id;
  }

  private JsonNode object(String body) {
    JsonNode json;
    try {
      json = reader.readTree(body);
    } catch (JsonProcessingException e) {
      String reason = e.getOriginalMessage();
      if (reason != null && reason.startsWith("Duplicate field")) {
        throw new BadRequest("body", "body names a field more than once");
      }
      throw new BadRequest("body", "body is not valid JSON");
    }
    if (json == null || !json.isObject()) {
      throw new BadRequest("body", "body must be a JSON object");
    }
    return json;
  }

  private static String id(JsonNode node, String field) {
    return pathIdNamed(text(node, field), field);
  }

  private static String pathIdNamed(String value, String field) {
    if (!ID.matcher(value).matches()) {
      throw new BadRequest(field, field + " must be 1-" + GlobalBudget.MAX_ID_LENGTH + " characters of [A-Za-z0-9._:-]");
    }
    return value;
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

  private static Lane lane(JsonNode node) {
    String name = text(node, "lane");
    return Lane.fromWireName(name)
        .orElseThrow(() -> new BadRequest("lane", "lane must be one of app, trial, free"));
  }

  /** A non-negative dollar amount with at most 6 decimals, up to {@link #MAX_USD}, as micros. */
  private static long usd(JsonNode node, String field) {
    if (node == null || node.isNull()) {
      throw new BadRequest(field, field + " is required");
    }
    if (!node.isNumber()) {
      throw new BadRequest(field, field + " must be a number of US dollars");
    }
    BigDecimal usd = node.decimalValue();
    if (usd.signum() < 0) {
      throw new BadRequest(field, field + " must not be negative");
    }
    if (usd.compareTo(MAX_USD) > 0) {
      throw new BadRequest(field, field + " must be at most " + MAX_USD.toPlainString());
    }
    try {
      return Micros.ofUsdExact(usd);
    } catch (ArithmeticException e) {
      throw new BadRequest(field, field + " must have at most 6 decimals");
    }
  }
}
