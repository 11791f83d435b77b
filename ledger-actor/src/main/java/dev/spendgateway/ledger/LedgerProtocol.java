package dev.spendgateway.ledger;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapName;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * What the ledger accepts and what it answers: commands and replies, records in sealed interfaces,
 * {@code replyTo} last. Nothing here is persisted, so these types may be renamed freely.
 *
 * <p>{@link GlobalBudget} implements this interface only so that the names callers have always used
 * ({@code GlobalBudget.Reserve}, {@code GlobalBudget.Reserved}, ...) keep resolving; new code may
 * import them from here.
 */
public interface LedgerProtocol {

  // ---------------------------------------------------------------------------------------------
  // Commands
  // ---------------------------------------------------------------------------------------------

  /** Everything the ledger accepts. */
  public sealed interface Command extends LedgerSerializable {}

  /**
   * A command whose caller stops waiting at {@code deadline} (its ask timeout). Past it the ledger
   * drops the command without deciding or writing it: its caller has already answered its own
   * caller (503), so a reservation booked now would hold its worst case under an id nobody closes.
   * {@code null} means no deadline (commands built without {@link LedgerClient}, e.g. in tests).
   */
  public sealed interface WithDeadline extends Command {
    Instant deadline();

    /** Whether the caller had given up by {@code now}. */
    default boolean pastDeadline(Instant now) {
      return deadline() != null && now.isAfter(deadline());
    }
  }

  /** The commands that change the books and are therefore group-committed. */
  public sealed interface Batchable extends WithDeadline {
    /** This command without its caller's ref, to travel in a {@link NodeBatch}. */
    Batchable withoutReplyTo();

    /** The same command, answered to {@code to} (whichever reply type it has). */
    Batchable answeredTo(ActorRef<LedgerSerializable> to);
  }

  /**
   * Hold {@code amountMicros} against every cap of the lane. For {@link Lane#APP} the brand's caps
   * come with the request; for the other lanes they are ignored (send 0). {@code owner} is recorded
   * with the reservation: only it may settle or void it. {@code tag} is the caller's workflow tag,
   * {@code model} and {@code provider} what the reservation pays for, all three journaled with the
   * reservation for reports (null: none).
   */
  public record Reserve(
      String id,
      Lane lane,
      String subject,
      long amountMicros,
      long brandDailyMicros,
      long brandMonthlyMicros,
      Owner owner,
      Instant deadline,
      String tag,
      String model,
      String provider,
      ActorRef<ReserveReply> replyTo)
      implements Batchable {
    /** Without a workflow tag, model or provider. */
    public Reserve(
        String id,
        Lane lane,
        String subject,
        long amountMicros,
        long brandDailyMicros,
        long brandMonthlyMicros,
        Owner owner,
        Instant deadline,
        ActorRef<ReserveReply> replyTo) {
      this(
          id,
          lane,
          subject,
          amountMicros,
          brandDailyMicros,
          brandMonthlyMicros,
          owner,
          deadline,
          null,
          null,
          null,
          replyTo);
    }

    @Override
    public Reserve withoutReplyTo() {
      return withReplyTo(null);
    }

    @Override
    public Reserve answeredTo(ActorRef<LedgerSerializable> to) {
      return withReplyTo(to.narrow());
    }

    /** The same reserve, answered to {@code to}. */
    public Reserve withReplyTo(ActorRef<ReserveReply> to) {
      return new Reserve(
          id,
          lane,
          subject,
          amountMicros,
          brandDailyMicros,
          brandMonthlyMicros,
          owner,
          deadline,
          tag,
          model,
          provider,
          to);
    }

    /** Without a deadline. */
    public Reserve(
        String id,
        Lane lane,
        String subject,
        long amountMicros,
        long brandDailyMicros,
        long brandMonthlyMicros,
        Owner owner,
        ActorRef<ReserveReply> replyTo) {
      this(
          id,
          lane,
          subject,
          amountMicros,
          brandDailyMicros,
          brandMonthlyMicros,
          owner,
          null,
          replyTo);
    }

    /** A reservation of the gateway's provider routes, without a deadline. */
    public Reserve(
        String id,
        Lane lane,
        String subject,
        long amountMicros,
        long brandDailyMicros,
        long brandMonthlyMicros,
        ActorRef<ReserveReply> replyTo) {
      this(
          id,
          lane,
          subject,
          amountMicros,
          brandDailyMicros,
          brandMonthlyMicros,
          Owner.GATEWAY,
          null,
          replyTo);
    }
  }

