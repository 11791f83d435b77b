package dev.spendgateway.ledger;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapName;
import dev.spendgateway.policy.caps.CapWindows;
import java.time.Instant;
import java.util.List;

/**
 * The persisted events: full facts, each with a schema version ({@code v}) so old formats stay
 * readable. Their JSON shape is the journal's format; journals written before these records moved
 * here name them {@code GlobalBudget$<Event>}, which {@link LedgerClassRenames} maps to these
 * names.
 *
 * <p>{@link GlobalBudget} implements this interface so that {@code GlobalBudget.ReservationMade}
 * and the other names keep resolving for callers.
 */
public interface LedgerEvents {

  public sealed interface Event extends LedgerSerializable {
    Instant at();

    /**
     * Schema version of the event's JSON/CBOR form; bump with a JacksonMigration when it changes.
     */
    @JsonProperty(value = "v", access = JsonProperty.Access.READ_ONLY)
    default int version() {
      return 1;
    }
  }

  /**
   * Event: {@code amountMicros} is held until {@code expiresAt} against the lane's caps, for {@code
   * owner}. {@code owner} was added after v1: an older event has none and reads as the owner its
   * id's namespace implies ({@link Owner#impliedBy}). {@code tag} is the caller's workflow tag
   * ({@code x-spend-tag}), null when it sent none; added with workflow tags, so older events have
   * none and read as untagged. {@code model} and {@code provider} name what the reservation pays
   * for (a router attempt's model, its provider's wire name), null when the caller named none;
   * added later still, so older events have none and report under an empty model and provider.
   */
  public record ReservationMade(
      String id,
      Lane lane,
      String subject,
      long amountMicros,
      long brandDailyMicros,
      long brandMonthlyMicros,
      Instant at,
      Instant expiresAt,
      Owner owner,
      @JsonInclude(JsonInclude.Include.NON_NULL) String tag,
      @JsonInclude(JsonInclude.Include.NON_NULL) String model,
      @JsonInclude(JsonInclude.Include.NON_NULL) String provider)
      implements Event {
    public ReservationMade {
      owner = owner == null ? Owner.impliedBy(id) : owner;
    }

    /** Without a workflow tag, model or provider. */
    public ReservationMade(
        String id,
        Lane lane,
        String subject,
        long amountMicros,
        long brandDailyMicros,
        long brandMonthlyMicros,
        Instant at,
        Instant expiresAt,
        Owner owner) {
      this(
          id,
          lane,
          subject,
          amountMicros,
          brandDailyMicros,
          brandMonthlyMicros,
          at,
          expiresAt,
          owner,
          null,
          null,
          null);
    }

    /** The same reservation, held until {@code until}. */
    public ReservationMade expiringAt(Instant until) {
      return new ReservationMade(
          id,
          lane,
          subject,
          amountMicros,
          brandDailyMicros,
          brandMonthlyMicros,
          at,
          until,
          owner,
          tag,
          model,
          provider);
    }

    /** The older form, without an owner. */
    public ReservationMade(
        String id,
        Lane lane,
        String subject,
        long amountMicros,
        long brandDailyMicros,
        long brandMonthlyMicros,
        Instant at,
        Instant expiresAt) {
      this(
          id,
          lane,
          subject,
          amountMicros,
          brandDailyMicros,
          brandMonthlyMicros,
          at,
          expiresAt,
          null);
    }
  }

