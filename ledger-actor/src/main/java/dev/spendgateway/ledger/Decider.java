package dev.spendgateway.ledger;

import dev.spendgateway.ledger.LedgerEvents.Compacted;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.MediaJobOpened;
import dev.spendgateway.ledger.LedgerEvents.MediaJobSubmitted;
import dev.spendgateway.ledger.LedgerEvents.ReservationExpired;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerEvents.ReservationRefused;
import dev.spendgateway.ledger.LedgerEvents.ReservationSettled;
import dev.spendgateway.ledger.LedgerEvents.ReservationVoided;
import dev.spendgateway.ledger.LedgerEvents.SpendAdjusted;
import dev.spendgateway.ledger.LedgerEvents.WindowZoneChanged;
import dev.spendgateway.ledger.LedgerProtocol.Adjust;
import dev.spendgateway.ledger.LedgerProtocol.AdjustRefused;
import dev.spendgateway.ledger.LedgerProtocol.AdjustReply;
import dev.spendgateway.ledger.LedgerProtocol.Adjusted;
import dev.spendgateway.ledger.LedgerProtocol.Batchable;
import dev.spendgateway.ledger.LedgerProtocol.Busy;
import dev.spendgateway.ledger.LedgerProtocol.CloseReply;
import dev.spendgateway.ledger.LedgerProtocol.Closed;
import dev.spendgateway.ledger.LedgerProtocol.Conflict;
import dev.spendgateway.ledger.LedgerProtocol.Forbidden;
import dev.spendgateway.ledger.LedgerProtocol.IdReused;
import dev.spendgateway.ledger.LedgerProtocol.Invalid;
import dev.spendgateway.ledger.LedgerProtocol.MediaJobClosed;
import dev.spendgateway.ledger.LedgerProtocol.MediaJobNotReserved;
import dev.spendgateway.ledger.LedgerProtocol.MediaJobRecorded;
import dev.spendgateway.ledger.LedgerProtocol.MediaJobRefused;
import dev.spendgateway.ledger.LedgerProtocol.MediaJobReserved;
import dev.spendgateway.ledger.LedgerProtocol.MediaJobsFull;
import dev.spendgateway.ledger.LedgerProtocol.MediaReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.NotFound;
import dev.spendgateway.ledger.LedgerProtocol.NotOpen;
import dev.spendgateway.ledger.LedgerProtocol.OpenMediaJob;
import dev.spendgateway.ledger.LedgerProtocol.OpenMediaJobs;
import dev.spendgateway.ledger.LedgerProtocol.OperatorSettle;
import dev.spendgateway.ledger.LedgerProtocol.OperatorVoid;
import dev.spendgateway.ledger.LedgerProtocol.RecordMediaJob;
import dev.spendgateway.ledger.LedgerProtocol.Refused;
import dev.spendgateway.ledger.LedgerProtocol.ReservationReply;
import dev.spendgateway.ledger.LedgerProtocol.ReservationView;
import dev.spendgateway.ledger.LedgerProtocol.Reserve;
import dev.spendgateway.ledger.LedgerProtocol.ReserveMediaJob;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.LedgerProtocol.Settle;
import dev.spendgateway.ledger.LedgerProtocol.VoidReservation;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapCheck;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.WindowCalendar;
import dev.spendgateway.policy.media.MediaJobLimit;
import dev.spendgateway.policy.money.Micros;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The ledger's decisions as a pure function: {@code (state, command, now) -> (events, reply)}. No
 * actor, no clock, no side effect: {@link GlobalBudget} persists the events and only then sends the
 * reply value to the command's {@code replyTo}. Rules that need no state are in {@link
 * CommandValidation} and {@link AdjustmentBounds}; the caps themselves in policy-rules' {@link
 * CapCheck}.
 */
public final class Decider {

  /**
   * What one command decided: the events to persist (none for a refusal that changes nothing or a
   * repeat) and the reply its caller gets once they are durable. A command whose caller had given
   * up (past its deadline) is {@link #dropped}: no events and no reply, nobody is waiting for one.
   */
  public record Decision<R>(List<Event> events, R reply) {
    public Decision {
      events = List.copyOf(events);
    }

