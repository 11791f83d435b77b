package dev.spendgateway.policy.money;

import java.math.BigDecimal;
import java.math.RoundingMode;

/**
 * Money as integer micro-dollars (1 USD = 1,000,000 micros).
 *
 * <p>Every amount the gateway decides on is a {@code long} of micro-dollars: exact, cheap to add in
 * the ledger's hot path, and wide enough (9.2e12 USD) for any budget. {@link BigDecimal} is used
 * only at the edges (JSON in and out, prices in the catalog).
 */
public final class Micros {
  public static final long PER_USD = 1_000_000L;
  private static final BigDecimal PER_USD_DECIMAL = BigDecimal.valueOf(PER_USD);

  private Micros() {}

  /** Exact conversion; fails when the amount has more than six decimals. */
  public static long ofUsdExact(BigDecimal usd) {
    return usd.multiply(PER_USD_DECIMAL).longValueExact();
  }

  /** Conversion that rounds a fraction of a micro-dollar up: a cost is never under-counted. */
  public static long ofUsdCeil(BigDecimal usd) {
    return usd.multiply(PER_USD_DECIMAL).setScale(0, RoundingMode.CEILING).longValueExact();
  }

  /** Dollars with six decimals, trailing zeros stripped for readable JSON (0.3, not 0.300000). */
  public static BigDecimal toUsd(long micros) {
    BigDecimal usd = BigDecimal.valueOf(micros, 6).stripTrailingZeros();
    return usd.scale() < 0 ? usd.setScale(0) : usd;
  }
}
