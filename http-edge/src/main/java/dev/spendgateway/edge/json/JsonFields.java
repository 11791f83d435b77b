package dev.spendgateway.edge.json;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.money.UsdAmount;
import java.math.BigDecimal;

/**
 * Reads the gateway's own JSON API bodies (ledger and admin) strictly. Every problem is a {@link
 * BadRequest} naming the field, so a malformed request gets a 400 and never reaches the books.
 */
public final class JsonFields {
  /** A request the ledger must not see; {@code field} is what to fix. */
  public static final class BadRequest extends RuntimeException {
    public final String field;

    public BadRequest(String field, String message) {
      super(message, null, false, false);
      this.field = field;
    }
  }

  private final ObjectReader reader;
  private final ObjectMapper mapper;

  public JsonFields(ObjectMapper mapper) {
    // Exact decimals: 0.30 stays 0.30, never the double 0.29999…; a key given twice is refused, not
    // read as its last value ({"amountUsd":5,"amountUsd":0.01} means different things to different
    // parsers);
    // nothing but whitespace may follow the object ({"id":"a"} {"id":"b"} is two requests, not
    // one).
    this.mapper = mapper;
    this.reader =
        mapper
            .reader()
            .with(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .with(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .with(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
  }

  /** The body as a JSON object. */
  public JsonNode object(String body) {
    JsonNode json;
    try {
      json = reader.readTree(body);
    } catch (JsonProcessingException e) {
      String reason = e.getOriginalMessage();
      if (reason != null && reason.startsWith("Duplicate field")) {
        throw new BadRequest("body", "body names a field more than once");
      }
      if (reason != null && reason.startsWith("Trailing token")) {
        throw new BadRequest("body", "body has more after its JSON object; send exactly one");
      }
      throw new BadRequest("body", "body is not valid JSON");
    } catch (NumberFormatException e) {
      // Valid JSON whose number no BigDecimal holds (an exponent beyond an int: 1e2147483648):
      // Jackson throws this unchecked, which would end as a plain-text 500.
      String field = fieldWithUnreadableNumber(body);
      throw new BadRequest(
          field, field + " holds a number out of range (its exponent is too large or too small)");
    }
    if (json == null || !json.isObject()) {
      throw new BadRequest("body", "body must be a JSON object");
    }
    return json;
  }

  /**
   * The top-level field holding the first number of {@code body} that no {@link BigDecimal} can
   * hold, or {@code body} when it is not inside one.
   */
  private String fieldWithUnreadableNumber(String body) {
    try (JsonParser p = mapper.getFactory().createParser(body)) {
      for (JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
        if (t.isNumeric()) {
          try {
            p.getDecimalValue();
          } catch (NumberFormatException e) {
            JsonStreamContext ctx = p.getParsingContext();
            while (ctx.getParent() != null && !ctx.getParent().inRoot()) {
              ctx = ctx.getParent();
            }
            String name = ctx.inObject() ? ctx.getCurrentName() : null;
            return name != null ? name : "body";
          }
        }
      }
    } catch (java.io.IOException | RuntimeException e) {
      // fall through: the body as a whole
    }
    return "body";
  }

  /** A required string. */
  public static String text(JsonNode node, String field) {
    if (node == null || node.isNull()) {
      throw new BadRequest(field, field + " is required");
    }
    if (!node.isTextual()) {
      throw new BadRequest(field, field + " must be a string");
    }
    return node.textValue();
  }

  /** An id (from a body or a path) obeying {@link dev.spendgateway.policy.access.LedgerId}. */
  public static String id(String value, String field) {
    // The same rule as x-spend-brand on the provider routes: a brand that can spend can be looked
    // up.
    if (!dev.spendgateway.policy.access.LedgerId.isValid(value)) {
      throw new BadRequest(
          field, field + " must be " + dev.spendgateway.policy.access.LedgerId.DESCRIPTION);
    }
    return value;
  }

  public static Lane lane(JsonNode node) {
    return Lane.fromWireName(text(node, "lane"))
        .orElseThrow(() -> new BadRequest("lane", "lane must be one of app, trial, free"));
  }

  /**
   * A non-negative dollar amount exact in micro-dollars ({@link UsdAmount}), up to {@link
   * UsdAmount#MAX_USD}, as micros.
   */
  public static long usd(JsonNode node, String field) {
    return amount(node, field, false);
  }

  /**
   * A signed dollar amount exact in micro-dollars ({@link UsdAmount}), |x| up to {@link
   * UsdAmount#MAX_USD}, as micros.
   */
  public static long signedUsd(JsonNode node, String field) {
    return amount(node, field, true);
  }

  private static long amount(JsonNode node, String field, boolean signed) {
    if (node == null || node.isNull()) {
      throw new BadRequest(field, field + " is required");
    }
    if (!node.isNumber()) {
      throw new BadRequest(field, field + " " + UsdAmount.NOT_A_NUMBER);
    }
    BigDecimal usd = node.decimalValue();
    UsdAmount.Checked checked = signed ? UsdAmount.signed(usd) : UsdAmount.nonNegative(usd);
    if (checked instanceof UsdAmount.Invalid invalid) {
      throw new BadRequest(field, field + " " + invalid.reason());
    }
    return ((UsdAmount.Valid) checked).micros();
  }
}