    static <R> Decision<R> answer(R reply) {
      return new Decision<>(List.of(), reply);
    }

    static <R> Decision<R> of(Event event, R reply) {
      return new Decision<>(List.of(event), reply);
    }

    static <R> Decision<R> dropped() {
      return new Decision<>(List.of(), null);
    }

    /** Whether the command was dropped unanswered because its caller had given up. */
    public boolean isDropped() {
      return reply == null;
    }
  }

  /** One command of a batch with what was decided for it. */
  public record Decided(Batchable command, Decision<?> decision) {}

  /**
   * A group commit: every event in command order, each command's decision, and the state after all
   * of them (the fold the decisions were made on, so the writer need not fold the row again).
   */
  public record BatchDecision(List<Event> events, List<Decided> decided, LedgerState after) {
    /** How many commands were dropped because their callers had given up. */
    public int dropped() {
      return (int) decided.stream().filter(d -> d.decision().isDropped()).count();
    }
  }

  private final LedgerSettings settings;

  public Decider(LedgerSettings settings) {
    this.settings = settings;
  }

  /**
   * Decides {@code commands} in order, each against the state the ones before it left (the same
   * fold the journal replays), so a batch written as one is exactly the commands written one by
   * one.
   */
  public BatchDecision decideBatch(LedgerState state, List<Batchable> commands, Instant now) {
    List<Event> events = new ArrayList<>(commands.size());
    List<Decided> decided = new ArrayList<>(commands.size());
    LedgerState folded = state;
    for (Batchable command : commands) {
      Decision<?> decision = decide(folded, command, now);
      for (Event e : decision.events()) {
        folded = folded.applied(e);
      }
      events.addAll(decision.events());
      decided.add(new Decided(command, decision));
    }
    return new BatchDecision(List.copyOf(events), List.copyOf(decided), folded);
  }

  /** One group-committed command; dropped when its caller had given up by {@code now}. */
  public Decision<?> decide(LedgerState state, Batchable command, Instant now) {
    if (command.pastDeadline(now)) {
      return Decision.dropped();
    }
    if (command instanceof Reserve r) {
      return reserve(state, r, now);
    } else if (command instanceof Settle s) {
      return close(state, s.id(), Status.SETTLED, s.actualMicros(), now, s.closer(), null, null);
    } else if (command instanceof VoidReservation v) {
      return close(state, v.id(), Status.VOIDED, 0, now, v.closer(), null, null);
    }
    throw new IllegalArgumentException("not batchable: " + command);
  }