  /**
   * Event: a request refused by {@code cap} with {@code headroomMicros} left; journaled for audit
   * and idempotency. {@code owner}, {@code tag}, {@code model} and {@code provider} as in {@link
   * ReservationMade}.
   */
  public record ReservationRefused(
      String id,
      Lane lane,
      String subject,
      long amountMicros,
      long brandDailyMicros,
      long brandMonthlyMicros,
      CapName cap,
      String capSubject,
      String window,
      long limitMicros,
      long headroomMicros,
      Instant at,
      Owner owner,
      @JsonInclude(JsonInclude.Include.NON_NULL) String tag,
      @JsonInclude(JsonInclude.Include.NON_NULL) String model,
      @JsonInclude(JsonInclude.Include.NON_NULL) String provider)
      implements Event {
    public ReservationRefused {
      owner = owner == null ? Owner.impliedBy(id) : owner;
    }

    /** Without a workflow tag, model or provider. */
    public ReservationRefused(
        String id,
        Lane lane,
        String subject,
        long amountMicros,
        long brandDailyMicros,
        long brandMonthlyMicros,
        CapName cap,
        String capSubject,
        String window,
        long limitMicros,
        long headroomMicros,
        Instant at,
        Owner owner) {
      this(
          id,
          lane,
          subject,
          amountMicros,
          brandDailyMicros,
          brandMonthlyMicros,
          cap,
          capSubject,
          window,
          limitMicros,
          headroomMicros,
          at,
          owner,
          null,
          null,
          null);
    }

    /** The older form, without an owner. */
    public ReservationRefused(
        String id,
        Lane lane,
        String subject,
        long amountMicros,
        long brandDailyMicros,
        long brandMonthlyMicros,
        CapName cap,
        String capSubject,
        String window,
        long limitMicros,
        long headroomMicros,
        Instant at) {
      this(
          id,
          lane,
          subject,
          amountMicros,
          brandDailyMicros,
          brandMonthlyMicros,
          cap,
          capSubject,
          window,
          limitMicros,
          headroomMicros,
          at,
          null);
    }
  }

  /**
   * Event: closed at its real cost; {@code actualMicros > reservedMicros} is recorded as is. {@code
   * operator} and {@code reason} are set only when an operator settled it (added after v1: absent,
   * i.e. null, in older events).
   */
  public record ReservationSettled(
      String id,
      Lane lane,
      String subject,
      Instant reservedAt,
      long reservedMicros,
      long actualMicros,
      Instant at,
      @JsonInclude(JsonInclude.Include.NON_NULL) String operator,
      @JsonInclude(JsonInclude.Include.NON_NULL) String reason)
      implements Event {
    /** A settle by the caller that reserved (no operator). */
    public ReservationSettled(
        String id,
        Lane lane,
        String subject,
        Instant reservedAt,
        long reservedMicros,
        long actualMicros,
        Instant at) {
      this(id, lane, subject, reservedAt, reservedMicros, actualMicros, at, null, null);
    }

    public boolean overReserve() {
      return actualMicros > reservedMicros;
    }
  }

  /**
   * Event: closed at zero, the provider did not bill. {@code operator} and {@code reason} as in
   * {@link ReservationSettled}.
   */
  public record ReservationVoided(
      String id,
      Lane lane,
      String subject,
      Instant reservedAt,
      long reservedMicros,
      Instant at,
      @JsonInclude(JsonInclude.Include.NON_NULL) String operator,
      @JsonInclude(JsonInclude.Include.NON_NULL) String reason)
      implements Event {
    /** A void by the caller that reserved (no operator). */
    public ReservationVoided(
        String id, Lane lane, String subject, Instant reservedAt, long reservedMicros, Instant at) {
      this(id, lane, subject, reservedAt, reservedMicros, at, null, null);
    }
  }

  /** Event: left open past the timeout, closed at its worst case. */
  public record ReservationExpired(
      String id, Lane lane, String subject, Instant reservedAt, long reservedMicros, Instant at)
      implements Event {}

  /**
   * Event: an operator moved settled spend by {@code deltaMicros} in the caps of {@code
   * lane}/{@code subject} that {@code scope} names, in the windows containing {@code window} (see
   * {@link AdjustmentWindow}). {@code window} and {@code scope} were added after v1: an older event
   * has neither and moved every cap of the lane in the day and month of {@code at}, which is
   * exactly a {@link AdjustmentScope#REFUND} on the day of {@code at}, so it reads as that.
   */
  public record SpendAdjusted(
      String adjustmentId,
      String operator,
      String reason,
      Lane lane,
      String subject,
      long deltaMicros,
      Instant at,
      String window,
      AdjustmentScope scope)
      implements Event {
    public SpendAdjusted {
      window = window == null && at != null ? CapWindows.dayKey(at) : window;
      scope = scope == null ? AdjustmentScope.REFUND : scope;
    }

    /** The older form: every cap of the lane, in the windows of {@code at}. */
    public SpendAdjusted(
        String adjustmentId,
        String operator,
        String reason,
        Lane lane,
        String subject,
        long deltaMicros,
        Instant at) {
      this(adjustmentId, operator, reason, lane, subject, deltaMicros, at, null, null);
    }
  }

