package dev.spendgateway.upstream.failover;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/**
 * Parses a {@code Retry-After} header (RFC 9110 §10.2.3): delay-seconds, or an HTTP-date read
 * against a given {@code now} (no clock reads here). Also OpenAI's {@code retry-after-ms}.
 */
public final class RetryAfter {
  /**
   * The longest wait a header is read as (100 years): a larger number means "not for a long time",
   * never a wait that wrapped around to a short or negative one.
   */
  public static final Duration LONGEST = Duration.ofDays(365L * 100);

  private RetryAfter() {}

  /**
   * @return the wait, {@link Duration#ZERO} for a date already past, empty when absent or
   *     unreadable (an unreadable header means "no advice", so backoff applies)
   */
  public static Optional<Duration> parse(String header, Instant now) {
    if (header == null || header.isBlank()) {
      return Optional.empty();
    }
    String value = header.trim();
    if (value.chars().allMatch(c -> Character.isDigit(c) || c == '.')) {
      try {
        BigDecimal seconds = new BigDecimal(value);
        return Optional.of(ofSeconds(seconds));
      } catch (NumberFormatException | ArithmeticException e) {
        return Optional.empty();
      }
    }
    try {
      Instant at = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
      Duration wait = Duration.between(now, at);
      return Optional.of(wait.isNegative() ? Duration.ZERO : wait);
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }

  /** OpenAI's {@code retry-after-ms}: whole or fractional milliseconds. */
  public static Optional<Duration> parseMillis(String header) {
    if (header == null || header.isBlank()) {
      return Optional.empty();
    }
    try {
      BigDecimal ms = new BigDecimal(header.trim());
      return ms.signum() < 0 ? Optional.empty() : Optional.of(ofSeconds(ms.movePointLeft(3)));
    } catch (NumberFormatException | ArithmeticException e) {
      return Optional.empty();
    }
  }

  /**
   * Seconds as a duration (to the nanosecond, rounded down), at most {@link #LONGEST}: {@code
   * longValue()} of a larger number keeps only its low 64 bits (2^64 s would read as 0).
   */
  private static Duration ofSeconds(BigDecimal seconds) {
    if (seconds.compareTo(BigDecimal.valueOf(LONGEST.getSeconds())) >= 0) {
      return LONGEST;
    }
    return Duration.ofNanos(seconds.movePointRight(9).longValue());
  }
}
