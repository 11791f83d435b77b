package dev.spendgateway.ledger;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonValue;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.Reservation.Refusal;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapCheck;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapLimits;
import dev.spendgateway.policy.caps.CapName;
import dev.spendgateway.policy.caps.CapWindows;
import dev.spendgateway.policy.caps.Spend;
import dev.spendgateway.policy.money.Micros;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.SupervisorStrategy;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.actor.typed.javadsl.TimerScheduler;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.RecoveryCompleted;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReply;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehaviorWithEnforcedReplies;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;
import org.apache.pekko.persistence.typed.javadsl.SignalHandler;

/**
 * The single writer of the spend ledger (SPEC §4): every reserve, refusal, settle, void, expiry
 * and operator adjustment is an event in the journal, and the state is a fold of those events.
 *
 * <p>Decisions are made against the in-memory state with the pure {@link CapCheck} rules. Reserve,
 * settle and void normally arrive as a {@link Batch} from the {@link ReservationBatcher}: each
 * command is decided in order against the state left by the ones before it, all resulting events
 * are persisted in one journal write, and only then is every caller answered (group commit).
 *
 * <p>The wall clock is read only when deciding a command; events carry their instants, so replay
 * is deterministic.
 */
public final class GlobalBudget
    extends EventSourcedBehaviorWithEnforcedReplies<GlobalBudget.Command, GlobalBudget.Event, GlobalBudget.State> {

  public static final PersistenceId PERSISTENCE_ID = PersistenceId.ofUniqueId("global");

  /** Longest id the ledger accepts (the edge answers 400 above it). */
  public static final int MAX_ID_LENGTH = 128;

  /** Longest operator adjustment id the ledger accepts (the admin API answers 400 above it). */
  public static final int MAX_ADJUSTMENT_ID_LENGTH = 64;

  // ---------------------------------------------------------------------------------------------
  // Commands
  // ---------------------------------------------------------------------------------------------

  /** Everything the ledger accepts. */
  public sealed interface Command extends LedgerSerializable {}

  /** The commands that change the books and are therefore group-committed. */
  public sealed interface Batchable extends Command {}

  /**
   * Hold {@code amountMicros} against every cap of the lane. For {@link Lane#APP} the brand's caps
   * come with the request; for the other lanes they are ignored (send 0). {@code owner} is recorded
   * with the reservation: only it may settle or void it.
   */
  public record Reserve(
      String id,
      Lane lane,
      String subject,
      long amountMicros,
      long brandDailyMicros,
      long brandMonthlyMicros,
      Owner owner,
      ActorRef<ReserveReply> replyTo)
      implements Batchable {
    /** A reservation of the gateway's provider routes. */
    public Reserve(String id, Lane lane, String subject, long amountMicros, long brandDailyMicros,
        long brandMonthlyMicros, ActorRef<ReserveReply> replyTo) {
      this(id, lane, subject, amountMicros, brandDailyMicros, brandMonthlyMicros, Owner.GATEWAY, replyTo);
    }
  }

  /** Close an open reservation at its real cost; {@code closer} must be its owner. */
  public record Settle(String id, long actualMicros, Owner closer, ActorRef<CloseReply> replyTo) implements Batchable {
    /** A settle by the gateway's provider routes. */
    public Settle(String id, long actualMicros, ActorRef<CloseReply> replyTo) {
      this(id, actualMicros, Owner.GATEWAY, replyTo);
    }
  }

  /** Close an open reservation at zero: the provider did not bill. {@code closer} must be its owner. */
  public record VoidReservation(String id, Owner closer, ActorRef<CloseReply> replyTo) implements Batchable {
    /** A void by the gateway's provider routes. */
    public VoidReservation(String id, ActorRef<CloseReply> replyTo) {
      this(id, Owner.GATEWAY, replyTo);
    }
  }

  /** Decide {@code commands} in order and persist their events as one write; then answer each. */
  public record Batch(List<Batchable> commands, ActorRef<BatchWritten> replyTo) implements Command {}

  /** Timer tick: expire every open reservation past its {@code expiresAt}, at its worst case. */
  public record ExpireDue() implements Command {}

  /** Timer tick: forget closed reservations older than the retention. */
  public record Compact() implements Command {}

  /**
   * Operator correction through the running actor: adds {@code deltaMicros} (negative = credit) as
   * settled spend to the current windows of the lane's caps. Idempotent by {@code adjustmentId}: a
   * repeat with the same lane, subject, delta and operator gets the first answer and changes
   * nothing; the same id with other fields is a {@link Conflict}.
   */
  public record Adjust(
      String adjustmentId, String operator, String reason, Lane lane, String subject, long deltaMicros,
      ActorRef<AdjustReply> replyTo)
      implements Command {}

  /**
   * Operator's settle through the running actor: like {@link Settle}, and the event records who
   * and why. Not group-committed (rare), decided in order with the batches.
   */
  public record OperatorSettle(String id, long actualMicros, String operator, String reason, ActorRef<CloseReply> replyTo)
      implements Command {}

  /** Operator's void through the running actor: like {@link VoidReservation}, with who and why. */
  public record OperatorVoid(String id, String operator, String reason, ActorRef<CloseReply> replyTo) implements Command {}

  /** Spend against every current cap window, optionally narrowed to one brand or preview id. */
  public record GetUsage(Optional<String> subject, ActorRef<Usage> replyTo) implements Command {}

  public record GetReservation(String id, ActorRef<ReservationReply> replyTo) implements Command {}

  /** Answered as soon as the ledger runs, i.e. once recovery from the journal has finished. */
  public record AwaitReady(ActorRef<Ready> replyTo) implements Command {}

  // ---------------------------------------------------------------------------------------------
  // Replies
  // ---------------------------------------------------------------------------------------------

  public sealed interface ReserveReply extends LedgerSerializable {}

  public sealed interface CloseReply extends LedgerSerializable {}

  public sealed interface ReservationReply extends LedgerSerializable {}

  public sealed interface AdjustReply extends LedgerSerializable {}

  /** The amount is held (durably). Also the answer to a repeat of an admitted id. */
  public record Reserved(String id, long amountMicros) implements ReserveReply {}

  /** The first cap that could not take the amount, with its headroom. A refused id stays refused. */
  public record Refused(String id, CapName cap, String subject, long headroomMicros) implements ReserveReply {}

  /** The id is already used by a different request. */
  public record Conflict(String id, String message) implements ReserveReply, CloseReply, AdjustReply {}

  /** The command itself is malformed (negative amount, missing subject...). Nothing changed. */
  public record Invalid(String id, String field, String message) implements ReserveReply, CloseReply, AdjustReply {}

  /** The reservation is closed; a repeated settle or void gets the first result. */
  public record Closed(String id, Status status, long actualMicros) implements CloseReply {}

  /**
   * The closer does not own the reservation (or, for the ledger API, the id is in the provider
   * routes' namespace, known or not, so the answer reveals nothing about their reservations).
   * Nothing changed.
   */
  public record Forbidden(String id, String message) implements CloseReply {}

  /** The id was refused, so there is nothing to settle or void. */
  public record NotOpen(String id, Status status) implements CloseReply {}

  public record NotFound(String id) implements CloseReply, ReservationReply {}

  /**
   * @param actualMicros empty while the reservation is open or when it was refused
   * @param owner who made it (the ledger API shows only its own)
   */
  public record ReservationView(
      String id, Status status, Lane lane, String subject, long amountMicros, Optional<Long> actualMicros, Owner owner)
      implements ReservationReply {}

  public record Usage(List<CapUsage> caps, int openReservations) implements LedgerSerializable {}

  public record CapUsage(CapName cap, String subject, String window, long limitMicros, long spentMicros, long reservedMicros)
      implements LedgerSerializable {
    public long remainingMicros() {
      return limitMicros - spentMicros - reservedMicros;
    }
  }

  /**
   * The adjustment is applied (durably). Also the answer to a repeat of its id: the first one's
   * facts, reason included.
   */
  public record Adjusted(String adjustmentId, Lane lane, String subject, long deltaMicros, String operator, String reason)
      implements AdjustReply {
    static Adjusted of(Adjustment a) {
      return new Adjusted(a.id(), a.lane(), a.subject(), a.deltaMicros(), a.operator(), a.reason());
    }
  }

  /**
   * The adjustment would take {@code cap}'s settled spend in {@code window} below zero (more
   * headroom than the cap itself). Nothing changed; the id stays unused.
   */
  public record AdjustRefused(String adjustmentId, CapName cap, String subject, String window, long settledMicros,
      long deltaMicros, String message) implements AdjustReply {}

  public record BatchWritten(int commands, int events) implements LedgerSerializable {}

  public record Ready() implements LedgerSerializable {}

  // ---------------------------------------------------------------------------------------------
  // Events: full facts, each with a schema version (v) so old formats stay readable
  // ---------------------------------------------------------------------------------------------

  public sealed interface Event extends LedgerSerializable {
    Instant at();

    /** Schema version of the event's JSON/CBOR form; bump with a JacksonMigration when it changes. */
    @JsonProperty(value = "v", access = JsonProperty.Access.READ_ONLY)
    default int version() {
      return 1;
    }
  }

  /**
   * Event: {@code amountMicros} is held until {@code expiresAt} against the lane's caps, for {@code
   * owner}. {@code owner} was added after v1: an older event has none and reads as the owner its
   * id's namespace implies ({@link Owner#impliedBy}).
   */
  public record ReservationMade(
      String id, Lane lane, String subject, long amountMicros, long brandDailyMicros, long brandMonthlyMicros,
      Instant at, Instant expiresAt, Owner owner)
      implements Event {
    public ReservationMade {
      owner = owner == null ? Owner.impliedBy(id) : owner;
    }

    /** The older form, without an owner. */
    public ReservationMade(String id, Lane lane, String subject, long amountMicros, long brandDailyMicros,
        long brandMonthlyMicros, Instant at, Instant expiresAt) {
      this(id, lane, subject, amountMicros, brandDailyMicros, brandMonthlyMicros, at, expiresAt, null);
    }
  }

  /**
   * Event: a request refused by {@code cap} with {@code headroomMicros} left; journaled for audit and
   * idempotency. {@code owner} as in {@link ReservationMade}.
   */
  public record ReservationRefused(
      String id, Lane lane, String subject, long amountMicros, long brandDailyMicros, long brandMonthlyMicros,
      CapName cap, String capSubject, String window, long limitMicros, long headroomMicros, Instant at, Owner owner)
      implements Event {
    public ReservationRefused {
      owner = owner == null ? Owner.impliedBy(id) : owner;
    }

    /** The older form, without an owner. */
    public ReservationRefused(String id, Lane lane, String subject, long amountMicros, long brandDailyMicros,
        long brandMonthlyMicros, CapName cap, String capSubject, String window, long limitMicros, long headroomMicros,
        Instant at) {
      this(id, lane, subject, amountMicros, brandDailyMicros, brandMonthlyMicros, cap, capSubject, window, limitMicros,
          headroomMicros, at, null);
    }
  }

  /**
   * Event: closed at its real cost; {@code actualMicros > reservedMicros} is recorded as is.
   * {@code operator} and {@code reason} are set only when an operator settled it (added after v1:
   * absent, i.e. null, in older events).
   */
  public record ReservationSettled(
      String id, Lane lane, String subject, Instant reservedAt, long reservedMicros, long actualMicros, Instant at,
      @JsonInclude(JsonInclude.Include.NON_NULL) String operator,
      @JsonInclude(JsonInclude.Include.NON_NULL) String reason)
      implements Event {
    /** A settle by the caller that reserved (no operator). */
    public ReservationSettled(
        String id, Lane lane, String subject, Instant reservedAt, long reservedMicros, long actualMicros, Instant at) {
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
      String id, Lane lane, String subject, Instant reservedAt, long reservedMicros, Instant at,
      @JsonInclude(JsonInclude.Include.NON_NULL) String operator,
      @JsonInclude(JsonInclude.Include.NON_NULL) String reason)
      implements Event {
    /** A void by the caller that reserved (no operator). */
    public ReservationVoided(String id, Lane lane, String subject, Instant reservedAt, long reservedMicros, Instant at) {
      this(id, lane, subject, reservedAt, reservedMicros, at, null, null);
    }
  }

  /** Event: left open past the timeout, closed at its worst case. */
  public record ReservationExpired(String id, Lane lane, String subject, Instant reservedAt, long reservedMicros, Instant at)
      implements Event {}

  /** Event: an operator moved settled spend by {@code deltaMicros} in the windows of {@code at}. */
  public record SpendAdjusted(
      String adjustmentId, String operator, String reason, Lane lane, String subject, long deltaMicros, Instant at)
      implements Event {}

  /** Event: closed reservations closed before {@code cutoff} and cap windows older than it were dropped. */
  public record Compacted(Instant cutoff, Instant at) implements Event {}

  // ---------------------------------------------------------------------------------------------
  // State
  // ---------------------------------------------------------------------------------------------

  /** The caps a brand sent with its latest reservation (shown by {@code /usage}). */
  public record BrandCaps(long dailyMicros, long monthlyMicros) {}

  /**
   * Immutable ledger state: every known reservation id, spend per cap window, open reservations,
   * and every operator adjustment id (kept for good: compaction forgets closed reservations only).
   */
  @JsonAutoDetect(fieldVisibility = JsonAutoDetect.Visibility.NONE)
  public static final class State implements LedgerSerializable {
    private final PersistentMap<String, Reservation> reservations;
    private final OpenReservations open;
    private final PersistentMap<CapKey, Spend> spend;
    private final PersistentMap<String, BrandCaps> brandCaps;
    private final PersistentMap<String, Adjustment> adjustments;

    private State(
        PersistentMap<String, Reservation> reservations,
        OpenReservations open,
        PersistentMap<CapKey, Spend> spend,
        PersistentMap<String, BrandCaps> brandCaps,
        PersistentMap<String, Adjustment> adjustments) {
      this.reservations = reservations;
      this.open = open;
      this.spend = spend;
      this.brandCaps = brandCaps;
      this.adjustments = adjustments;
    }

    public static State empty() {
      return new State(PersistentMap.empty(), OpenReservations.empty(), PersistentMap.empty(), PersistentMap.empty(),
          PersistentMap.empty());
    }

    public Optional<Reservation> reservation(String id) {
      return Optional.ofNullable(reservations.get(id));
    }

    public Optional<Adjustment> adjustment(String id) {
      return Optional.ofNullable(adjustments.get(id));
    }

    public int knownAdjustments() {
      return adjustments.size();
    }

    public Spend spendOn(CapKey key) {
      return spend.getOrDefault(key, Spend.NONE);
    }

    public int openReservations() {
      return open.size();
    }

    public int knownReservations() {
      return reservations.size();
    }

    /** Open reservations whose timeout has passed at {@code now}, oldest first. */
    public List<Reservation> dueForExpiry(Instant now) {
      return open.dueBy(now);
    }

    /** Whether a compaction at {@code cutoff} would drop anything. */
    public boolean hasClosedBefore(Instant cutoff) {
      return reservations.values().stream().anyMatch(r -> !r.isOpen() && r.closedAt().isBefore(cutoff))
          || spend.asMap().keySet().stream().anyMatch(k -> windowEndedBefore(k, cutoff));
    }

    /**
     * The state after {@code event}: the one fold used by the actor, its recovery and the audit
     * tools ({@code dev.spendgateway.ledger.audit}). Throws {@link IllegalStateException} on an
     * event that cannot follow this state (closing a reservation that is not open).
     */
    public State applied(Event event) {
      if (event instanceof ReservationMade e) {
        return withReservation(e);
      } else if (event instanceof ReservationRefused e) {
        return withRefusal(e);
      } else if (event instanceof ReservationSettled e) {
        return withClosed(e.id(), Status.SETTLED, e.actualMicros(), e.at());
      } else if (event instanceof ReservationVoided e) {
        return withClosed(e.id(), Status.VOIDED, 0, e.at());
      } else if (event instanceof ReservationExpired e) {
        return withClosed(e.id(), Status.EXPIRED, e.reservedMicros(), e.at());
      } else if (event instanceof SpendAdjusted e) {
        return withAdjustment(e);
      } else if (event instanceof Compacted e) {
        return compactedBefore(e.cutoff());
      }
      throw new IllegalArgumentException("unknown event " + event.getClass().getName());
    }

    /** Whether {@code id} is an open reservation. */
    public boolean isOpen(String id) {
      return open.get(id) != null;
    }

    State withReservation(ReservationMade e) {
      Reservation r = new Reservation(e.id(), e.lane(), e.subject(), e.amountMicros(), e.brandDailyMicros(),
          e.brandMonthlyMicros(), e.at(), e.expiresAt(), Status.RESERVED, 0, null, null, e.owner());
      PersistentMap<CapKey, Spend> newSpend = spend;
      for (CapKey key : CapCheck.keysFor(e.lane(), e.subject(), e.at())) {
        newSpend = newSpend.with(key, newSpend.getOrDefault(key, Spend.NONE).withReserved(e.amountMicros()));
      }
      PersistentMap<String, BrandCaps> newBrandCaps = e.lane() == Lane.APP
          ? brandCaps.with(e.subject(), new BrandCaps(e.brandDailyMicros(), e.brandMonthlyMicros()))
          : brandCaps;
      return new State(reservations.with(e.id(), r), open.with(e.id(), r), newSpend, newBrandCaps, adjustments);
    }

    State withRefusal(ReservationRefused e) {
      Reservation r = new Reservation(e.id(), e.lane(), e.subject(), e.amountMicros(), e.brandDailyMicros(),
          e.brandMonthlyMicros(), e.at(), e.at(), Status.REFUSED, 0, e.at(),
          new Refusal(e.cap(), e.capSubject(), e.window(), e.limitMicros(), e.headroomMicros()), e.owner());
      return new State(reservations.with(e.id(), r), open, spend, brandCaps, adjustments);
    }

    /** An open reservation closes at {@code actualMicros}: its hold is released, the cost counted. */
    State withClosed(String id, Status status, long actualMicros, Instant at) {
      Reservation r = open.get(id);
      if (r == null) {
        throw new IllegalStateException("closing a reservation that is not open: " + id);
      }
      PersistentMap<CapKey, Spend> newSpend = spend;
      for (CapKey key : CapCheck.keysFor(r.lane(), r.subject(), r.reservedAt())) {
        newSpend = newSpend.with(key, newSpend.getOrDefault(key, Spend.NONE).withClosed(r.amountMicros(), actualMicros));
      }
      return new State(reservations.with(id, r.closed(status, actualMicros, at)), open.without(id), newSpend, brandCaps,
          adjustments);
    }

    /** The delta counts as settled spend in the windows of {@code at}; its id is remembered. */
    State withAdjustment(SpendAdjusted e) {
      PersistentMap<CapKey, Spend> newSpend = spend;
      for (CapKey key : CapCheck.keysFor(e.lane(), e.subject(), e.at())) {
        newSpend = newSpend.with(key, newSpend.getOrDefault(key, Spend.NONE).withAdjustment(e.deltaMicros()));
      }
      Adjustment a = new Adjustment(e.adjustmentId(), e.operator(), e.reason(), e.lane(), e.subject(), e.deltaMicros(),
          e.at());
      return new State(reservations, open, newSpend, brandCaps, adjustments.with(a.id(), a));
    }

    State compactedBefore(Instant cutoff) {
      PersistentMap<String, Reservation> kept = reservations;
      for (Reservation r : reservations.values()) {
        if (!r.isOpen() && r.closedAt().isBefore(cutoff)) {
          kept = kept.without(r.id());
        }
      }
      PersistentMap<CapKey, Spend> keptSpend = spend;
      for (CapKey k : spend.asMap().keySet()) {
        if (windowEndedBefore(k, cutoff)) {
          keptSpend = keptSpend.without(k);
        }
      }
      return new State(kept, open, keptSpend, brandCaps, adjustments);
    }

    /** Day and month windows that ended before {@code cutoff}; lifetime windows never end. */
    private static boolean windowEndedBefore(CapKey key, Instant cutoff) {
      String window = key.window();
      if (window.equals(CapWindows.LIFETIME)) {
        return false;
      }
      String cutoffWindow = window.length() == 10 ? CapWindows.dayKey(cutoff) : CapWindows.monthKey(cutoff);
      return window.compareTo(cutoffWindow) < 0;
    }

    /**
     * Every cap window that {@code now} falls in, with limit, settled and held spend. With a
     * subject, the global and pool caps plus that subject's own; without, every subject active in
     * the current windows.
     */
    public Usage usage(Optional<String> subject, Instant now, CapLimits limits) {
      String day = CapWindows.dayKey(now);
      String month = CapWindows.monthKey(now);
      List<CapUsage> caps = new ArrayList<>();
      caps.add(capUsage(new CapKey(CapName.GLOBAL_DAILY, null, day), limits.globalDailyMicros()));
      caps.add(capUsage(new CapKey(CapName.GLOBAL_MONTHLY, null, month), limits.globalMonthlyMicros()));
      caps.add(capUsage(new CapKey(CapName.FREE_DAILY, null, day), limits.freeDailyMicros()));
      caps.add(capUsage(new CapKey(CapName.TRIAL_DAILY, null, day), limits.trialDailyMicros()));
      List<CapKey> subjectKeys = new ArrayList<>();
      for (CapKey k : spend.asMap().keySet()) {
        boolean current = k.window().equals(day) || k.window().equals(month) || k.window().equals(CapWindows.LIFETIME);
        if (k.cap().perSubject() && current && subject.map(s -> s.equals(k.subject())).orElse(true)) {
          subjectKeys.add(k);
        }
      }
      subject.ifPresent(s -> {
        BrandCaps bc = brandCaps.get(s);
        if (bc != null) {
          addIfAbsent(subjectKeys, new CapKey(CapName.BRAND_DAILY, s, day));
          addIfAbsent(subjectKeys, new CapKey(CapName.BRAND_MONTHLY, s, month));
        }
      });
      subjectKeys.sort(Comparator.comparing((CapKey k) -> k.subject()).thenComparing(CapKey::cap));
      for (CapKey k : subjectKeys) {
        caps.add(capUsage(k, limitOf(k, limits)));
      }
      return new Usage(List.copyOf(caps), open.size());
    }

    private static void addIfAbsent(List<CapKey> keys, CapKey key) {
      if (!keys.contains(key)) {
        keys.add(key);
      }
    }

    private long limitOf(CapKey key, CapLimits limits) {
      BrandCaps bc = brandCaps.getOrDefault(key.subject(), new BrandCaps(0, 0));
      return switch (key.cap()) {
        case PREVIEW_LIFETIME -> limits.previewLifetimeMicros();
        case BRAND_DAILY -> bc.dailyMicros();
        case BRAND_MONTHLY -> bc.monthlyMicros();
        default -> throw new IllegalArgumentException("not a subject cap: " + key);
      };
    }

    private CapUsage capUsage(CapKey key, long limitMicros) {
      Spend s = spendOn(key);
      return new CapUsage(key.cap(), key.subject(), key.window(), limitMicros, s.settledMicros(), s.reservedMicros());
    }

    // Snapshot form: plain lists, so the snapshot is readable and independent of the map type.

    /**
     * Serialized form of the state in snapshots. {@code adjustments} was added after the first
     * format: a snapshot without it reads as remembering no adjustment ids.
     */
    public record Snapshot(
        List<Reservation> reservations, List<SpendEntry> spend, Map<String, BrandCaps> brandCaps,
        List<Adjustment> adjustments) {
      public Snapshot {
        adjustments = adjustments == null ? List.of() : adjustments;
      }
    }

    public record SpendEntry(CapKey key, Spend spend) {}

    @JsonValue
    Snapshot toSnapshot() {
      List<SpendEntry> entries = spend.asMap().entrySet().stream()
          .map(e -> new SpendEntry(e.getKey(), e.getValue())).toList();
      return new Snapshot(List.copyOf(reservations.values()), entries, new HashMap<>(brandCaps.asMap()),
          List.copyOf(adjustments.values()));
    }

    @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
    static State fromSnapshot(Snapshot snapshot) {
      PersistentMap<String, Reservation> all = PersistentMap.empty();
      OpenReservations open = OpenReservations.empty();
      for (Reservation r : snapshot.reservations()) {
        all = all.with(r.id(), r);
        if (r.isOpen()) {
          open = open.with(r.id(), r);
        }
      }
      PersistentMap<CapKey, Spend> spend = PersistentMap.empty();
      for (SpendEntry e : snapshot.spend()) {
        spend = spend.with(e.key(), e.spend());
      }
      PersistentMap<String, Adjustment> adjustments = PersistentMap.empty();
      for (Adjustment a : snapshot.adjustments()) {
        adjustments = adjustments.with(a.id(), a);
      }
      return new State(all, open, spend, PersistentMap.of(snapshot.brandCaps()), adjustments);
    }

    /** Same books and same remembered ids: used by recovery tests (snapshot + journal vs journal only). */
    @Override
    public boolean equals(Object o) {
      return o instanceof State other
          && sameBooksIgnoringAdjustmentIds(other)
          && adjustments.asMap().equals(other.adjustments.asMap());
    }

    /**
     * Whether {@code snapshot}, a snapshot taken at the sequence number this state was replayed to,
     * holds the same books: equal in everything, except that it may remember fewer adjustment ids
     * (each one it remembers the same as here). A snapshot written before adjustment ids were kept
     * remembers none, and a ledger that recovered from such a snapshot only the later ones; the
     * spend they moved is in the books either way.
     */
    public boolean sameBooksAs(State snapshot) {
      return sameBooksIgnoringAdjustmentIds(snapshot)
          && snapshot.adjustments.asMap().entrySet().stream()
              .allMatch(e -> e.getValue().equals(adjustments.get(e.getKey())));
    }

    private boolean sameBooksIgnoringAdjustmentIds(State other) {
      return reservations.asMap().equals(other.reservations.asMap())
          && open.asMap().equals(other.open.asMap())
          && spend.asMap().entrySet().stream().filter(e -> !e.getValue().isEmpty()).collect(
              java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)).equals(
              other.spend.asMap().entrySet().stream().filter(e -> !e.getValue().isEmpty()).collect(
                  java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)))
          && brandCaps.asMap().equals(other.brandCaps.asMap());
    }

    @Override
    public int hashCode() {
      return reservations.size() * 31 + open.size();
    }

    @Override
    public String toString() {
      return "State(reservations=" + reservations.size() + ", open=" + open.size() + ", capWindows=" + spend.size()
          + ", adjustments=" + adjustments.size() + ")";
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Behavior
  // ---------------------------------------------------------------------------------------------

  private final ActorContext<Command> context;
  private final LedgerSettings settings;
  private final Clock clock;
  private final LedgerObserver observer;
  private final long startedNanos = System.nanoTime();

  /**
   * The ledger behavior with its expiry and compaction timers. Restarts with backoff when a journal
   * write fails (the callers of that write get no answer: their asks time out, nothing was acked).
   */
  public static Behavior<Command> create(LedgerSettings settings, Clock clock) {
    return create(settings, clock, LedgerObserver.NONE);
  }

  /** As {@link #create(LedgerSettings, Clock)}, telling {@code observer} about every durable write. */
  public static Behavior<Command> create(LedgerSettings settings, Clock clock, LedgerObserver observer) {
    return Behaviors.setup(context -> Behaviors.withTimers(timers -> {
      startTimers(timers, settings);
      return new GlobalBudget(context, settings, clock, observer);
    }));
  }

  private static void startTimers(TimerScheduler<Command> timers, LedgerSettings settings) {
    timers.startTimerWithFixedDelay("expire-due", new ExpireDue(), settings.expiryCheckInterval());
    timers.startTimerWithFixedDelay("compact", new Compact(), settings.compactionInterval());
  }

  private GlobalBudget(ActorContext<Command> context, LedgerSettings settings, Clock clock, LedgerObserver observer) {
    super(PERSISTENCE_ID, SupervisorStrategy.restartWithBackoff(Duration.ofMillis(200), Duration.ofSeconds(5), 0.2));
    this.context = context;
    this.settings = settings;
    this.clock = clock;
    this.observer = observer;
  }

  @Override
  public State emptyState() {
    return State.empty();
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(settings.snapshotEvery(), 2);
  }

  @Override
  public SignalHandler<State> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(RecoveryCompleted.instance(), this::onRecoveryCompleted)
        .build();
  }

  private void onRecoveryCompleted(State state) {
    Duration took = Duration.ofNanos(System.nanoTime() - startedNanos);
    context.getLog().info("ledger recovered in {} ms: {} reservation ids known, {} open, {} adjustment ids known",
        took.toMillis(), state.knownReservations(), state.openReservations(), state.knownAdjustments());
    tellObserver(() -> observer.recovered(took, state.knownReservations(), state.openReservations()));
    // Re-arm expiry at once: reservations that timed out while the ledger was down expire now.
    context.getSelf().tell(new ExpireDue());
  }

  @Override
  public CommandHandlerWithReply<Command, Event, State> commandHandler() {
    return newCommandHandlerWithReplyBuilder()
        .forAnyState()
        .onCommand(Batch.class, this::onBatch)
        .onCommand(Reserve.class, (state, cmd) -> onBatch(state, new Batch(List.of(cmd), null)))
        .onCommand(Settle.class, (state, cmd) -> onBatch(state, new Batch(List.of(cmd), null)))
        .onCommand(VoidReservation.class, (state, cmd) -> onBatch(state, new Batch(List.of(cmd), null)))
        .onCommand(ExpireDue.class, this::onExpireDue)
        .onCommand(Compact.class, this::onCompact)
        .onCommand(Adjust.class, this::onAdjust)
        .onCommand(OperatorSettle.class, this::onOperatorSettle)
        .onCommand(OperatorVoid.class, this::onOperatorVoid)
        .onCommand(GetUsage.class, this::onGetUsage)
        .onCommand(GetReservation.class, this::onGetReservation)
        .onCommand(AwaitReady.class, (state, cmd) -> Effect().reply(cmd.replyTo(), new Ready()))
        .build();
  }

  /** A decided command: the events it produces and the answer its caller gets once they are durable. */
  private record Decision(List<Event> events, Runnable answer) {
    static Decision answer(Runnable answer) {
      return new Decision(List.of(), answer);
    }
  }

  /**
   * Group commit: decide each command against the state the previous ones left, persist all events
   * in one write, answer every caller after it is durable.
   */
  private ReplyEffect<Event, State> onBatch(State state, Batch batch) {
    Instant now = clock.instant();
    List<Event> events = new ArrayList<>(batch.commands().size());
    List<Runnable> answers = new ArrayList<>(batch.commands().size());
    State decidedState = state;
    for (Batchable command : batch.commands()) {
      Decision decision = decide(decidedState, command, now);
      for (Event e : decision.events()) {
        decidedState = apply(decidedState, e);
      }
      events.addAll(decision.events());
      answers.add(decision.answer());
    }
    BatchWritten written = new BatchWritten(batch.commands().size(), events.size());
    if (events.isEmpty()) {
      answers.forEach(Runnable::run);
      return batch.replyTo() == null ? Effect().noReply() : Effect().reply(batch.replyTo(), written);
    }
    long writeStarted = System.nanoTime();
    var effect = Effect().persist(events).thenRun(newState -> {
      answers.forEach(Runnable::run);
      logOverReserve(events);
      observePersisted(events, writeStarted);
    });
    return batch.replyTo() == null ? effect.thenNoReply() : effect.thenReply(batch.replyTo(), s -> written);
  }

  private Decision decide(State state, Batchable command, Instant now) {
    if (command instanceof Reserve r) {
      return decideReserve(state, r, now);
    } else if (command instanceof Settle s) {
      return decideClose(state, s.id(), Status.SETTLED, s.actualMicros(), now, s.closer(), null, null, s.replyTo());
    } else if (command instanceof VoidReservation v) {
      return decideClose(state, v.id(), Status.VOIDED, 0, now, v.closer(), null, null, v.replyTo());
    }
    throw new IllegalArgumentException("not batchable: " + command);
  }

  private Decision decideReserve(State state, Reserve cmd, Instant now) {
    Optional<String> invalid = invalidReserve(cmd);
    if (invalid.isPresent()) {
      String field = invalid.get();
      return Decision.answer(() -> cmd.replyTo().tell(new Invalid(cmd.id(), field, invalidReserveMessage(cmd, field))));
    }
    String subject = cmd.lane().needsSubject() ? cmd.subject() : null;
    long brandDaily = cmd.lane() == Lane.APP ? cmd.brandDailyMicros() : 0;
    long brandMonthly = cmd.lane() == Lane.APP ? cmd.brandMonthlyMicros() : 0;

    Optional<Reservation> known = state.reservation(cmd.id());
    if (known.isPresent()) {
      Reservation r = known.get();
      ReserveReply again = !r.sameRequestAs(cmd.owner(), cmd.lane(), subject, cmd.amountMicros(), brandDaily, brandMonthly)
          ? new Conflict(cmd.id(), "reservation id " + cmd.id() + " was already used for a different request")
          : r.wasRefused()
              ? new Refused(r.id(), r.refusal().cap(), r.refusal().subject(), r.refusal().headroomMicros())
              : new Reserved(r.id(), r.amountMicros());
      return Decision.answer(() -> cmd.replyTo().tell(again));
    }

    List<CapCheck.Applicable> caps =
        CapCheck.capsFor(cmd.lane(), subject, brandDaily, brandMonthly, now, settings.caps());
    Optional<CapCheck.Failure> failure = CapCheck.firstFailing(caps, cmd.amountMicros(), state::spendOn);
    if (failure.isPresent()) {
      CapCheck.Failure f = failure.get();
      Event refused = new ReservationRefused(cmd.id(), cmd.lane(), subject, cmd.amountMicros(), brandDaily, brandMonthly,
          f.key().cap(), f.key().subject(), f.key().window(), f.limitMicros(), f.headroomMicros(), now, cmd.owner());
      Refused reply = new Refused(cmd.id(), f.key().cap(), f.key().subject(), f.headroomMicros());
      return new Decision(List.of(refused), () -> cmd.replyTo().tell(reply));
    }
    Event made = new ReservationMade(cmd.id(), cmd.lane(), subject, cmd.amountMicros(), brandDaily, brandMonthly,
        now, now.plus(settings.reservationTimeout()), cmd.owner());
    Reserved reply = new Reserved(cmd.id(), cmd.amountMicros());
    return new Decision(List.of(made), () -> cmd.replyTo().tell(reply));
  }

  /** The first malformed field of a reserve, if any (the edge validates first; this is the backstop). */
  private static Optional<String> invalidReserve(Reserve cmd) {
    if (cmd.id() == null || cmd.id().isBlank() || cmd.id().length() > MAX_ID_LENGTH || cmd.owner() == null
        || Owner.impliedBy(cmd.id()) == Owner.GATEWAY && cmd.owner() != Owner.GATEWAY) {
      return Optional.of("id");
    }
    if (cmd.lane() == null) {
      return Optional.of("lane");
    }
    if (cmd.lane().needsSubject() && (cmd.subject() == null || cmd.subject().isBlank()
        || cmd.subject().length() > MAX_ID_LENGTH)) {
      return Optional.of("brand");
    }
    if (cmd.amountMicros() < cmd.owner().minimumAmountMicros()) {
      return Optional.of("amountUsd");
    }
    if (cmd.lane() == Lane.APP && cmd.brandDailyMicros() < 0) {
      return Optional.of("brandDailyUsd");
    }
    if (cmd.lane() == Lane.APP && cmd.brandMonthlyMicros() < 0) {
      return Optional.of("brandMonthlyUsd");
    }
    return Optional.empty();
  }

  private static String invalidReserveMessage(Reserve cmd, String field) {
    if (field.equals("id") && cmd.owner() != null && cmd.id() != null && cmd.id().length() <= MAX_ID_LENGTH
        && Owner.impliedBy(cmd.id()) == Owner.GATEWAY) {
      return "ids starting with " + Owner.GATEWAY_ID_PREFIX + " are the gateway's own; choose another id";
    }
    if (field.equals("amountUsd") && cmd.amountMicros() >= 0) {
      return "amountUsd must be greater than 0";
    }
    return field + " is missing or out of range";
  }

  /**
   * @param closer who asks to close it; {@code null} for an operator, who may close any reservation
   *     at any amount (a correction is exactly that)
   */
  private Decision decideClose(State state, String id, Status closeAs, long actualMicros, Instant now,
      Owner closer, String operator, String reason, ActorRef<CloseReply> replyTo) {
    if (actualMicros < 0) {
      return Decision.answer(() -> replyTo.tell(new Invalid(id, "actualUsd", "actualUsd must not be negative")));
    }
    Optional<Reservation> known = state.reservation(id);
    if (closer == Owner.LEDGER_API && Owner.impliedBy(id) == Owner.GATEWAY
        || closer != null && known.isPresent() && !known.get().closableBy(closer)) {
      return Decision.answer(() -> replyTo.tell(new Forbidden(id, forbiddenMessage(id, closer))));
    }
    if (known.isEmpty()) {
      return Decision.answer(() -> replyTo.tell(new NotFound(id)));
    }
    Reservation r = known.get();
    if (closer != null && closeAs == Status.SETTLED && r.isOpen() && !r.settleWithinBoundOf(closer, actualMicros)) {
      String message = "actualUsd " + Micros.toUsd(actualMicros).toPlainString() + " is above the reserved amountUsd "
          + Micros.toUsd(r.amountMicros()).toPlainString() + "; a reservation settles at most at what it reserved";
      return Decision.answer(() -> replyTo.tell(new Invalid(id, "actualUsd", message)));
    }
    if (r.wasRefused()) {
      return Decision.answer(() -> replyTo.tell(new NotOpen(id, Status.REFUSED)));
    }
    if (!r.isOpen()) {
      Closed first = new Closed(id, r.status(), r.actualMicros());
      return Decision.answer(() -> replyTo.tell(first));
    }
    Event closed = closeAs == Status.SETTLED
        ? new ReservationSettled(id, r.lane(), r.subject(), r.reservedAt(), r.amountMicros(), actualMicros, now,
            operator, reason)
        : new ReservationVoided(id, r.lane(), r.subject(), r.reservedAt(), r.amountMicros(), now, operator, reason);
    Closed reply = new Closed(id, closeAs, actualMicros);
    return new Decision(List.of(closed), () -> replyTo.tell(reply));
  }

  /** Says whose the reservation is without naming it: an id of the provider routes is never echoed. */
  private static String forbiddenMessage(String id, Owner closer) {
    return closer == Owner.LEDGER_API
        ? "reservations made by the gateway's provider routes are settled and voided by the gateway only"
        : "reservations made through the ledger API are settled and voided through it only";
  }

  /**
   * A provider call's reservation id stays out of the log: the gateway logs the same fact with the
   * call's request id, which is what an operator searches by.
   */
  private void logOverReserve(List<Event> events) {
    for (Event e : events) {
      if (e instanceof ReservationSettled s && s.overReserve()) {
        String id = Owner.impliedBy(s.id()) == Owner.GATEWAY ? "(a provider call)" : s.id();
        context.getLog().warn("settled above reserve: id={} lane={} subject={} reservedUsd={} actualUsd={}",
            id, s.lane().wireName(), s.subject(), Micros.toUsd(s.reservedMicros()), Micros.toUsd(s.actualMicros()));
      }
    }
  }

  private ReplyEffect<Event, State> onExpireDue(State state, ExpireDue cmd) {
    Instant now = clock.instant();
    List<Event> expired = state.dueForExpiry(now).stream()
        .map(r -> (Event) new ReservationExpired(r.id(), r.lane(), r.subject(), r.reservedAt(), r.amountMicros(), now))
        .toList();
    if (expired.isEmpty()) {
      return Effect().noReply();
    }
    long writeStarted = System.nanoTime();
    return Effect().persist(expired)
        .thenRun(s -> {
          context.getLog().info("expired {} reservations at their worst case", expired.size());
          observePersisted(expired, writeStarted);
        })
        .thenNoReply();
  }

  private ReplyEffect<Event, State> onCompact(State state, Compact cmd) {
    Instant now = clock.instant();
    Instant cutoff = now.minus(settings.retention());
    if (!state.hasClosedBefore(cutoff)) {
      return Effect().noReply();
    }
    Event compacted = new Compacted(cutoff, now);
    long writeStarted = System.nanoTime();
    return Effect().persist(compacted).thenRun(s -> observePersisted(List.of(compacted), writeStarted)).thenNoReply();
  }

  /**
   * Applies an operator adjustment once per id: a repeat of the same adjustment answers the first
   * one's facts and writes nothing; the id reused for a different one is a {@link Conflict}.
   */
  private ReplyEffect<Event, State> onAdjust(State state, Adjust cmd) {
    Optional<String> invalid = invalidAdjust(cmd);
    if (invalid.isPresent()) {
      String field = invalid.get();
      return Effect().reply(cmd.replyTo(), new Invalid(cmd.adjustmentId(), field, field + " is missing or out of range"));
    }
    String subject = cmd.lane().needsSubject() ? cmd.subject() : null;
    Optional<Adjustment> known = state.adjustment(cmd.adjustmentId());
    if (known.isPresent()) {
      Adjustment first = known.get();
      if (!first.sameAdjustmentAs(cmd.lane(), subject, cmd.deltaMicros(), cmd.operator())) {
        context.getLog().info("operator adjustment refused: id={} was already used for a different adjustment",
            cmd.adjustmentId());
        return Effect().reply(cmd.replyTo(), new Conflict(cmd.adjustmentId(), conflictMessage(first)));
      }
      context.getLog().info("operator adjustment repeated: id={} was applied at {}; nothing changed",
          first.id(), first.at());
      return Effect().reply(cmd.replyTo(), Adjusted.of(first));
    }

    Instant now = clock.instant();
    // After the repeat check: a credit already applied answers its first result even though
    // crediting it again now would go below zero.
    AdjustmentBounds.Verdict bounds = AdjustmentBounds.check(cmd.lane(), subject, cmd.deltaMicros(), now,
        settings.maxAdjustmentMicros(), state::spendOn);
    if (bounds instanceof AdjustmentBounds.TooLarge tooLarge) {
      return Effect().reply(cmd.replyTo(), new Invalid(cmd.adjustmentId(), "deltaUsd", tooLarge.message("deltaUsd")));
    }
    if (bounds instanceof AdjustmentBounds.BelowZero below) {
      context.getLog().info("operator adjustment refused: id={} would take {} below zero", cmd.adjustmentId(),
          below.key().cap().wireName());
      return Effect().reply(cmd.replyTo(), new AdjustRefused(cmd.adjustmentId(), below.key().cap(),
          below.key().subject(), below.key().window(), below.settledMicros(), cmd.deltaMicros(), below.message()));
    }
    Event adjusted =
        new SpendAdjusted(cmd.adjustmentId(), cmd.operator(), cmd.reason(), cmd.lane(), subject, cmd.deltaMicros(), now);
    long writeStarted = System.nanoTime();
    // Operator and reason are free text: they go to the journal, not into this log line.
    context.getLog().info("operator adjustment: id={} lane={} subject={} deltaUsd={}",
        cmd.adjustmentId(), cmd.lane().wireName(), subject, Micros.toUsd(cmd.deltaMicros()));
    return Effect()
        .persist(adjusted)
        .thenRun(s -> observePersisted(List.of(adjusted), writeStarted))
        .thenReply(cmd.replyTo(), s -> Adjusted.of(s.adjustment(cmd.adjustmentId()).orElseThrow()));
  }

  /** The first malformed field of an adjustment, if any (the edge validates first; this is the backstop). */
  private static Optional<String> invalidAdjust(Adjust cmd) {
    if (cmd.adjustmentId() == null || cmd.adjustmentId().isBlank()
        || cmd.adjustmentId().length() > MAX_ADJUSTMENT_ID_LENGTH) {
      return Optional.of("adjustmentId");
    }
    if (cmd.lane() == null) {
      return Optional.of("lane");
    }
    if (cmd.lane().needsSubject() && (cmd.subject() == null || cmd.subject().isBlank()
        || cmd.subject().length() > MAX_ID_LENGTH)) {
      return Optional.of("brand");
    }
    if (cmd.operator() == null || cmd.operator().isBlank()) {
      return Optional.of("operator");
    }
    return Optional.empty();
  }

  private static String conflictMessage(Adjustment first) {
    return "adjustment id " + first.id() + " was already used for a different adjustment (lane "
        + first.lane().wireName() + (first.subject() == null ? "" : ", brand " + first.subject())
        + ", deltaUsd " + Micros.toUsd(first.deltaMicros()).toPlainString() + ", operator " + first.operator()
        + ", at " + first.at() + "); choose a new id for a new adjustment";
  }

  private ReplyEffect<Event, State> onOperatorSettle(State state, OperatorSettle cmd) {
    return onOperatorClose(state, decideClose(state, cmd.id(), Status.SETTLED, cmd.actualMicros(), clock.instant(),
        null, cmd.operator(), cmd.reason(), cmd.replyTo()));
  }

  private ReplyEffect<Event, State> onOperatorVoid(State state, OperatorVoid cmd) {
    return onOperatorClose(state, decideClose(state, cmd.id(), Status.VOIDED, 0, clock.instant(),
        null, cmd.operator(), cmd.reason(), cmd.replyTo()));
  }

  /** Persists an operator's close (if it closes anything), then answers; same rules as a caller's close. */
  private ReplyEffect<Event, State> onOperatorClose(State state, Decision decision) {
    if (decision.events().isEmpty()) {
      decision.answer().run();
      return Effect().noReply();
    }
    long writeStarted = System.nanoTime();
    return Effect().persist(decision.events()).thenRun(s -> {
      decision.answer().run();
      logOverReserve(decision.events());
      observePersisted(decision.events(), writeStarted);
    }).thenNoReply();
  }

  private void observePersisted(List<Event> events, long writeStartedNanos) {
    Duration took = Duration.ofNanos(System.nanoTime() - writeStartedNanos);
    tellObserver(() -> observer.persisted(events, took));
  }

  /** Metrics must never break the ledger: whatever the observer throws is logged and dropped. */
  private void tellObserver(Runnable call) {
    try {
      call.run();
    } catch (RuntimeException e) {
      context.getLog().warn("ledger observer failed: {}", e.toString());
    }
  }

  private ReplyEffect<Event, State> onGetUsage(State state, GetUsage cmd) {
    return Effect().reply(cmd.replyTo(), state.usage(cmd.subject(), clock.instant(), settings.caps()));
  }

  private ReplyEffect<Event, State> onGetReservation(State state, GetReservation cmd) {
    ReservationReply reply = state.reservation(cmd.id())
        .<ReservationReply>map(r -> new ReservationView(r.id(), r.status(), r.lane(), r.subject(), r.amountMicros(),
            r.isOpen() || r.wasRefused() ? Optional.empty() : Optional.of(r.actualMicros()), r.owner()))
        .orElseGet(() -> new NotFound(cmd.id()));
    return Effect().reply(cmd.replyTo(), reply);
  }

  // ---------------------------------------------------------------------------------------------
  // Event handlers: apply facts only
  // ---------------------------------------------------------------------------------------------

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onAnyEvent(State::applied);
  }

  /** The same fold the journal replays, used to decide later commands of a batch. */
  private static State apply(State state, Event event) {
    return state.applied(event);
  }
}