  /**
   * Event: cap windows that ended before {@code cutoff} were dropped; ids closed before {@code
   * idsClosedBefore} left the idempotency window (kept only in the past-id filters from then on);
   * past-id filters whose newest id closed before {@code pastIdsBefore} were dropped. Version 1 had
   * only {@code cutoff}, which also meant "closed reservations closed before it are forgotten": it
   * reads as {@code idsClosedBefore = cutoff} and no filter dropped (see {@link
   * LedgerSchemaMigration}).
   */
  public record Compacted(
      Instant cutoff, Instant at, Instant idsClosedBefore, Instant pastIdsBefore) implements Event {
    public Compacted {
      idsClosedBefore = idsClosedBefore == null ? cutoff : idsClosedBefore;
    }

    /** The version 1 form: one cutoff for windows and ids. */
    public Compacted(Instant cutoff, Instant at) {
      this(cutoff, at, cutoff, null);
    }

    @Override
    public int version() {
      return 2;
    }
  }

  /**
   * Event: the reservation {@code id}, made in the same journal row just before, pays for a media
   * job on {@code account}; until it closes it counts as one of the account's unfinished jobs.
   * {@code idempotencyKey} is the caller's key, or {@code null}. Added with media jobs: journals
   * written before hold none.
   */
  public record MediaJobOpened(String id, String account, String idempotencyKey, Instant at)
      implements Event {}

  /**
   * Event: the media provider accepted the job of reservation {@code id} as {@code jobId}, so the
   * gateway can poll and settle it, also after a restart.
   */
  public record MediaJobSubmitted(String id, String jobId, Instant at) implements Event {}

  /**
   * Event: cap windows are counted in {@code zone} (an IANA zone id, {@code ledger.window-zone})
   * from {@code from} on; windows before {@code from} stay in the zone they were counted in. The
   * ledger writes it at start when the configured zone is not the journal's: {@code from} is the
   * end of the day then current in the old zone (see {@code WindowCalendar#changedTo}), so the day
   * under way ends as it began and no past window is reassigned. A journal without one counts in
   * UTC (all journals written before zones could be chosen). Added with window zones.
   */
  public record WindowZoneChanged(String zone, String previousZone, Instant from, Instant at)
      implements Event {}

  /**
   * Event: this region's allowance of the company-wide cap {@code cap} in {@code window} is {@code
   * micros} lower from here on, lent to {@code toRegion} under {@code transferId}
   * (docs/MULTI-REGION.md). Journaled in the lending region before anything is sent, so the amount
   * is in flight (spendable by no region) until {@code toRegion} journals the matching {@link
   * AllowanceIn}: the allowances of all regions never sum above the cap. {@code reason} says why
   * (the rebalancer's rule, or an operator's words); {@code operator} is set only when a person
   * moved it. Added with regional allowances: journals written before hold none, and a
   * single-region ledger never writes one.
   *
   * @param subject the cap's subject (a brand or preview id), {@code null} for a pool cap
   */
  public record AllowanceOut(
      String transferId,
      String fromRegion,
      String toRegion,
      CapName cap,
      @JsonInclude(JsonInclude.Include.NON_NULL) String subject,
      String window,
      long micros,
      String reason,
      @JsonInclude(JsonInclude.Include.NON_NULL) String operator,
      Instant at)
      implements Event {
    /** The cap window whose allowance moved. */
    public CapKey key() {
      return new CapKey(cap, subject, window);
    }
  }