  /** Close an open reservation at its real cost; {@code closer} must be its owner. */
  public record Settle(
      String id, long actualMicros, Owner closer, Instant deadline, ActorRef<CloseReply> replyTo)
      implements Batchable {
    @Override
    public Settle withoutReplyTo() {
      return withReplyTo(null);
    }

    @Override
    public Settle answeredTo(ActorRef<LedgerSerializable> to) {
      return withReplyTo(to.narrow());
    }

    /** The same settle, answered to {@code to}. */
    public Settle withReplyTo(ActorRef<CloseReply> to) {
      return new Settle(id, actualMicros, closer, deadline, to);
    }

    /** Without a deadline. */
    public Settle(String id, long actualMicros, Owner closer, ActorRef<CloseReply> replyTo) {
      this(id, actualMicros, closer, null, replyTo);
    }

    /** A settle by the gateway's provider routes, without a deadline. */
    public Settle(String id, long actualMicros, ActorRef<CloseReply> replyTo) {
      this(id, actualMicros, Owner.GATEWAY, null, replyTo);
    }
  }

  /**
   * Close an open reservation at zero: the provider did not bill. {@code closer} must be its owner.
   */
  public record VoidReservation(
      String id, Owner closer, Instant deadline, ActorRef<CloseReply> replyTo)
      implements Batchable {
    @Override
    public VoidReservation withoutReplyTo() {
      return withReplyTo(null);
    }

    @Override
    public VoidReservation answeredTo(ActorRef<LedgerSerializable> to) {
      return withReplyTo(to.narrow());
    }

    /** The same void, answered to {@code to}. */
    public VoidReservation withReplyTo(ActorRef<CloseReply> to) {
      return new VoidReservation(id, closer, deadline, to);
    }

    /** Without a deadline. */
    public VoidReservation(String id, Owner closer, ActorRef<CloseReply> replyTo) {
      this(id, closer, null, replyTo);
    }

    /** A void by the gateway's provider routes, without a deadline. */
    public VoidReservation(String id, ActorRef<CloseReply> replyTo) {
      this(id, Owner.GATEWAY, null, replyTo);
    }
  }

  /** Decide {@code commands} in order and persist their events as one write; then answer each. */
  public record Batch(List<Batchable> commands, ActorRef<BatchWritten> replyTo)
      implements Command {}

  /** Timer tick: expire every open reservation past its {@code expiresAt}, at its worst case. */
  public record ExpireDue() implements Command {}

  /** Timer tick: forget closed reservations older than the retention. */
  public record Compact() implements Command {}

  /**
   * Sent by the ledger to itself once recovered: journal a change of window zone if {@code
   * ledger.window-zone} is not the zone the journal counts in (see {@link
   * LedgerEvents.WindowZoneChanged}).
   */
  public record AdoptWindowZone() implements Command {}

  /**
   * Timer tick: flush the gateway's own settles and voids that were answered at commit and that no
   * later write's flush has covered yet ({@code ledger.journal.close-flush-delay}).
   */
  public record FlushCloses() implements Command {}

  /**
   * Sent by the ledger to itself when the flush its pending answers waited for has ended: the
   * answers go out from the ledger's own thread ({@code answers}; not run when the flush failed).
   * Never leaves the process.
   */
  public record Flushed(Runnable answers, Throwable failure) implements Command {}

  /**
   * Operator correction through the running actor: adds {@code deltaMicros} (negative = credit) as
   * settled spend to the caps of the lane that {@code scope} names, in the windows containing
   * {@code window} (a day {@code 2026-11-29} or month {@code 2026-11} of {@code
   * ledger.window-zone}; see {@link AdjustmentWindow}), and in no other window. Idempotent by
   * {@code adjustmentId}: a repeat with the same lane, subject, delta, operator, window and scope
   * gets the first answer and changes nothing; the same id with other fields is a {@link Conflict}.
   */
  public record Adjust(
      String adjustmentId,
      String operator,
      String reason,
      Lane lane,
      String subject,
      long deltaMicros,
      String window,
      AdjustmentScope scope,
      Instant deadline,
      ActorRef<AdjustReply> replyTo)
      implements WithDeadline {
    /** Without a deadline. */
    public Adjust(
        String adjustmentId,
        String operator,
        String reason,
        Lane lane,
        String subject,
        long deltaMicros,
        String window,
        AdjustmentScope scope,
        ActorRef<AdjustReply> replyTo) {
      this(
          adjustmentId, operator, reason, lane, subject, deltaMicros, window, scope, null, replyTo);
    }
  }

