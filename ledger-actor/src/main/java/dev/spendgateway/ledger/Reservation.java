package dev.spendgateway.ledger;

import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapName;
import java.time.Instant;
import java.util.Objects;

/**
 * One reservation as the ledger knows it: what was asked, what was answered and, once closed, what
 * it cost. Refused requests are kept too, so the same id gets the same answer.
 *
 * @param subject brand id (app) or preview id (trial); {@code null} on the free lane
 * @param expiresAt when an open reservation expires at its worst case
 * @param actualMicros the cost it closed at; 0 while open
 * @param closedAt when it was settled, voided, expired or refused
 * @param refusal why it was refused; {@code null} unless {@code status == REFUSED}
 */
public record Reservation(
    String id,
    Lane lane,
    String subject,
    long amountMicros,
    long brandDailyMicros,
    long brandMonthlyMicros,
    Instant reservedAt,
    Instant expiresAt,
    Status status,
    long actualMicros,
    Instant closedAt,
    Refusal refusal) {

  /** Lifecycle of a reservation id. Only {@code RESERVED} holds money in reserve. */
  public enum Status {
    RESERVED("reserved"),
    SETTLED("settled"),
    VOIDED("voided"),
    EXPIRED("expired"),
    REFUSED("refused");

    private final String wireName;

    Status(String wireName) {
      this.wireName = wireName;
    }

    public String wireName() {
      return wireName;
    }
  }

  /** The first cap that refused a request and the headroom it had left. */
  public record Refusal(CapName cap, String subject, String window, long limitMicros, long headroomMicros) {}

  public boolean isOpen() {
    return status == Status.RESERVED;
  }

  public boolean wasRefused() {
    return status == Status.REFUSED;
  }

  /** Whether a repeated reserve asks exactly what this one asked (else it is a conflicting reuse). */
  public boolean sameRequestAs(Lane lane, String subject, long amountMicros, long brandDailyMicros, long brandMonthlyMicros) {
    return this.lane == lane
        && Objects.equals(this.subject, subject)
        && this.amountMicros == amountMicros
        && this.brandDailyMicros == brandDailyMicros
        && this.brandMonthlyMicros == brandMonthlyMicros;
  }

  public Reservation closed(Status status, long actualMicros, Instant at) {
    return new Reservation(id, lane, subject, amountMicros, brandDailyMicros, brandMonthlyMicros,
        reservedAt, expiresAt, status, actualMicros, at, null);
  }
}
