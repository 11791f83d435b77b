package dev.spendgateway.edge.admin;

import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.time.Instant;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One JSON object per admin write, on the {@code admin} logger, once the ledger has answered (or
 * not). Operator and reason are caller text: written as JSON string values, with every non-ASCII
 * character escaped too, the line stays one line whatever they hold, and a reader can tell the
 * values from the record around them. Never a token.
 */
final class AdminLog {
  private static final Logger ADMIN = LoggerFactory.getLogger("admin");
  private static final JsonMapper JSON =
      JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

  private AdminLog() {}

  /**
   * One admin write as logged.
   *
   * @param action {@code credit}, {@code adjust}, {@code settle} or {@code void}
   * @param id the adjustment id (credit, adjust) or the reservation id (settle, void)
   * @param idChosenBy {@code client} or {@code server} for an adjustment id; null for a reservation
   *     id
   * @param lane the lane of a credit or adjustment; null for settle and void
   * @param brand brand or preview id; null when none
   * @param usd signed delta of a credit or adjustment, actual cost of a settle; null for a void
   * @param status the HTTP status answered ({@code 503} when the ledger did not answer in time)
   */
  record Entry(
      Instant time,
      String action,
      String id,
      String idChosenBy,
      String lane,
      String brand,
      BigDecimal usd,
      String operator,
      String reason,
      int status) {}

  static void write(Entry entry) {
    if (ADMIN.isInfoEnabled()) {
      ADMIN.info(toJson(entry));
    }
  }

  /** Stable field names; nulls are written so every line has the same keys. */
  static String toJson(Entry e) {
    ObjectNode n = JSON.createObjectNode();
    n.put("time", e.time().toString());
    n.put("action", e.action());
    n.put("id", e.id());
    n.put("id_chosen_by", e.idChosenBy());
    n.put("lane", e.lane());
    n.put("brand", e.brand());
    n.put("usd", e.usd());
    n.put("operator", e.operator());
    n.put("reason", e.reason());
    n.put("status", e.status());
    try {
      return JSON.writeValueAsString(n);
    } catch (com.fasterxml.jackson.core.JsonProcessingException impossible) {
      throw new IllegalStateException(
          "an ObjectNode of strings and numbers always writes", impossible);
    }
  }
}