  /**
   * Admits or refuses a reservation. A repeat of a known id answers what the first one got (or a
   * conflict when it asks something else); a refusal is journaled too, so the same id stays
   * refused.
   */
  public Decision<ReserveReply> reserve(LedgerState state, Reserve cmd, Instant now) {
    Optional<String> invalid = CommandValidation.invalidReserve(cmd);
    if (invalid.isPresent()) {
      String field = invalid.get();
      return Decision.answer(
          new Invalid(cmd.id(), field, CommandValidation.invalidReserveMessage(cmd, field)));
    }
    String subject = cmd.lane().needsSubject() ? cmd.subject() : null;
    long brandDaily = cmd.lane() == Lane.APP ? cmd.brandDailyMicros() : 0;
    long brandMonthly = cmd.lane() == Lane.APP ? cmd.brandMonthlyMicros() : 0;

    Optional<Reservation> known = state.reservation(cmd.id());
    if (known.isPresent()) {
      Reservation r = known.get();
      return Decision.answer(
          !state.repeatsRequest(
                  cmd.id(),
                  cmd.owner(),
                  cmd.lane(),
                  subject,
                  cmd.amountMicros(),
                  brandDaily,
                  brandMonthly)
              ? new Conflict(
                  cmd.id(),
                  "reservation id " + cmd.id() + " was already used for a different request")
              : r.wasRefused()
                  ? new Refused(
                      r.id(),
                      r.refusal().cap(),
                      r.refusal().subject(),
                      r.refusal().headroomMicros())
                  : new Reserved(r.id(), r.amountMicros()));
    }
    if (Owner.impliedBy(cmd.id()) != Owner.GATEWAY && state.probablyUsedBeforeWindow(cmd.id())) {
      // Its first answer left the idempotency window; a second reservation under it is never made.
      // Ids of the gateway's own namespace are not checked: the provider routes mint a fresh UUID
      // per
      // call and retry it within seconds, so a filter hit there could only be a false positive.
      return Decision.answer(new IdReused(cmd.id()));
    }

    // A regional ledger's caps are its allowances (docs/MULTI-REGION.md); unchanged in one region.
    List<CapCheck.Applicable> caps =
        state.withAllowances(
            CapCheck.capsFor(
                cmd.lane(),
                subject,
                brandDaily,
                brandMonthly,
                now,
                state.calendar(),
                settings.caps()));
    Optional<CapCheck.Failure> failure =
        CapCheck.firstFailing(caps, cmd.amountMicros(), state::spendOn);
    if (failure.isPresent()) {
      CapCheck.Failure f = failure.get();
      return Decision.of(
          new ReservationRefused(
              cmd.id(),
              cmd.lane(),
              subject,
              cmd.amountMicros(),
              brandDaily,
              brandMonthly,
              f.key().cap(),
              f.key().subject(),
              f.key().window(),
              f.limitMicros(),
              f.headroomMicros(),
              now,
              cmd.owner(),
              cmd.tag(),
              cmd.model(),
              cmd.provider()),
          new Refused(cmd.id(), f.key().cap(), f.key().subject(), f.headroomMicros()));
    }
    return Decision.of(
        new ReservationMade(
            cmd.id(),
            cmd.lane(),
            subject,
            cmd.amountMicros(),
            brandDaily,
            brandMonthly,
            now,
            now.plus(settings.reservationTimeout()),
            cmd.owner(),
            cmd.tag(),
            cmd.model(),
            cmd.provider()),
        new Reserved(cmd.id(), cmd.amountMicros()));
  }

  /**
   * Admits a media job's reservation: a repeat of a known id answers the job it holds (so a
   * caller's idempotency key never submits twice); a new one is refused at once when its account
   * has its limit of unfinished jobs, else reserved like any other, with the media lifetime and the
   * job journaled alongside in the same row.
   */
  public Decision<MediaReserveReply> reserveMedia(
      LedgerState state, ReserveMediaJob cmd, Instant now) {
    Reserve reserve = cmd.reserve();
    if (reserve.pastDeadline(now)) {
      return Decision.dropped();
    }
    Optional<Reservation> known = state.reservation(reserve.id());
    if (known.isPresent()) {
      Reservation r = known.get();
      if (r.isOpen() && r.media() != null) {
        return Decision.answer(
            new MediaJobReserved(r.id(), r.amountMicros(), r.media().jobId(), false));
      }
      if (!r.isOpen() && !r.wasRefused()) {
        return Decision.answer(
            new MediaJobClosed(
                r.id(),
                r.status(),
                state.endedMediaJob(r.id()).map(LedgerState.EndedMediaJob::jobId).orElse(null)));
      }
    } else {
      int unfinished = state.unfinishedMediaJobs(cmd.account());
      if (!new MediaJobLimit(cmd.maxConcurrentJobs()).admitsAnother(unfinished)) {
        return Decision.answer(
            new MediaJobsFull(reserve.id(), unfinished, cmd.maxConcurrentJobs()));
      }
    }
    Decision<ReserveReply> decided = reserve(state, reserve, now);
    ReserveReply reply = decided.reply();
    if (reply instanceof Reserved reserved && !decided.events().isEmpty()) {
      ReservationMade made = (ReservationMade) decided.events().get(0);
      ReservationMade withLifetime = made.expiringAt(now.plus(cmd.lifetime()));
      return new Decision<>(
          List.of(
              withLifetime,
              new MediaJobOpened(made.id(), cmd.account(), cmd.idempotencyKey(), now)),
          new MediaJobReserved(reserved.id(), reserved.amountMicros(), null, true));
    }
    MediaReserveReply mapped;
    if (reply instanceof Refused refused) {
      mapped = new MediaJobRefused(refused);
    } else if (reply instanceof Conflict c) {
      mapped = new MediaJobNotReserved(c.id(), "conflict", c.message());
    } else if (reply instanceof Invalid i) {
      mapped = new MediaJobNotReserved(i.id(), "invalid", i.message());
    } else if (reply instanceof IdReused u) {
      mapped =
          new MediaJobNotReserved(
              u.id(), "id_reused", "reservation id " + u.id() + " was used before");
    } else {
      // A repeat of an open reservation that pays for no media job: the id is someone else's.
      mapped =
          new MediaJobNotReserved(
              reserve.id(), "conflict", "reservation id " + reserve.id() + " is not a media job");
    }
    return new Decision<>(decided.events(), mapped);
  }

