package dev.spendgateway.policy.money;

import java.math.BigDecimal;

/**
 * The one rule for a dollar amount a caller sends (a spend-header cap, a ledger-API amount or cap,
 * an admin adjustment): a number of US dollars, at most {@link #MAX_USD} in size, exact in
 * micro-dollars. Pure; every surface that reads an amount calls it, so the same value gets the same
 * verdict and the same reason on a header as in a JSON body.
 *
 * <p>"Exact in micro-dollars" is about value, not spelling: {@code 5.000000000} is five dollars and
 * is accepted; {@code 5.0000001} holds a tenth of a micro-dollar and is refused.
 */
public final class UsdAmount {
  /** Largest amount or cap one request may name; anything above is a typo or an attack. */
  public static final BigDecimal MAX_USD = new BigDecimal("1000000");

  /** Longest text read as an amount: room for 1000000.000000 and generous spelling, no more. */
  public static final int MAX_TEXT_LENGTH = 32;

  /**
   * What a valid (non-negative) amount looks like, for messages that tell the caller what to send.
   */
  public static final String VALID =
      "a dollar amount from 0 to "
          + MAX_USD.toPlainString()
          + " with at most 6 decimals, e.g. 5 or 12.50";

  /** Reasons, phrased to follow the field's name ("brandDailyUsd must not be negative"). */
  public static final String NOT_A_NUMBER = "must be a number of US dollars";

  public static final String NEGATIVE = "must not be negative";
  public static final String TOO_LARGE = "must be at most " + MAX_USD.toPlainString();
  public static final String TOO_LARGE_SIGNED = TOO_LARGE + " in size";
  public static final String TOO_PRECISE =
      "must have at most 6 decimals (a fraction of a micro-dollar cannot be booked; trailing zeros are fine)";
  public static final String TOO_LONG =
      "must be a number of US dollars of at most " + MAX_TEXT_LENGTH + " characters";

  private UsdAmount() {}

  /** A verdict: the amount in micro-dollars, or why it is refused. */
  public sealed interface Checked permits Valid, Invalid {}

  public record Valid(long micros) implements Checked {}

  /** {@code reason} follows the field's name: {@code field + " " + reason}. */
  public record Invalid(String reason) implements Checked {}

  /** A non-negative amount, up to {@link #MAX_USD}, exact in micro-dollars. */
  public static Checked nonNegative(BigDecimal usd) {
    if (usd.signum() < 0) {
      return new Invalid(NEGATIVE);
    }
    return bounded(usd, TOO_LARGE);
  }

  /** A signed amount, |x| up to {@link #MAX_USD}, exact in micro-dollars. */
  public static Checked signed(BigDecimal usd) {
    return bounded(usd, TOO_LARGE_SIGNED);
  }

  /**
   * {@link #nonNegative(BigDecimal)} from text (a header value): a decimal number, surrounding
   * blanks ignored, at most {@link #MAX_TEXT_LENGTH} characters.
   */
  public static Checked nonNegative(String text) {
    if (text.length() > MAX_TEXT_LENGTH) {
      return new Invalid(TOO_LONG);
    }
    BigDecimal usd;
    try {
      usd = new BigDecimal(text.trim());
    } catch (NumberFormatException e) {
      return new Invalid(NOT_A_NUMBER);
    }
    return nonNegative(usd);
  }

  private static Checked bounded(BigDecimal usd, String tooLarge) {
    if (usd.abs().compareTo(MAX_USD) > 0) {
      return new Invalid(tooLarge);
    }
    // Within MAX_USD the integer part is small; only the decimals can make it inexact. Compare the
    // value's own decimals, not its spelling: 5.000000000 has none.
    if (usd.signum() != 0 && usd.stripTrailingZeros().scale() > 6) {
      return new Invalid(TOO_PRECISE);
    }
    return new Valid(Micros.ofUsdExact(usd));
  }
}
