package dev.spendgateway.edge.alerts;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.ledger.LedgerProtocol.CapUsage;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Pure: which thresholds each cap's settled spend has reached ({@code spent >= threshold × limit},
 * exact in micro-dollars) in its current window, as {@code budget_threshold} alerts, one per (cap,
 * subject, window, threshold). Held (reserved) money does not count: an alert says what was spent,
 * not what might be.
 */
public final class BudgetThresholds {
  private static final ObjectMapper JSON = new ObjectMapper();

  private BudgetThresholds() {}

  public static List<Alert> reached(Usage usage, List<BigDecimal> thresholds, Instant at) {
    List<Alert> alerts = new ArrayList<>();
    for (CapUsage c : usage.caps()) {
      if (c.limitMicros() <= 0) {
        continue; // a cap of 0 refuses everything; there is nothing to run out of
      }
      BigDecimal spent = BigDecimal.valueOf(c.spentMicros());
      BigDecimal limit = BigDecimal.valueOf(c.limitMicros());
      for (BigDecimal threshold : thresholds) {
        if (spent.compareTo(threshold.multiply(limit)) >= 0) {
          alerts.add(alert(c, threshold, at));
        }
      }
    }
    return alerts;
  }

  private static Alert alert(CapUsage c, BigDecimal threshold, Instant at) {
    String cap = c.cap().wireName();
    ObjectNode body = JSON.createObjectNode();
    body.put("type", "budget_threshold");
    body.put("cap", cap);
    if (c.subject() == null) {
      body.putNull("subject");
    } else {
      body.put("subject", c.subject());
    }
    body.put("window", c.window());
    body.put("limitUsd", BigDecimal.valueOf(c.limitMicros(), 6).stripTrailingZeros());
    body.put("spentUsd", BigDecimal.valueOf(c.spentMicros(), 6).stripTrailingZeros());
    body.put("threshold", threshold.stripTrailingZeros());
    body.put("at", at.toString());
    String key =
        String.join(
            "\u0000",
            "budget_threshold",
            cap,
            c.subject() == null ? "" : c.subject(),
            c.window(),
            threshold.stripTrailingZeros().toPlainString());
    return new Alert(key, "budget_threshold", body.toString());
  }
}
