package dev.spendgateway.ledger;

import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.access.RandomIds;
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
 * @param owner who made it, and so who may close it; read from an older snapshot without one, it is
 *     the owner its id's namespace implies ({@link Owner#impliedBy})
 * @param media the video job it pays for; {@code null} for every other reservation (and in
 *     snapshots written before media jobs existed)
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
    Refusal refusal,
    Owner owner,
    MediaJob media) {

  public Reservation {
    owner = owner == null ? Owner.impliedBy(id) : owner;
  }

  /** A reservation that pays for no media job. */
  public Reservation(
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
      Refusal refusal,
      Owner owner) {
    this(
        id,
        lane,
        subject,
        amountMicros,
        brandDailyMicros,
        brandMonthlyMicros,
        reservedAt,
        expiresAt,
        status,
        actualMicros,
        closedAt,
        refusal,
        owner,
        null);
  }

  /** The same reservation, paying for {@code job}. */
  public Reservation withMedia(MediaJob job) {
    return new Reservation(
        id,
        lane,
        subject,
        amountMicros,
        brandDailyMicros,
        brandMonthlyMicros,
        reservedAt,
        expiresAt,
        status,
        actualMicros,
        closedAt,
        refusal,
        owner,
        job);
  }

  /** Whether it pays for a media job of {@code account}. */
  public boolean paysForMediaOf(String account) {
    return media != null && media.account().equals(account);
  }

  /**
   * Who made a reservation. Only its owner closes it (an operator and the expiry timer excepted):
   * the provider routes settle their own calls at what the provider billed, while a service using
   * the ledger API can neither close those nor settle its own above what it reserved, so no caller
   * of that API can move spend it did not hold first.
   */
  public enum Owner {
    /**
     * The gateway's provider routes, around one upstream call; ids are {@link #GATEWAY_ID_PREFIX} +
     * a UUID.
     */
    GATEWAY,
    /**
     * Another internal service through the ledger API; ids are the caller's, outside the gateway's
     * namespace.
     */
    LEDGER_API;

    /** The id namespace of the provider routes' reservations: no ledger API caller may use it. */
    public static final String GATEWAY_ID_PREFIX = "gw-";

    /** A fresh id for a reservation of the provider routes. */
    public static String newGatewayId() {
      return GATEWAY_ID_PREFIX + RandomIds.uuid();
    }

    /**
     * The owner an id's namespace implies. Events and snapshots written before owners were recorded
     * carry none; the provider routes always used this prefix and the ledger API's callers (load
     * tests, other services) their own ids.
     */
    public static Owner impliedBy(String id) {
      return id != null && id.startsWith(GATEWAY_ID_PREFIX) ? GATEWAY : LEDGER_API;
    }

    /**
     * Smallest amount this owner may reserve. The ledger API holds money for another service's
     * spend, so an empty hold is meaningless there; a provider call's worst case can be $0 (a free
     * model, an empty audio file) and is still reserved so the call is counted and closed.
     */
    public long minimumAmountMicros() {
      return this == LEDGER_API ? 1 : 0;
    }

    /**
     * Whether this owner's settle may exceed what it reserved. The provider bills what it bills, so
     * a provider call is settled at its real cost; a ledger API caller chose its own amount, and a
     * settle above it would spend budget that was never checked against the caps.
     */
    public boolean maySettleAboveReserve() {
      return this == GATEWAY;
    }
  }

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
  public record Refusal(
      CapName cap, String subject, String window, long limitMicros, long headroomMicros) {}

  public boolean isOpen() {
    return status == Status.RESERVED;
  }

  public boolean wasRefused() {
    return status == Status.REFUSED;
  }

  /**
   * Whether a repeated reserve asks exactly what this one asked (else it is a conflicting reuse).
   */
  public boolean sameRequestAs(
      Owner owner,
      Lane lane,
      String subject,
      long amountMicros,
      long brandDailyMicros,
      long brandMonthlyMicros) {
    return this.owner == owner
        && this.lane == lane
        && Objects.equals(this.subject, subject)
        && this.amountMicros == amountMicros
        && this.brandDailyMicros == brandDailyMicros
        && this.brandMonthlyMicros == brandMonthlyMicros;
  }

  /** Whether {@code closer} may settle or void it: only the owner (operators bypass this check). */
  public boolean closableBy(Owner closer) {
    return owner == closer;
  }

  /**
   * Whether {@code closer} may settle it at {@code actualMicros} (see {@link
   * Owner#maySettleAboveReserve}).
   */
  public boolean settleWithinBoundOf(Owner closer, long actualMicros) {
    return closer.maySettleAboveReserve() || actualMicros <= amountMicros;
  }

  /**
   * Whether a settle at {@code actualMicros} is at most {@code multiple} times what was reserved. A
   * product too large for a {@code long} is far above any real bill, so it bounds nothing.
   */
  public boolean settleWithinMultiple(long actualMicros, int multiple) {
    try {
      return actualMicros <= Math.multiplyExact(amountMicros, (long) multiple);
    } catch (ArithmeticException tooLarge) {
      return true;
    }
  }

  public Reservation closed(Status status, long actualMicros, Instant at) {
    return new Reservation(
        id,
        lane,
        subject,
        amountMicros,
        brandDailyMicros,
        brandMonthlyMicros,
        reservedAt,
        expiresAt,
        status,
        actualMicros,
        at,
        null,
        owner,
        media);
  }
}
