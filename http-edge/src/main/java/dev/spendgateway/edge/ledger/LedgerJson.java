package dev.spendgateway.edge.ledger;

import com.fasterxml.jackson.annotation.JsonInclude;
import dev.spendgateway.ledger.LedgerProtocol.CapUsage;
import dev.spendgateway.ledger.LedgerProtocol.Closed;
import dev.spendgateway.ledger.LedgerProtocol.ReservationView;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import dev.spendgateway.policy.money.Micros;
import java.math.BigDecimal;
import java.util.List;

/**
 * The JSON bodies of the ledger API, separate from the actor's messages. Nulls are written ({@code
 * "subject":null}, {@code "actualUsd":null}) because the contract shows them.
 */
final class LedgerJson {
  private LedgerJson() {}

  @JsonInclude(JsonInclude.Include.ALWAYS)
  record ReservedBody(String id, String status, BigDecimal amountUsd) {}

  @JsonInclude(JsonInclude.Include.ALWAYS)
  record ClosedBody(String id, String status, BigDecimal actualUsd) {
    static ClosedBody of(Closed c) {
      return new ClosedBody(c.id(), c.status().wireName(), Micros.toUsd(c.actualMicros()));
    }
  }

  @JsonInclude(JsonInclude.Include.ALWAYS)
  record ReservationBody(
      String id,
      String status,
      String lane,
      String brand,
      BigDecimal amountUsd,
      BigDecimal actualUsd) {
    static ReservationBody of(ReservationView v) {
      return new ReservationBody(
          v.id(),
          v.status().wireName(),
          v.lane().wireName(),
          v.subject(),
          Micros.toUsd(v.amountMicros()),
          v.actualMicros().map(Micros::toUsd).orElse(null));
    }
  }

  @JsonInclude(JsonInclude.Include.ALWAYS)
  record CapBody(
      String cap,
      String subject,
      String window,
      BigDecimal limitUsd,
      BigDecimal spentUsd,
      BigDecimal reservedUsd,
      BigDecimal remainingUsd) {
    static CapBody of(CapUsage c) {
      return new CapBody(
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
  /**
   * {@code activeSubjects}: brands and preview ids with spend or holds now (the listed ones may be
   * fewer). {@code zone}: the IANA zone whose dates the day and month windows are ({@code
   * ledger.window-zone}, e.g. {@code "Europe/Istanbul"}).
   */
  record UsageBody(List<CapBody> caps, int openReservations, int activeSubjects, String zone) {
    static UsageBody of(Usage u) {
      return new UsageBody(
          u.caps().stream().map(CapBody::of).toList(),
          u.openReservations(),
          u.activeSubjects(),
          u.zone());
    }
  }

  /**
   * 402 body: {@code {"error":{"type":"budget_exceeded","cap":…,"subject":…,"message":…}}}, subject
   * null included.
   */
  @JsonInclude(JsonInclude.Include.ALWAYS)
  record BudgetError(String type, String cap, String subject, String message) {}

  record BudgetErrorBody(BudgetError error) {}
}
