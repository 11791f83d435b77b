package dev.spendgateway.loadtest;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The books after a run, from {@code GET /usage} (its shape: README, "The ledger API"): no cap may
 * hold more than its limit ({@code spentUsd + reservedUsd <= limitUsd}), and for fixed-size
 * reservations exactly as many were accepted as fit in the headroom there was before the run. Pure:
 * JSON in, verdict out.
 */
final class BookCheck {
  private BookCheck() {}

  /** One row of {@code /usage}'s {@code caps} array. */
  record CapRow(
      String cap,
      String subject,
      String window,
      BigDecimal limitUsd,
      BigDecimal spentUsd,
      BigDecimal reservedUsd) {
    BigDecimal heldUsd() {
      return spentUsd.add(reservedUsd);
    }

    /** How far the cap is over its limit; zero when within it. */
    BigDecimal overshootUsd() {
      return heldUsd().subtract(limitUsd).max(BigDecimal.ZERO);
    }

    /** What is left under {@code limit} (which may be the caller's newer cap for a brand row). */
    BigDecimal remainingUnder(BigDecimal limit) {
      return limit.subtract(heldUsd()).max(BigDecimal.ZERO);
    }

    String label() {
      return subject == null ? cap + "[" + window + "]" : cap + "(" + subject + ")[" + window + "]";
    }
  }

  /**
   * The caller's side of a reservation: which lane, whose caps. Brand caps only for {@code app}.
   */
  record Lane(
      String lane,
      String brand,
      BigDecimal brandDailyUsd,
      BigDecimal brandMonthlyUsd,
      BigDecimal previewLifetimeUsd) {}

  /** Verdict of the check. {@code expectedAccepted} is empty when the count is not checkable. */
  record Result(
      BigDecimal overshootUsd,
      List<String> violations,
      Optional<Long> expectedAccepted,
      long accepted) {
    boolean ok() {
      return violations.isEmpty();
    }
  }

  static List<CapRow> parse(JsonNode usage) {
    JsonNode caps = usage.path("caps");
    if (!caps.isArray()) {
      throw new IllegalArgumentException("/usage has no caps array");
    }
    List<CapRow> rows = new ArrayList<>();
    for (JsonNode c : caps) {
      rows.add(
          new CapRow(
              c.path("cap").asText(),
              c.path("subject").isNull() || c.path("subject").isMissingNode()
                  ? null
                  : c.path("subject").asText(),
              c.path("window").asText(),
              usd(c, "limitUsd"),
              usd(c, "spentUsd"),
              usd(c, "reservedUsd")));
    }
    return rows;
  }

  private static BigDecimal usd(JsonNode row, String field) {
    JsonNode n = row.get(field);
    if (n == null || !n.isNumber()) {
      throw new IllegalArgumentException("/usage cap row without a numeric " + field + ": " + row);
    }
    return n.decimalValue();
  }

  /**
   * The most that can still be reserved on {@code lane} before the run: the smallest remaining
   * headroom over every cap a reservation on it counts against, in each cap's current (latest)
   * window. A brand or preview that has no row yet has its whole cap left. Empty when a cap that
   * applies is unknown.
   */
  static Optional<BigDecimal> headroom(List<CapRow> rows, Lane lane) {
    Map<String, CapRow> latest = latestWindows(rows);
    List<BigDecimal> remaining = new ArrayList<>();
    for (String global : List.of("global_daily", "global_monthly")) {
      CapRow row = latest.get(global + "|");
      if (row == null) {
        return Optional.empty();
      }
      remaining.add(row.remainingUnder(row.limitUsd()));
    }
    switch (lane.lane()) {
      case "free" -> {
        CapRow row = latest.get("free_daily|");
        if (row == null) {
          return Optional.empty();
        }
        remaining.add(row.remainingUnder(row.limitUsd()));
      }
      case "trial" -> {
        CapRow pool = latest.get("trial_daily|");
        if (pool == null) {
          return Optional.empty();
        }
        remaining.add(pool.remainingUnder(pool.limitUsd()));
        remaining.add(
            subjectRemaining(latest, "preview_lifetime", lane.brand(), lane.previewLifetimeUsd()));
      }
      case "app" -> {
        remaining.add(subjectRemaining(latest, "brand_daily", lane.brand(), lane.brandDailyUsd()));
        remaining.add(
            subjectRemaining(latest, "brand_monthly", lane.brand(), lane.brandMonthlyUsd()));
      }
      default -> throw new IllegalArgumentException("unknown lane " + lane.lane());
    }
    return remaining.stream().min(Comparator.naturalOrder());
  }

  private static BigDecimal subjectRemaining(
      Map<String, CapRow> latest, String cap, String subject, BigDecimal limit) {
    CapRow row = latest.get(cap + "|" + subject);
    return row == null ? limit : row.remainingUnder(limit);
  }

  private static Map<String, CapRow> latestWindows(List<CapRow> rows) {
    Map<String, CapRow> latest = new LinkedHashMap<>();
    for (CapRow r : rows) {
      latest.merge(
          r.cap() + "|" + Objects.toString(r.subject(), ""),
          r,
          (a, b) -> a.window().compareTo(b.window()) >= 0 ? a : b);
    }
    return latest;
  }

  /** floor(headroom / amount), but never more than were attempted. */
  static long expectedAccepted(BigDecimal headroom, BigDecimal amount, long attempted) {
    if (amount.signum() <= 0) {
      return attempted;
    }
    BigDecimal fit = headroom.divide(amount, 0, RoundingMode.FLOOR);
    return fit.compareTo(BigDecimal.valueOf(attempted)) >= 0 ? attempted : fit.longValueExact();
  }

  /**
   * Checks the books after a run.
   *
   * @param after the {@code /usage} rows read after the run
   * @param expectedAccepted how many reservations should have been accepted, or empty to skip that
   * @param accepted how many were (201s)
   */
  static Result check(List<CapRow> after, Optional<Long> expectedAccepted, long accepted) {
    List<String> violations = new ArrayList<>();
    BigDecimal overshoot = BigDecimal.ZERO;
    for (CapRow r : after) {
      BigDecimal over = r.overshootUsd();
      if (over.signum() > 0) {
        overshoot = overshoot.add(over);
        violations.add(
            "cap "
                + r.label()
                + " over its limit: spent "
                + r.spentUsd().toPlainString()
                + " + reserved "
                + r.reservedUsd().toPlainString()
                + " > limit "
                + r.limitUsd().toPlainString()
                + " (overshoot $"
                + over.toPlainString()
                + ")");
      }
    }
    expectedAccepted
        .filter(e -> e != accepted)
        .ifPresent(
            e -> violations.add("accepted " + accepted + " reservations, expected exactly " + e));
    return new Result(overshoot, List.copyOf(violations), expectedAccepted, accepted);
  }
}