  /** Records the provider's job id on an open media reservation (once; a repeat is a no-op). */
  public Decision<MediaJobRecorded> recordMediaJob(
      LedgerState state, RecordMediaJob cmd, Instant now) {
    Optional<Reservation> open = state.reservation(cmd.id()).filter(Reservation::isOpen);
    if (open.isEmpty() || open.get().media() == null) {
      return Decision.answer(new MediaJobRecorded(cmd.id(), false));
    }
    MediaJob media = open.get().media();
    if (media.submitted()) {
      return Decision.answer(new MediaJobRecorded(cmd.id(), media.jobId().equals(cmd.jobId())));
    }
    return Decision.of(
        new MediaJobSubmitted(cmd.id(), cmd.jobId(), now), new MediaJobRecorded(cmd.id(), true));
  }

  /** The open media jobs, soonest to expire first. */
  public static OpenMediaJobs openMediaJobs(LedgerState state) {
    List<OpenMediaJob> jobs = new ArrayList<>();
    for (Reservation r : state.openMediaJobs()) {
      jobs.add(
          new OpenMediaJob(
              r.id(),
              r.media().account(),
              r.media().idempotencyKey(),
              r.media().jobId(),
              r.amountMicros(),
              r.reservedAt(),
              r.expiresAt()));
    }
    return new OpenMediaJobs(List.copyOf(jobs));
  }

  /** An operator's settle: any reservation, at any amount (a correction is exactly that). */
  public Decision<CloseReply> operatorSettle(LedgerState state, OperatorSettle cmd, Instant now) {
    if (cmd.pastDeadline(now)) {
      return Decision.dropped();
    }
    return close(
        state,
        cmd.id(),
        Status.SETTLED,
        cmd.actualMicros(),
        now,
        null,
        cmd.operator(),
        cmd.reason());
  }

  /** An operator's void: any open reservation. */
  public Decision<CloseReply> operatorVoid(LedgerState state, OperatorVoid cmd, Instant now) {
    if (cmd.pastDeadline(now)) {
      return Decision.dropped();
    }
    return close(state, cmd.id(), Status.VOIDED, 0, now, null, cmd.operator(), cmd.reason());
  }

