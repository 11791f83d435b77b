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
 * @param model the model the reservation pays for, journaled with it so reports can group spend by
 *     model; null when unknown (a ledger API caller that named none)
 * @param provider the provider's wire name ({@code openai}, {@code anthropic}, {@code media}); null
 *     as for {@code model}
 */
public record ReserveRequest(
    String id,
    Lane lane,
    String subject,
    long amountMicros,
    long brandDailyMicros,
    long brandMonthlyMicros,
    String tag,
    String model,
    String provider) {

  /** Without a workflow tag, model or provider. */
  public ReserveRequest(
      String id,
      Lane lane,
      String subject,
      long amountMicros,
      long brandDailyMicros,
      long brandMonthlyMicros) {
    this(id, lane, subject, amountMicros, brandDailyMicros, brandMonthlyMicros, null, null, null);
  }

  /** The same request, for {@code model} of {@code provider}. */
  public ReserveRequest forModel(String model, String provider) {
    return new ReserveRequest(
        id,
        lane,
        subject,
        amountMicros,
        brandDailyMicros,
        brandMonthlyMicros,
        tag,
        model,
        provider);
  }
}