  /**
   * Operator's settle through the running actor: like {@link Settle}, and the event records who and
   * why. Not group-committed (rare), decided in order with the batches.
   */
  public record OperatorSettle(
      String id,
      long actualMicros,
      String operator,
      String reason,
      Instant deadline,
      ActorRef<CloseReply> replyTo)
      implements WithDeadline {
    /** Without a deadline. */
    public OperatorSettle(
        String id,
        long actualMicros,
        String operator,
        String reason,
        ActorRef<CloseReply> replyTo) {
      this(id, actualMicros, operator, reason, null, replyTo);
    }
  }

  /** Operator's void through the running actor: like {@link VoidReservation}, with who and why. */
  public record OperatorVoid(
      String id, String operator, String reason, Instant deadline, ActorRef<CloseReply> replyTo)
      implements WithDeadline {
    /** Without a deadline. */
    public OperatorVoid(String id, String operator, String reason, ActorRef<CloseReply> replyTo) {
      this(id, operator, reason, null, replyTo);
    }
  }

  /**
   * Spend against every current cap window, optionally narrowed to one brand or preview id. Without
   * a subject the answer holds the global and pool caps and the caps of at most {@code topSubjects}
   * brands or preview ids (those with the most spent + held in the current windows): the number of
   * preview ids grows without end, and a read must not grow with it.
   */
  public record GetUsage(Optional<String> subject, int topSubjects, ActorRef<Usage> replyTo)
      implements Command {
    /** The default number of subjects a subject-less usage read lists. */
    public static final int DEFAULT_TOP_SUBJECTS = 20;

    public GetUsage {
      if (topSubjects < 0) {
        throw new IllegalArgumentException("topSubjects must be >= 0, was " + topSubjects);
      }
    }

    public GetUsage(Optional<String> subject, ActorRef<Usage> replyTo) {
      this(subject, DEFAULT_TOP_SUBJECTS, replyTo);
    }
  }

  public record GetReservation(String id, ActorRef<ReservationReply> replyTo) implements Command {}

  /**
   * Hold a media job's worst case, unless its account already has {@code maxConcurrentJobs}
   * unfinished jobs (open reservations paying for a media job), counted here so the count is exact
   * across nodes and restarts. The reservation lives for {@code lifetime} instead of the ledger's
   * reservation timeout (a video job runs for minutes), and the caller's idempotency key is
   * journaled with it. A repeat of a known id answers the job it already holds. {@code
   * reserve.replyTo} is unused.
   */
  public record ReserveMediaJob(
      Reserve reserve,
      String account,
      String idempotencyKey,
      int maxConcurrentJobs,
      Duration lifetime,
      ActorRef<MediaReserveReply> replyTo)
      implements Command {}

  /** The media provider accepted the job of open reservation {@code id} as {@code jobId}. */
  public record RecordMediaJob(String id, String jobId, ActorRef<MediaJobRecorded> replyTo)
      implements Command {}

  /** Every open reservation paying for a media job: what the gateway's poller watches. */
  public record GetOpenMediaJobs(ActorRef<OpenMediaJobs> replyTo) implements Command {}

  /** Answered as soon as the ledger runs, i.e. once recovery from the journal has finished. */
  public record AwaitReady(ActorRef<Ready> replyTo) implements Command {}

  /**
   * The ledger is leaving this node (its cluster singleton is handed over): the batch being written
   * is finished and answered, every command still waiting is answered {@link Busy} (nothing
   * decided, retry), and the ledger stops.
   */
  public record HandOver() implements Command {}