  /**
   * Closes an open reservation. A settle typed by a person or another service is bounded by {@code
   * ledger.max-settle-multiple} times what was reserved: a larger one is a units mistake (cents
   * sent as dollars) that would use up the caps for the day or month. That holds for operators too,
   * who otherwise may close any reservation at any amount (a correction is exactly that). The
   * provider routes' own settles are not bounded by it: they book what the provider billed, and
   * some of their reserves are floors, not estimates (an audio transcription reserves before its
   * duration is known, and a real one costs ten to hundreds of times that floor); refusing those
   * would leave real spend uncounted. An owner that may not exceed its reserve (the ledger API) is
   * also bounded by the reserve itself. A repeated settle answers the first close when it repeats
   * the amount, and is a conflict when it does not: the books keep the first amount, and the caller
   * must learn that they differ. For the same reason a settle above $0 of a voided reservation is a
   * conflict (except for the provider routes, whose lifecycle closes each of their ids once); other
   * second closes (a void after a settle, a settle after an expiry at the worst case) answer the
   * first close, which booked at least as much.
   *
   * @param closer who asks to close it; {@code null} for an operator
   */
  private Decision<CloseReply> close(
      LedgerState state,
      String id,
      Status closeAs,
      long actualMicros,
      Instant now,
      Owner closer,
      String operator,
      String reason) {
    if (actualMicros < 0) {
      return Decision.answer(new Invalid(id, "actualUsd", "actualUsd must not be negative"));
    }
    Optional<Reservation> known = state.reservation(id);
    if (closer == Owner.LEDGER_API && Owner.impliedBy(id) == Owner.GATEWAY
        || closer != null && known.isPresent() && !known.get().closableBy(closer)) {
      return Decision.answer(new Forbidden(id, forbiddenMessage(closer)));
    }
    if (known.isEmpty()) {
      return Decision.answer(new NotFound(id));
    }
    Reservation r = known.get();
    if (closer != Owner.GATEWAY
        && closeAs == Status.SETTLED
        && r.isOpen()
        && !r.settleWithinMultiple(actualMicros, settings.maxSettleMultiple())) {
      return Decision.answer(new Invalid(id, "actualUsd", aboveMultipleMessage(r, actualMicros)));
    }
    if (closer != null
        && closeAs == Status.SETTLED
        && r.isOpen()
        && !r.settleWithinBoundOf(closer, actualMicros)) {
      String message =
          "actualUsd "
              + Micros.toUsd(actualMicros).toPlainString()
              + " is above the reserved amountUsd "
              + Micros.toUsd(r.amountMicros()).toPlainString()
              + "; a reservation settles at most at what it reserved";
      return Decision.answer(new Invalid(id, "actualUsd", message));
    }
    if (r.wasRefused()) {
      return Decision.answer(new NotOpen(id, Status.REFUSED));
    }
    if (closeAs == Status.SETTLED
        && r.status() == Status.SETTLED
        && r.actualMicros() != actualMicros) {
      return Decision.answer(
          new Conflict(
              id,
              "reservation "
                  + id
                  + " was already settled at actualUsd "
                  + Micros.toUsd(r.actualMicros()).toPlainString()
                  + "; a repeated settle must send the same actualUsd"));
    }
    if (closer != Owner.GATEWAY
        && closeAs == Status.SETTLED
        && r.status() == Status.VOIDED
        && actualMicros > 0) {
      // A void is a settle at $0, and anyone holding the gateway token can void a ledger API
      // reservation whose id it knows: a 200 here would tell the service that reserved it that a
      // cost was booked when nothing was.
      return Decision.answer(
          new Conflict(
              id,
              "reservation "
                  + id
                  + " was voided (booked at $0); actualUsd "
                  + Micros.toUsd(actualMicros).toPlainString()
                  + " was not booked: settle a reservation that is still open, or ask an operator"
                  + " to book the cost as an adjustment"));
    }
    if (!r.isOpen()) {
      return Decision.answer(new Closed(id, r.status(), r.actualMicros()));
    }
    Event closed =
        closeAs == Status.SETTLED
            ? new ReservationSettled(
                id,
                r.lane(),
                r.subject(),
                r.reservedAt(),
                r.amountMicros(),
                actualMicros,
                now,
                operator,
                reason)
            : new ReservationVoided(
                id, r.lane(), r.subject(), r.reservedAt(), r.amountMicros(), now, operator, reason);
    return Decision.of(closed, new Closed(id, closeAs, actualMicros));
  }

  private String aboveMultipleMessage(Reservation r, long actualMicros) {
    return "actualUsd "
        + Micros.toUsd(actualMicros).toPlainString()
        + " is above the reserved amountUsd "
        + Micros.toUsd(r.amountMicros()).toPlainString()
        + " and more than ledger.max-settle-multiple ("
        + settings.maxSettleMultiple()
        + ") times it; a settle that large is refused as a likely units mistake"
        + " (cents sent as dollars) and the reservation stays open";
  }

