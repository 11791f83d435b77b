package dev.spendgateway.ledger.audit;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.ledger.LedgerProtocol.CapUsage;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import dev.spendgateway.policy.money.Micros;
import java.math.BigDecimal;
import java.util.List;

/** Prints a {@link Usage} the way {@code GET /usage} answers it (JSON) or as a table for people. */
public final class UsageReport {
  private UsageReport() {}

  /** Same field names and order as {@code GET /usage} (README, "The ledger API"). */
  @JsonInclude(JsonInclude.Include.ALWAYS)
  public record CapJson(
      String cap,
      String subject,
      String window,
      BigDecimal limitUsd,
      BigDecimal spentUsd,
      BigDecimal reservedUsd,
      BigDecimal remainingUsd) {
    static CapJson of(CapUsage c) {
      return new CapJson(
          c.cap().wireName(),
          c.subject(),
          c.window(),
          Micros.toUsd(c.limitMicros()),
          Micros.toUsd(c.spentMicros()),
          Micros.toUsd(c.reservedMicros()),
          Micros.toUsd(c.remainingMicros()));
    }
  }

  @JsonInclude(JsonInclude.Include.ALWAYS)
  public record UsageJson(List<CapJson> caps, int openReservations, int activeSubjects) {
    public static UsageJson of(Usage u) {
      return new UsageJson(
          u.caps().stream().map(CapJson::of).toList(), u.openReservations(), u.activeSubjects());
    }
  }

  public static String json(Usage usage) {
    try {
      return new ObjectMapper().writeValueAsString(UsageJson.of(usage));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  public static String table(Usage usage) {
    StringBuilder out = new StringBuilder();
    String format = "%-16s %-20s %-10s %14s %14s %14s %14s%n";
    out.append(
        String.format(
            format,
            "CAP",
            "SUBJECT",
            "WINDOW",
            "LIMIT_USD",
            "SPENT_USD",
            "RESERVED_USD",
            "REMAINING_USD"));
    for (CapUsage c : usage.caps()) {
      out.append(
          String.format(
              format,
              c.cap().wireName(),
              c.subject() == null ? "-" : c.subject(),
              c.window(),
              usd(c.limitMicros()),
              usd(c.spentMicros()),
              usd(c.reservedMicros()),
              usd(c.remainingMicros())));
    }
    out.append("open reservations: ").append(usage.openReservations()).append('\n');
    return out.toString();
  }

  private static String usd(long micros) {
    return Micros.toUsd(micros).toPlainString();
  }
}