  /**
   * The reserves, settles and voids one cluster node sends the ledger on another node, as one
   * remote message instead of one per call: a message and its serialization cost about as much CPU
   * as the ledger's whole decision, so a node sends whatever arrived while its earlier batches were
   * on their way. The commands travel without their {@code replyTo} (each caller waits on the
   * sending node, which keeps the commands by index); the ledger decides them as if they had come
   * one by one and answers the batch with one {@link NodeAnswers}.
   *
   * @param batch the sending node's number for this batch, echoed in the answer
   * @param commands in the order they reached the sending node, {@code replyTo} left out
   * @param replyTo the sending node's batcher
   */
  public record NodeBatch(
      long batch,
      @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.WRAPPER_OBJECT)
          @JsonSubTypes({
            @JsonSubTypes.Type(value = Reserve.class, name = "Reserve"),
            @JsonSubTypes.Type(value = Settle.class, name = "Settle"),
            @JsonSubTypes.Type(value = VoidReservation.class, name = "Void")
          })
          List<Batchable> commands,
      ActorRef<NodeAnswers> replyTo)
      implements Command {
    public NodeBatch {
      commands = List.copyOf(commands);
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Replies
  // ---------------------------------------------------------------------------------------------

  public sealed interface ReserveReply extends LedgerSerializable {}

  public sealed interface CloseReply extends LedgerSerializable {}

  public sealed interface ReservationReply extends LedgerSerializable {}

  public sealed interface AdjustReply extends LedgerSerializable {}

  public sealed interface MediaReserveReply extends LedgerSerializable {}

  /**
   * A media job's worst case is held (durably). {@code fresh} is false for a repeat of an id that
   * was already held, and {@code jobId} then names the provider's job if it was recorded (null when
   * the first submit's answer never was: the caller must not submit it a second time).
   */
  public record MediaJobReserved(String id, long amountMicros, String jobId, boolean fresh)
      implements MediaReserveReply {}

  /** The account has its limit of unfinished jobs; nothing was reserved or written. */
  public record MediaJobsFull(String id, int unfinished, int maxConcurrentJobs)
      implements MediaReserveReply {}

  /** A cap refused the job's worst case (journaled, like any refusal). */
  public record MediaJobRefused(Refused refused) implements MediaReserveReply {}

  /**
   * The id was used before and is closed (the job ended, or it was refused or voided). {@code
   * jobId} names the provider's job when it was a keyed job that was submitted (the caller is
   * answered that job), null otherwise.
   */
  public record MediaJobClosed(String id, Status status, String jobId)
      implements MediaReserveReply {
    public MediaJobClosed(String id, Status status) {
      this(id, status, null);
    }
  }

  /**
   * The reserve was not admitted for another reason: {@code reason} is {@code conflict}, {@code
   * invalid} or {@code id_reused}, as the ledger API answers them.
   */
  public record MediaJobNotReserved(String id, String reason, String message)
      implements MediaReserveReply {}

  /** Whether the job id was recorded (false: the reservation is no longer open). */
  public record MediaJobRecorded(String id, boolean recorded) implements LedgerSerializable {}

  /**
   * One open media job.
   *
   * @param jobId the provider's id, or null when its submit's answer was never recorded
   */
  public record OpenMediaJob(
      String id,
      String account,
      String idempotencyKey,
      String jobId,
      long amountMicros,
      Instant reservedAt,
      Instant expiresAt)
      implements LedgerSerializable {}

  public record OpenMediaJobs(List<OpenMediaJob> jobs) implements LedgerSerializable {}

  /** The amount is held (durably). Also the answer to a repeat of an admitted id. */
  public record Reserved(String id, long amountMicros) implements ReserveReply {}

  /**
   * The first cap that could not take the amount, with its headroom. A refused id stays refused.
   */
  public record Refused(String id, CapName cap, String subject, long headroomMicros)
      implements ReserveReply {}

  /**
   * The ledger's queue of reserve/settle/void commands was full ({@code
   * ledger.max-queued-commands}): answered at once, nothing decided or written. The caller may
   * retry the same command after {@code retryAfterSeconds} (the edge answers 503 {@code
   * ledger_busy} with {@code retry-after}).
   */
  public record Busy(String id, int retryAfterSeconds) implements ReserveReply, CloseReply {}

  /** The id is already used by a different request. */
  public record Conflict(String id, String message)
      implements ReserveReply, CloseReply, AdjustReply {}

  /**
   * Reply: the id was used before the idempotency window (or a past-id filter's false positive,
   * about 1 in 100): its first answer is gone, and a second reservation under it is never made (409
   * {@code id_reused}); the caller must use a new id.
   */
  public record IdReused(String id) implements ReserveReply {}

  /** The command itself is malformed (negative amount, missing subject...). Nothing changed. */
  public record Invalid(String id, String field, String message)
      implements ReserveReply, CloseReply, AdjustReply {}

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
      String id,
      Status status,
      Lane lane,
      String subject,
      long amountMicros,
      Optional<Long> actualMicros,
      Owner owner)
      implements ReservationReply {}

  /**
   * @param activeSubjects how many brands and preview ids have spend or holds in the current
   *     windows (the caps of at most the requested number of them are in {@code caps})
   * @param zone the IANA zone the current day and month windows are counted in ({@code
   *     ledger.window-zone}, or the zone before a change that takes effect at the end of this day);
   *     {@code UTC} when absent (a reply from a ledger written before zones)
   */
  public record Usage(List<CapUsage> caps, int openReservations, int activeSubjects, String zone)
      implements LedgerSerializable {
    public Usage {
      zone = zone == null ? "UTC" : zone;
    }

    public Usage(List<CapUsage> caps, int openReservations, int activeSubjects) {
      this(caps, openReservations, activeSubjects, null);
    }

    public Usage(List<CapUsage> caps, int openReservations) {
      this(caps, openReservations, 0);
    }
  }

  public record CapUsage(
      CapName cap,
      String subject,
      String window,
      long limitMicros,
      long spentMicros,
      long reservedMicros)
      implements LedgerSerializable {
    public long remainingMicros() {
      return limitMicros - spentMicros - reservedMicros;
    }
  }

  /**
   * The adjustment is applied (durably). Also the answer to a repeat of its id: the first one's
   * facts, reason included.
   */
  public record Adjusted(
      String adjustmentId,
      Lane lane,
      String subject,
      long deltaMicros,
      String operator,
      String reason,
      String window,
      AdjustmentScope scope)
      implements AdjustReply {
    static Adjusted of(Adjustment a) {
      return new Adjusted(
          a.id(),
          a.lane(),
          a.subject(),
          a.deltaMicros(),
          a.operator(),
          a.reason(),
          a.window(),
          a.scope());
    }
  }

  /**
   * The adjustment would take {@code cap}'s settled spend in {@code window} below zero (more
   * headroom than the cap itself). Nothing changed; the id stays unused.
   */
  public record AdjustRefused(
      String adjustmentId,
      CapName cap,
      String subject,
      String window,
      long settledMicros,
      long deltaMicros,
      String message)
      implements AdjustReply {}

  public record BatchWritten(int commands, int events) implements LedgerSerializable {}

  /**
   * The ledger's answers to one {@link NodeBatch}, sent once every command of it is answered (they
   * normally share one group commit). A command the ledger did not answer within its ask timeout
   * has no entry: its caller's own ask times out, as it would for a call sent alone.
   */
  public record NodeAnswers(long batch, List<NodeAnswer> answers) implements LedgerSerializable {
    public NodeAnswers {
      answers = List.copyOf(answers);
    }
  }

  /**
   * The reply to the command at {@code index} of its {@link NodeBatch}: a {@link ReserveReply} or a
   * {@link CloseReply}.
   */
  public record NodeAnswer(
      int index,
      @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, include = JsonTypeInfo.As.WRAPPER_OBJECT)
          @JsonSubTypes({
            @JsonSubTypes.Type(value = Reserved.class, name = "Reserved"),
            @JsonSubTypes.Type(value = Refused.class, name = "Refused"),
            @JsonSubTypes.Type(value = Busy.class, name = "Busy"),
            @JsonSubTypes.Type(value = Conflict.class, name = "Conflict"),
            @JsonSubTypes.Type(value = IdReused.class, name = "IdReused"),
            @JsonSubTypes.Type(value = Invalid.class, name = "Invalid"),
            @JsonSubTypes.Type(value = Closed.class, name = "Closed"),
            @JsonSubTypes.Type(value = Forbidden.class, name = "Forbidden"),
            @JsonSubTypes.Type(value = NotOpen.class, name = "NotOpen"),
            @JsonSubTypes.Type(value = NotFound.class, name = "NotFound")
          })
          LedgerSerializable reply)
      implements LedgerSerializable {}

  public record Ready() implements LedgerSerializable {}
}
