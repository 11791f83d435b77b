package dev.spendgateway.ledger;

import dev.spendgateway.policy.access.Lane;

/**
 * A reservation request as the edge hands it to {@link LedgerClient#reserve}.
 *
 * @param subject brand id ({@code app}) or preview id ({@code trial}); ignored for {@code free}
 * @param brandDailyMicros the brand's daily cap ({@code app} only, else 0)
 * @param brandMonthlyMicros the brand's monthly cap ({@code app} only, else 0)
 * @param tag the caller's workflow tag ({@code x-spend-tag}), journaled with the reservation; null
 *     when the caller sent none
 */
public record ReserveRequest(
    String id,
    Lane lane,
    String subject,
    long amountMicros,
    long brandDailyMicros,
    long brandMonthlyMicros,
    String tag) {

  /** Without a workflow tag. */
  public ReserveRequest(
      String id,
      Lane lane,
      String subject,
      long amountMicros,
      long brandDailyMicros,
      long brandMonthlyMicros) {
    this(id, lane, subject, amountMicros, brandDailyMicros, brandMonthlyMicros, null);
  }
}