  /**
   * Says whose the reservation is without naming it: an id of the provider routes is never echoed.
   */
  private static String forbiddenMessage(Owner closer) {
    return closer == Owner.LEDGER_API
        ? "reservations made by the gateway's provider routes are settled and voided by the gateway only"
        : "reservations made through the ledger API are settled and voided through it only";
  }

  /**
   * Every open reservation past its timeout at {@code now}, expired at its worst case, oldest
   * first.
   */
  public List<Event> expireDue(LedgerState state, Instant now) {
    return state.dueForExpiry(now).stream()
        .map(
            r ->
                (Event)
                    new ReservationExpired(
                        r.id(), r.lane(), r.subject(), r.reservedAt(), r.amountMicros(), now))
        .toList();
  }

  /**
   * Most chunks of ids ({@value RecentIds#CHUNK} each) one compaction moves out of the window: one
   * chunk is about a millisecond in the writer (4 ms before the JIT warms up), so reservations
   * queued behind a compaction wait no longer than behind one group commit.
   */
  static final int MAX_CHUNKS_PER_COMPACTION = 1;

  /**
   * Drop cap windows that ended longer than the retention ago, move ids closed longer than the
   * idempotency window ago into the past-id filters (a bounded slice: see {@link
   * #MAX_CHUNKS_PER_COMPACTION} and {@link #moreToCompact}), and drop filters past the horizon.
   */
  public Optional<Event> compact(LedgerState state, Instant now) {
    Instant cutoff = now.minus(settings.retention());
    Instant idsCutoff = now.minus(settings.idempotencyWindow());
    Instant pastCutoff = idsCutoff.minus(settings.idempotencyHorizon());
    if (!state.hasClosedBefore(cutoff)
        && !state.hasIdsClosedBefore(idsCutoff)
        && !state.hasPastIdsBefore(pastCutoff)) {
      return Optional.empty();
    }
    return Optional.of(
        new Compacted(
            cutoff, now, state.idsSliceCutoff(idsCutoff, MAX_CHUNKS_PER_COMPACTION), pastCutoff));
  }

  /**
   * The change of window zone to journal at {@code now}, if the configured {@code
   * ledger.window-zone} is not the zone {@code state}'s calendar counts in (after every change
   * already journaled): it takes effect at the end of the day under way in the old zone, so that
   * day's window ends as it began and no past window is reassigned (at once when the books hold no
   * window at all). Empty when the zones agree.
   */
  public Optional<Event> adoptWindowZone(LedgerState state, Instant now) {
    WindowCalendar calendar = state.calendar();
    ZoneId configured = settings.windowZone();
    if (WindowCalendar.sameZone(calendar.currentZone(), configured)) {
      return Optional.empty();
    }
    // Books holding no window (a new journal, or one whose windows all closed and were compacted):
    // no window can be reassigned, so the zone counts at once. Otherwise from the end of the day
    // under way in the old zone.
    Instant from = state.holdsNoWindow() ? now : calendar.endOfDay(now);
    return Optional.of(
        new WindowZoneChanged(configured.getId(), zoneName(calendar.zoneAt(now)), from, now));
  }

  /** A zone's IANA id; UTC for the journal's implicit {@code ZoneOffset.UTC}. */
  static String zoneName(ZoneId zone) {
    return zone.equals(java.time.ZoneOffset.UTC) ? "UTC" : zone.getId();
  }

  /**
   * Whether a compaction at {@code now} still has ids to move (the writer then compacts again at
   * once).
   */
  public boolean moreToCompact(LedgerState state, Instant now) {
    return state.hasIdsClosedBefore(now.minus(settings.idempotencyWindow()));
  }

