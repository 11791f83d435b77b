package dev.spendgateway.ledger;

import dev.spendgateway.policy.access.Lane;

/**
 * A reservation request as the edge hands it to {@link LedgerClient#reserve}.
 *
 * @param subject brand id ({@code app}) or preview id ({@code trial}); ignored for {@code free}
 * @param brandDailyMicros the brand's daily cap ({@code app} only, else 0)
 * @param brandMonthlyMicros the brand's monthly cap ({@code app} only, else 0)
 */
public record ReserveRequest(
    String id,
    Lane lane,
    String subject,
    long amountMicros,
    long brandDailyMicros,
    long brandMonthlyMicros) {}