  /**
   * Event: this region's allowance of {@code cap} in {@code window} is {@code micros} higher from
   * here on: the transfer {@code transferId} that {@code fromRegion} journaled as an {@link
   * AllowanceOut} has landed. Applied once per {@code transferId} (a repeated delivery is
   * acknowledged and writes nothing). Fields as in {@link AllowanceOut}.
   */
  public record AllowanceIn(
      String transferId,
      String fromRegion,
      String toRegion,
      CapName cap,
      @JsonInclude(JsonInclude.Include.NON_NULL) String subject,
      String window,
      long micros,
      String reason,
      @JsonInclude(JsonInclude.Include.NON_NULL) String operator,
      Instant at)
      implements Event {
    /** The cap window whose allowance moved. */
    public CapKey key() {
      return new CapKey(cap, subject, window);
    }

    /** The in that lands {@code out} at {@code at}: the same transfer's facts. */
    public static AllowanceIn of(AllowanceOut out, Instant at) {
      return new AllowanceIn(
          out.transferId(),
          out.fromRegion(),
          out.toRegion(),
          out.cap(),
          out.subject(),
          out.window(),
          out.micros(),
          out.reason(),
          out.operator(),
          at);
    }
  }

  /**
   * The facts of one group commit, stored as one journal row. The journal database writes a row
   * (and its index entries and pages) per persisted event; a batch of hundreds of facts as hundreds
   * of rows made those page writes most of the ledger's CPU, while one row per batch costs one.
   *
   * <p>Not a fact of its own: applying it applies {@link #facts} in order, and every reader of the
   * journal (recovery, {@code gateway-admin verify|export|tail|replay}) sees the facts one by one.
   * Each fact keeps its own type name inside the row, so a fact written here reads exactly as the
   * same fact written alone; journals written one fact per row stay readable as they are.
   *
   * @param facts at least one fact, none of them a group commit itself
   */
  public record GroupCommit(
      @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.WRAPPER_OBJECT)
          @JsonSubTypes({
            @JsonSubTypes.Type(value = ReservationMade.class, name = "ReservationMade"),
            @JsonSubTypes.Type(value = ReservationRefused.class, name = "ReservationRefused"),
            @JsonSubTypes.Type(value = ReservationSettled.class, name = "ReservationSettled"),
            @JsonSubTypes.Type(value = ReservationVoided.class, name = "ReservationVoided"),
            @JsonSubTypes.Type(value = ReservationExpired.class, name = "ReservationExpired"),
            @JsonSubTypes.Type(value = SpendAdjusted.class, name = "SpendAdjusted"),
            @JsonSubTypes.Type(value = Compacted.class, name = "Compacted"),
            @JsonSubTypes.Type(value = MediaJobOpened.class, name = "MediaJobOpened"),
            @JsonSubTypes.Type(value = MediaJobSubmitted.class, name = "MediaJobSubmitted"),
            @JsonSubTypes.Type(value = WindowZoneChanged.class, name = "WindowZoneChanged"),
            @JsonSubTypes.Type(value = AllowanceOut.class, name = "AllowanceOut"),
            @JsonSubTypes.Type(value = AllowanceIn.class, name = "AllowanceIn")
          })
          List<Event> facts)
      implements Event {
    public GroupCommit {
      if (facts == null || facts.isEmpty()) {
        throw new IllegalArgumentException("a group commit holds at least one fact");
      }
      facts = List.copyOf(facts);
      if (facts.stream().anyMatch(f -> f instanceof GroupCommit)) {
        throw new IllegalArgumentException("a group commit holds facts, not other group commits");
      }
    }

    /** When the last of its facts happened (facts are in the order they were decided). */
    @Override
    public Instant at() {
      return facts.get(facts.size() - 1).at();
    }

    /**
     * What one write persists: the fact itself when there is one (its row reads as before group
     * commits were enveloped), otherwise one group commit holding them all.
     */
    public static Event of(List<Event> facts) {
      return facts.size() == 1 ? facts.get(0) : new GroupCommit(facts);
    }

    /** The facts a journal row holds, in order: a group commit's facts, or the one fact it is. */
    public static List<Event> factsOf(Event row) {
      return row instanceof GroupCommit g ? g.facts() : List.of(row);
    }
  }
}