  /**
   * Applies an operator adjustment once per id: a repeat of the same adjustment answers the first
   * one's facts and writes nothing; the id reused for a different one is a {@link Conflict}.
   */
  public Decision<AdjustReply> adjust(LedgerState state, Adjust cmd, Instant now) {
    if (cmd.pastDeadline(now)) {
      return Decision.dropped();
    }
    Optional<String> invalid = CommandValidation.invalidAdjust(cmd, now, state.calendar());
    if (invalid.isPresent()) {
      String field = invalid.get();
      return Decision.answer(
          new Invalid(
              cmd.adjustmentId(), field, CommandValidation.invalidAdjustMessage(cmd, field)));
    }
    String subject = cmd.lane().needsSubject() ? cmd.subject() : null;
    Optional<Adjustment> known = state.adjustment(cmd.adjustmentId());
    if (known.isPresent()) {
      Adjustment first = known.get();
      return Decision.answer(
          first.sameAdjustmentAs(
                  cmd.lane(), subject, cmd.deltaMicros(), cmd.operator(), cmd.window(), cmd.scope())
              ? Adjusted.of(first)
              : new Conflict(cmd.adjustmentId(), conflictMessage(first)));
    }
    // After the repeat check: a credit already applied answers its first result even though
    // crediting it again now would go below zero.
    List<CapKey> moved = state.keysMovedBy(cmd.lane(), subject, cmd.window(), cmd.scope(), now);
    if (moved.isEmpty()) {
      return Decision.answer(
          new Invalid(
              cmd.adjustmentId(),
              "window",
              "window "
                  + cmd.window()
                  + " has ended and none of its cap windows is in the books any more (ended windows are kept for"
                  + " ledger.retention), so there is no headroom left in it to correct"));
    }
    AdjustmentBounds.Verdict bounds =
        AdjustmentBounds.check(
            moved, cmd.deltaMicros(), settings.maxAdjustmentMicros(), state::spendOn);
    if (bounds instanceof AdjustmentBounds.TooLarge tooLarge) {
      return Decision.answer(
          new Invalid(cmd.adjustmentId(), "deltaUsd", tooLarge.message("deltaUsd")));
    }
    if (bounds instanceof AdjustmentBounds.BelowZero below) {
      return Decision.answer(
          new AdjustRefused(
              cmd.adjustmentId(),
              below.key().cap(),
              below.key().subject(),
              below.key().window(),
              below.settledMicros(),
              cmd.deltaMicros(),
              below.message()));
    }
    SpendAdjusted adjusted =
        new SpendAdjusted(
            cmd.adjustmentId(),
            cmd.operator(),
            cmd.reason(),
            cmd.lane(),
            subject,
            cmd.deltaMicros(),
            now,
            cmd.window(),
            cmd.scope());
    return Decision.of(adjusted, Adjusted.of(Adjustment.of(adjusted)));
  }

  private static String conflictMessage(Adjustment first) {
    return "adjustment id "
        + first.id()
        + " was already used for a different adjustment (lane "
        + first.lane().wireName()
        + (first.subject() == null ? "" : ", brand " + first.subject())
        + ", deltaUsd "
        + Micros.toUsd(first.deltaMicros()).toPlainString()
        + ", window "
        + first.window()
        + ", scope "
        + first.scope().wireName()
        + ", operator "
        + first.operator()
        + ", at "
        + first.at()
        + "); choose a new id for a new adjustment";
  }

  /**
   * The answer to a reserve, settle or void that found the queue full: at once, nothing decided.
   * Retry after a second: a healthy writer clears a full queue well within that, and a stalled one
   * answers busy again rather than letting the caller wait out its whole ask timeout.
   */
  public static Busy busy(Batchable command) {
    String id =
        command instanceof Reserve r
            ? r.id()
            : command instanceof Settle s ? s.id() : ((VoidReservation) command).id();
    return new Busy(id, 1);
  }

  /** What the ledger knows about one id. */
  public static ReservationReply reservation(LedgerState state, String id) {
    return state
        .reservation(id)
        .<ReservationReply>map(
            r ->
                new ReservationView(
                    r.id(),
                    r.status(),
                    r.lane(),
                    r.subject(),
                    r.amountMicros(),
                    r.isOpen() || r.wasRefused() ? Optional.empty() : Optional.of(r.actualMicros()),
                    r.owner()))
        .orElseGet(() -> new NotFound(id));
  }
}
