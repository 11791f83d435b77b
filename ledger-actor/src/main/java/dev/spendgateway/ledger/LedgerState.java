package dev.spendgateway.ledger;

import com.fasterxml.jackson.annotation.JsonAutoDetect;
import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import dev.spendgateway.ledger.LedgerEvents.AllowanceIn;
import dev.spendgateway.ledger.LedgerEvents.AllowanceOut;
import dev.spendgateway.ledger.LedgerEvents.Compacted;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.GroupCommit;
import dev.spendgateway.ledger.LedgerEvents.MediaJobOpened;
import dev.spendgateway.ledger.LedgerEvents.MediaJobSubmitted;
import dev.spendgateway.ledger.LedgerEvents.ReservationExpired;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerEvents.ReservationRefused;
import dev.spendgateway.ledger.LedgerEvents.ReservationSettled;
import dev.spendgateway.ledger.LedgerEvents.ReservationVoided;
import dev.spendgateway.ledger.LedgerEvents.SpendAdjusted;
import dev.spendgateway.ledger.LedgerEvents.WindowZoneChanged;
import dev.spendgateway.ledger.LedgerProtocol.GetUsage;
import dev.spendgateway.ledger.LedgerProtocol.Usage;
import dev.spendgateway.ledger.Reservation.Refusal;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapCheck;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapLimits;
import dev.spendgateway.policy.caps.CapName;
import dev.spendgateway.policy.caps.CapWindows;
import dev.spendgateway.policy.caps.Spend;
import dev.spendgateway.policy.caps.WindowCalendar;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Immutable ledger state: open reservations as full records, the closed and refused ids of the
 * idempotency window in a compact index ({@link RecentIds}), older ids as Bloom filters ({@link
 * PastIds}), spend per cap window, and every operator adjustment id (kept for good).
 *
 * <p>Memory grows with the open reservations and the window's ids at about 60-80 bytes each, not
 * with a full record per id: a closed reservation keeps only what repeating its answer needs.
 */
@JsonAutoDetect(fieldVisibility = JsonAutoDetect.Visibility.NONE)
public final class LedgerState implements LedgerSerializable {
  private final RecentIds recent;
  private final PastIds past;
  private final OpenReservations open;
  private final PersistentMap<CapKey, Spend> spend;
  private final PersistentMap<String, BrandCaps> brandCaps;
  private final PersistentMap<String, Adjustment> adjustments;

  /** Regional allowance transfers ({@link Allowances#NONE} in a single-region deployment). */
  private final Allowances allowances;

  /**
   * Keyed media jobs whose reservation closed within the idempotency window, by reservation id: the
   * compact index keeps no job id, and a workflow that repeats its idempotency key after the job
   * ended must get that job back (never a second submit). Small: one entry per keyed job that ended
   * in the window, dropped with the window's ids.
   */
  private final PersistentMap<String, EndedMediaJob> endedMedia;

  /**
   * A keyed media job whose reservation closed: the provider's job id and how and when it closed.
   */
  public record EndedMediaJob(String id, String jobId, Status status, Instant closedAt) {}

  /**
   * The calendar cap windows are counted in: UTC unless the journal holds a {@link
   * WindowZoneChanged}. Every cap key is derived through it, so a replay puts each reservation in
   * the window it was counted in when it was made, whatever the zone is now.
   */
  private final WindowCalendar calendar;

  /**
   * Facts folded into this state since it was loaded from a snapshot (or began empty): what a
   * recovery from that snapshot replays, and so what decides when the next one is due. Not part of
   * the snapshot: a state read from one starts at 0.
   */
  private final long factsSinceLoad;

  LedgerState(
      RecentIds recent,
      PastIds past,
      OpenReservations open,
      PersistentMap<CapKey, Spend> spend,
      PersistentMap<String, BrandCaps> brandCaps,
      PersistentMap<String, Adjustment> adjustments,
      Allowances allowances,
      PersistentMap<String, EndedMediaJob> endedMedia,
      WindowCalendar calendar,
      long factsSinceLoad) {
    this.recent = recent;
    this.past = past;
    this.open = open;
    this.spend = spend;
    this.brandCaps = brandCaps;
    this.adjustments = adjustments;
    this.allowances = allowances;
    this.endedMedia = endedMedia;
    this.calendar = calendar;
    this.factsSinceLoad = factsSinceLoad;
  }

  public static LedgerState empty() {
    return new LedgerState(
        RecentIds.empty(),
        PastIds.NONE,
        OpenReservations.empty(),
        PersistentMap.empty(),
        PersistentMap.empty(),
        PersistentMap.empty(),
        Allowances.NONE,
        PersistentMap.empty(),
        WindowCalendar.UTC,
        0);
  }

  /**
   * What the ledger knows of {@code id}: the full record while open; for a closed or refused id in
   * the idempotency window, a record rebuilt from the compact index with what it keeps (status,
   * lane, subject, owner, amounts, the refusing cap and headroom; no timestamps, brand caps 0).
   */
  public Optional<Reservation> reservation(String id) {
    Reservation r = open.get(id);
    if (r != null) {
      return Optional.of(r);
    }
    RecentIds.Entry e = recent.find(id);
    return e == null ? Optional.empty() : Optional.of(rebuilt(id, e));
  }

  private static Reservation rebuilt(String id, RecentIds.Entry e) {
    Refusal refusal =
        e.refusedBy() == null
            ? null
            : new Refusal(
                e.refusedBy(),
                e.refusedOnSubject() ? e.subject() : null,
                null,
                0,
                e.headroomMicros());
    return new Reservation(
        id,
        e.lane(),
        e.subject(),
        e.amountMicros(),
        0,
        0,
        null,
        null,
        e.status(),
        e.actualMicros(),
        null,
        refusal,
        e.owner());
  }

  /**
   * Whether a repeated reserve of {@code id} asks what the first one asked. Open ids compare every
   * field; closed ones compare the brand caps by fingerprint (the compact index keeps no more).
   */
  public boolean repeatsRequest(
      String id,
      Reservation.Owner owner,
      Lane lane,
      String subject,
      long amountMicros,
      long brandDailyMicros,
      long brandMonthlyMicros) {
    Reservation r = open.get(id);
    if (r != null) {
      return r.sameRequestAs(
          owner, lane, subject, amountMicros, brandDailyMicros, brandMonthlyMicros);
    }
    RecentIds.Entry e = recent.find(id);
    return e != null
        && e.owner() == owner
        && e.lane() == lane
        && java.util.Objects.equals(e.subject(), subject)
        && e.amountMicros() == amountMicros
        && e.brandCaps() == RecentIds.brandCapsFingerprint(brandDailyMicros, brandMonthlyMicros);
  }

  /**
   * Whether {@code id} was probably used before the idempotency window (a past-id filter says so;
   * about 1% of never-used ids too). Such an id is never reserved again: it answers id_reused.
   */
  public boolean probablyUsedBeforeWindow(String id) {
    return past.mightContain(id);
  }

  /**
   * What regional allowance transfers moved into {@code key}'s window, net (negative when this
   * region lent more than it was given); 0 in a single-region deployment.
   */
  public long allowanceMovedIn(CapKey key) {
    return allowances.netIn(key);
  }

  /** Every allowance transfer this ledger took out (kept for good, like adjustment ids). */
  public List<AllowanceOut> allowanceOuts() {
    return allowances.outs();
  }

  /** Every allowance transfer this ledger took in. */
  public List<AllowanceIn> allowanceIns() {
    return allowances.ins();
  }

  /** The transfer {@code transferId} as this ledger took it out, if it did. */
  public Optional<AllowanceOut> allowanceOut(String transferId) {
    return Optional.ofNullable(allowances.out(transferId));
  }

  /** The transfer {@code transferId} as this ledger took it in, if it did. */
  public Optional<AllowanceIn> allowanceIn(String transferId) {
    return Optional.ofNullable(allowances.in(transferId));
  }

  /**
   * The caps a reservation is checked against, with each limit moved by the allowance transfers of
   * its window: a regional ledger's cap is its configured share plus what it was lent, minus what
   * it lent. The same list in a single-region deployment (nothing moved). Used by the decider and
   * by the audit, so both check a reservation against the same limit.
   */
  public List<CapCheck.Applicable> withAllowances(List<CapCheck.Applicable> caps) {
    return allowances.applyTo(caps);
  }

  private LedgerState withAllowances(Allowances moved) {
    return new LedgerState(
        recent,
        past,
        open,
        spend,
        brandCaps,
        adjustments,
        moved,
        endedMedia,
        calendar,
        factsSinceLoad);
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

  /** Open reservations plus the closed and refused ids of the idempotency window. */
  public int knownReservations() {
    return open.size() + recent.size();
  }

  /**
   * Estimated heap held by the compact id index and the past-id filters (for the bench and tests).
   */
  public long idMemoryBytes() {
    return recent.retainedBytes() + past.retainedBytes();
  }

  /** Closed and refused ids in the idempotency window (packed 36 bytes each in a snapshot). */
  int idsInWindow() {
    return recent.size();
  }

  /** Bytes of the past-id filters' bits (written as they are into a snapshot). */
  long pastIdFilterBytes() {
    return past.filters().stream().mapToLong(f -> 8L * f.bits.length).sum();
  }

  /** Open reservations whose timeout has passed at {@code now}, oldest first. */
  public List<Reservation> dueForExpiry(Instant now) {
    return open.dueBy(now);
  }

  /** Whether a compaction at {@code cutoff} would drop any cap window (there are few of them). */
  public boolean hasClosedBefore(Instant cutoff) {
    return spend.asMap().keySet().stream().anyMatch(k -> windowEndedBefore(k, cutoff));
  }

  /**
   * Whether some closed id left the idempotency window at {@code idsCutoff}: O(1), the oldest chunk
   * only.
   */
  public boolean hasIdsClosedBefore(Instant idsCutoff) {
    Instant oldest = recent.oldestChunkNewest();
    return oldest != null && oldest.isBefore(idsCutoff);
  }

  /** Whether a past-id filter is older than {@code horizonCutoff}. */
  public boolean hasPastIdsBefore(Instant horizonCutoff) {
    return past.hasOlderThan(horizonCutoff);
  }

  /** The ids cutoff that expires at most {@code maxChunks} chunks of the window at once. */
  Instant idsSliceCutoff(Instant idsCutoff, int maxChunks) {
    return recent.sliceCutoff(idsCutoff, maxChunks);
  }

  /**
   * The state after {@code event}: the one fold used by the actor, its recovery and the audit tools
   * ({@code dev.spendgateway.ledger.audit}). Throws {@link IllegalStateException} on an event that
   * cannot follow this state (closing a reservation that is not open).
   */
  public LedgerState applied(Event event) {
    return appliedInOrder(event instanceof GroupCommit g ? g.facts() : List.of(event));
  }

  /**
   * This state for writing as a snapshot on another thread while the ledger goes on. The state is
   * immutable except for two parts later rows write into in place, the newest chunk of the window's
   * ids and the newest past-id filter; those are copied (one chunk of 4,096 ids, one filter of at
   * most 20 MB, once per snapshot), everything else is shared.
   */
  LedgerState forSnapshot() {
    return new LedgerState(
        recent.withLastChunkCopied(),
        past.withNewestCopied(),
        open,
        spend,
        brandCaps,
        adjustments,
        allowances,
        endedMedia,
        calendar,
        factsSinceLoad);
  }

  /** Whether no cap window is in the books and nothing is held: a new or fully compacted ledger. */
  public boolean holdsNoWindow() {
    return spend.size() == 0 && open.size() == 0;
  }

  /** The calendar cap windows are counted in (see {@link WindowCalendar}). */
  public WindowCalendar calendar() {
    return calendar;
  }

  /**
   * Facts folded since this state was loaded from a snapshot or began empty (a standby's copy
   * handed to a new ledger keeps its count): how many a recovery from that snapshot replays.
   */
  public long factsSinceLoad() {
    return factsSinceLoad;
  }

  /** A fact that reads or rewrites the books as a whole, not one reservation's. */
  private LedgerState appliedAsAWhole(Event event) {
    if (event instanceof SpendAdjusted e) {
      return withAdjustment(e);
    } else if (event instanceof Compacted e) {
      return compactedBefore(e.cutoff()).idsExpiredBefore(e.idsClosedBefore(), e.pastIdsBefore());
    } else if (event instanceof WindowZoneChanged e) {
      return withCalendar(calendar.withZoneFrom(e.from(), ZoneId.of(e.zone())));
    } else if (event instanceof AllowanceOut e) {
      return withAllowances(allowances.with(e));
    } else if (event instanceof AllowanceIn e) {
      return withAllowances(allowances.with(e));
    } else if (event instanceof GroupCommit g) {
      return appliedInOrder(g.facts());
    }
    throw new IllegalArgumentException("unknown event " + event.getClass().getName());
  }

  /** Open reservations paying for a media job of {@code account}: its unfinished jobs. */
  public int unfinishedMediaJobs(String account) {
    int n = 0;
    for (Reservation r : open.values()) {
      if (r.paysForMediaOf(account)) {
        n++;
      }
    }
    return n;
  }

  /** Every open reservation paying for a media job, soonest to expire first. */
  public List<Reservation> openMediaJobs() {
    List<Reservation> out = new java.util.ArrayList<>();
    for (Reservation r : open.inExpiryOrder()) {
      if (r.media() != null) {
        out.add(r);
      }
    }
    return out;
  }

  /**
   * The keyed media job of closed reservation {@code id}, while the idempotency window holds it.
   */
  public Optional<EndedMediaJob> endedMediaJob(String id) {
    return Optional.ofNullable(endedMedia.get(id));
  }

  /** Every keyed media job that ended within the idempotency window (for the snapshot). */
  public List<EndedMediaJob> endedMediaJobs() {
    return List.copyOf(endedMedia.asMap().values());
  }

  /** Whether {@code id} is an open reservation. */
  public boolean isOpen(String id) {
    return open.get(id) != null;
  }

  /**
   * The facts of one journal row (a group commit) applied in order, to the same state as applying
   * them one by one, but with the spend of the cap windows they move kept aside until the row ends:
   * every fact of a row moves the same few windows (the global day and month, its lane's or brand's
   * own), and writing each total into the persistent map once per fact was a fifth of a replay.
   * Facts that read or rewrite the books as a whole (an adjustment, a compaction) see the earlier
   * facts of the row written back first.
   */
  private LedgerState appliedInOrder(List<Event> facts) {
    // The row's facts are counted up front: every state built on the way carries the new count.
    RowFold row = new RowFold(this, factsSinceLoad + facts.size());
    for (Event fact : facts) {
      if (!row.took(fact)) {
        LedgerState before = row.state();
        row = new RowFold(before.appliedAsAWhole(fact), before.factsSinceLoad);
      }
    }
    return row.state();
  }

  /**
   * What reservations, refusals and closes do to the books, gathered in place by one thread within
   * one call and published as a new {@link LedgerState} by {@link #state}. The persistent parts are
   * replaced as before; only cap-window totals are kept in a scratch map until then.
   */
  private static final class RowFold {
    private RecentIds recent;
    private final PastIds past;
    private OpenReservations open;
    private final PersistentMap<CapKey, Spend> spend;
    private PersistentMap<String, BrandCaps> brandCaps;
    private final PersistentMap<String, Adjustment> adjustments;
    private final Allowances allowances;
    private PersistentMap<String, EndedMediaJob> endedMedia;
    private final WindowCalendar calendar;
    private final long factsSinceLoad;

    /** Totals changed since this fold started (each key written to {@link #spend} at the end). */
    private final Map<CapKey, Spend> moved = new java.util.HashMap<>();

    RowFold(LedgerState from, long factsSinceLoad) {
      this.recent = from.recent;
      this.past = from.past;
      this.open = from.open;
      this.spend = from.spend;
      this.brandCaps = from.brandCaps;
      this.adjustments = from.adjustments;
      this.allowances = from.allowances;
      this.endedMedia = from.endedMedia;
      this.calendar = from.calendar;
      this.factsSinceLoad = factsSinceLoad;
    }

    private Spend spendOn(CapKey key) {
      Spend s = moved.get(key);
      return s != null ? s : spend.getOrDefault(key, Spend.NONE);
    }

    /** Applies {@code fact} if it is one reservation's (made, refused, closed); false if not. */
    boolean took(Event fact) {
      if (fact instanceof ReservationMade e) {
        reserve(e);
      } else if (fact instanceof ReservationRefused e) {
        refuse(e);
      } else if (fact instanceof ReservationSettled e) {
        close(e.id(), Status.SETTLED, e.actualMicros(), e.at());
      } else if (fact instanceof ReservationVoided e) {
        close(e.id(), Status.VOIDED, 0, e.at());
      } else if (fact instanceof ReservationExpired e) {
        close(e.id(), Status.EXPIRED, e.reservedMicros(), e.at());
      } else if (fact instanceof MediaJobOpened e) {
        withMedia(e.id(), new MediaJob(e.account(), e.idempotencyKey(), null));
      } else if (fact instanceof MediaJobSubmitted e) {
        Reservation r = open.get(e.id());
        if (r != null && r.media() != null) {
          withMedia(e.id(), r.media().withJobId(e.jobId()));
        }
      } else {
        return false;
      }
      return true;
    }

    private void reserve(ReservationMade e) {
      Reservation r =
          new Reservation(
              e.id(),
              e.lane(),
              e.subject(),
              e.amountMicros(),
              e.brandDailyMicros(),
              e.brandMonthlyMicros(),
              e.at(),
              e.expiresAt(),
              Status.RESERVED,
              0,
              null,
              null,
              e.owner());
      for (CapKey key : CapCheck.keysFor(e.lane(), e.subject(), e.at(), calendar)) {
        moved.put(key, spendOn(key).withReserved(e.amountMicros()));
      }
      BrandCaps sent = new BrandCaps(e.brandDailyMicros(), e.brandMonthlyMicros());
      // A brand sends the same caps with nearly every reservation: copied only on a change.
      if (e.lane() == Lane.APP && !sent.equals(brandCaps.get(e.subject()))) {
        brandCaps = brandCaps.with(e.subject(), sent);
      }
      open = open.with(e.id(), r);
    }

    private void refuse(ReservationRefused e) {
      Reservation r =
          new Reservation(
              e.id(),
              e.lane(),
              e.subject(),
              e.amountMicros(),
              e.brandDailyMicros(),
              e.brandMonthlyMicros(),
              e.at(),
              e.at(),
              Status.REFUSED,
              0,
              e.at(),
              new Refusal(e.cap(), e.capSubject(), e.window(), e.limitMicros(), e.headroomMicros()),
              e.owner());
      recent = recent.with(r, e.at());
    }

    /**
     * Marks an open reservation as paying for a media job. A job whose reservation closed in the
     * meantime (expired before the provider's answer was recorded) needs no mark: it holds nothing.
     */
    private void withMedia(String id, MediaJob job) {
      Reservation r = open.get(id);
      if (r != null) {
        open = open.with(id, r.withMedia(job));
      }
    }

    private void close(String id, Status status, long actualMicros, Instant at) {
      Reservation r = open.get(id);
      if (r == null) {
        throw new IllegalStateException("closing a reservation that is not open: " + id);
      }
      for (CapKey key : CapCheck.keysFor(r.lane(), r.subject(), r.reservedAt(), calendar)) {
        moved.put(key, spendOn(key).withClosed(r.amountMicros(), actualMicros));
      }
      recent = recent.with(r.closed(status, actualMicros, at), at);
      open = open.without(r);
      MediaJob media = r.media();
      if (media != null && media.idempotencyKey() != null && media.jobId() != null) {
        endedMedia = endedMedia.with(id, new EndedMediaJob(id, media.jobId(), status, at));
      }
    }

    LedgerState state() {
      PersistentMap<CapKey, Spend> books = spend;
      for (Map.Entry<CapKey, Spend> m : moved.entrySet()) {
        books = books.with(m.getKey(), m.getValue());
      }
      return new LedgerState(
          recent,
          past,
          open,
          books,
          brandCaps,
          adjustments,
          allowances,
          endedMedia,
          calendar,
          factsSinceLoad);
    }
  }

  /** The delta counts as settled spend in the windows of {@code at}; its id is remembered. */
  /**
   * The cap windows an adjustment on {@code window} moves when applied at {@code at}: those its
   * scope names (see {@link AdjustmentWindow#keys}), except a window that has ended and is no
   * longer in the books (compacted, or never spent in). No reserve is decided against such a window
   * again, so there is no headroom left in it to correct; recreating it would only hold a lone
   * delta.
   */
  public List<CapKey> keysMovedBy(
      Lane lane, String subject, String window, AdjustmentScope scope, Instant at) {
    return AdjustmentWindow.keys(lane, subject, window, scope).stream()
        .filter(k -> spend.containsKey(k) || !AdjustmentWindow.hasEnded(k, at, calendar))
        .toList();
  }

  LedgerState withAdjustment(SpendAdjusted e) {
    PersistentMap<CapKey, Spend> newSpend = spend;
    for (CapKey key : keysMovedBy(e.lane(), e.subject(), e.window(), e.scope(), e.at())) {
      newSpend =
          newSpend.with(
              key, newSpend.getOrDefault(key, Spend.NONE).withAdjustment(e.deltaMicros()));
    }
    Adjustment a = Adjustment.of(e);
    return new LedgerState(
        recent,
        past,
        open,
        newSpend,
        brandCaps,
        adjustments.with(a.id(), a),
        allowances,
        endedMedia,
        calendar,
        factsSinceLoad);
  }

  /** The same books counted from now on in {@code newCalendar} (a {@link WindowZoneChanged}). */
  private LedgerState withCalendar(WindowCalendar newCalendar) {
    return newCalendar.equals(calendar)
        ? this
        : new LedgerState(
            recent,
            past,
            open,
            spend,
            brandCaps,
            adjustments,
            allowances,
            endedMedia,
            newCalendar,
            factsSinceLoad);
  }

  /**
   * Without the cap windows that ended before {@code cutoff} (a handful per day), the windows that
   * hold nothing (every hold in them voided: the same as never used, {@link Spend#NONE}), and the
   * caps of brands left with no window in the books. Any caller may name a new brand or preview
   * with each request, at no cost (a reserve it voids at once); what is kept of one must end with
   * what it spent.
   */
  LedgerState compactedBefore(Instant cutoff) {
    PersistentMap<CapKey, Spend> keptSpend = spend;
    for (Map.Entry<CapKey, Spend> e : spend.asMap().entrySet()) {
      CapKey k = e.getKey();
      if (windowEndedBefore(k, cutoff) || e.getValue().isEmpty()) {
        keptSpend = keptSpend.without(k);
      }
    }
    return new LedgerState(
        recent,
        past,
        open,
        keptSpend,
        brandCapsWithWindows(brandCaps, keptSpend),
        adjustments,
        allowances,
        endedMedia,
        calendar,
        factsSinceLoad);
  }

  /**
   * The brands' caps, without those of brands that have no brand cap window in {@code books}: a
   * brand gets its caps and its windows with its first reservation, and loses both here, so no caps
   * outlive a brand's windows ({@code /usage?brand=} shows caps only with a current window).
   */
  static PersistentMap<String, BrandCaps> brandCapsWithWindows(
      PersistentMap<String, BrandCaps> caps, PersistentMap<CapKey, Spend> books) {
    Set<String> withWindows = new java.util.HashSet<>();
    for (CapKey k : books.asMap().keySet()) {
      if (k.cap() == CapName.BRAND_DAILY || k.cap() == CapName.BRAND_MONTHLY) {
        withWindows.add(k.subject());
      }
    }
    PersistentMap<String, BrandCaps> kept = caps;
    for (String brand : caps.asMap().keySet()) {
      if (!withWindows.contains(brand)) {
        kept = kept.without(brand);
      }
    }
    return kept;
  }

  /**
   * Ids closed before {@code idsCutoff} move from the window to the past-id filters, whole chunks
   * at a time (the decider bounds how many per event); filters older than {@code pastCutoff}, if
   * given, are dropped.
   */
  LedgerState idsExpiredBefore(Instant idsCutoff, Instant pastCutoff) {
    List<RecentIds.Chunk> expired = new java.util.ArrayList<>();
    int expected = recent.size();
    RecentIds before = recent;
    RecentIds kept = recent.expiredBefore(idsCutoff, expired::add);
    PastIds newPast = past.withExpired(expired, before, expected);
    if (pastCutoff != null) {
      newPast = newPast.withoutOlderThan(pastCutoff);
    }
    // A keyed media job is answered by its key as long as its id is: both leave the window
    // together.
    PersistentMap<String, EndedMediaJob> keptMedia = endedMedia;
    for (EndedMediaJob e : endedMedia.asMap().values()) {
      if (e.closedAt().isBefore(idsCutoff)) {
        keptMedia = keptMedia.without(e.id());
      }
    }
    return kept == recent && newPast == past && keptMedia == endedMedia
        ? this
        : new LedgerState(
            kept,
            newPast,
            open,
            spend,
            brandCaps,
            adjustments,
            allowances,
            keptMedia,
            calendar,
            factsSinceLoad);
  }

  /**
   * Day and month windows that ended before {@code cutoff} (in the calendar's windows); lifetime
   * windows never end.
   */
  private boolean windowEndedBefore(CapKey key, Instant cutoff) {
    String window = key.window();
    if (window.equals(CapWindows.LIFETIME)) {
      return false;
    }
    String cutoffWindow =
        window.length() == 10 ? calendar.dayKey(cutoff) : calendar.monthKey(cutoff);
    return window.compareTo(cutoffWindow) < 0;
  }

  /**
   * Same books and same remembered ids: used by recovery tests (snapshot + journal vs journal
   * only).
   */
  @Override
  public boolean equals(Object o) {
    return o instanceof LedgerState other
        && sameBooksIgnoringAdjustmentIds(other)
        && adjustments.asMap().equals(other.adjustments.asMap());
  }

  /**
   * Whether {@code snapshot}, a snapshot taken at the sequence number this state was replayed to,
   * holds the same books: equal in everything, except that it may remember fewer adjustment ids
   * (each one it remembers the same as here). A snapshot written before adjustment ids were kept
   * remembers none, and a ledger that recovered from such a snapshot only the later ones; the spend
   * they moved is in the books either way.
   */
  public boolean sameBooksAs(LedgerState snapshot) {
    return sameBooksIgnoringAdjustmentIds(snapshot)
        && snapshot.adjustments.asMap().entrySet().stream()
            .allMatch(e -> e.getValue().equals(adjustments.get(e.getKey())));
  }

  private boolean sameBooksIgnoringAdjustmentIds(LedgerState other) {
    return calendar.equals(other.calendar)
        && recentIdsEqual(other)
        && allowances.equals(other.allowances)
        && open.asMap().equals(other.open.asMap())
        && spend.asMap().entrySet().stream()
            .filter(e -> !e.getValue().isEmpty())
            .collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue))
            .equals(
                other.spend.asMap().entrySet().stream()
                    .filter(e -> !e.getValue().isEmpty())
                    .collect(
                        java.util.stream.Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue)))
        && capsOfBrandsWithSpend().equals(other.capsOfBrandsWithSpend());
  }

  /**
   * The caps of the brands that hold or spent money in a window of the books. The caps of a brand
   * whose windows hold nothing are not books: a snapshot written before empty windows were dropped
   * at compaction still has them, and a replay by this version does not.
   */
  private Map<String, BrandCaps> capsOfBrandsWithSpend() {
    Set<String> spending = new java.util.HashSet<>();
    for (Map.Entry<CapKey, Spend> e : spend.asMap().entrySet()) {
      if (!e.getValue().isEmpty()
          && (e.getKey().cap() == CapName.BRAND_DAILY
              || e.getKey().cap() == CapName.BRAND_MONTHLY)) {
        spending.add(e.getKey().subject());
      }
    }
    Map<String, BrandCaps> caps = new java.util.HashMap<>();
    for (Map.Entry<String, BrandCaps> e : brandCaps.asMap().entrySet()) {
      if (spending.contains(e.getKey())) {
        caps.put(e.getKey(), e.getValue());
      }
    }
    return caps;
  }

  /**
   * Same ids in the window with the same answers (compared by id, not by slot: a state rebuilt from
   * an older snapshot format numbers them differently). The past-id filters are a lossy summary and
   * are not compared.
   */
  private boolean recentIdsEqual(LedgerState other) {
    if (recent.size() != other.recent.size()) {
      return false;
    }
    for (RecentIds.Chunk c : recent.chunks()) {
      long base = c.number << RecentIds.CHUNK_BITS;
      for (int i = 0; i < recent.visibleIn(c); i++) {
        if (base + i >= recent.firstSlot()
            && !java.util.Objects.equals(
                recent.entryAtSlot(base + i), other.recent.findByHash(c.hash[i]))) {
          return false;
        }
      }
    }
    return true;
  }

  @Override
  public int hashCode() {
    return recent.size() * 31 + open.size();
  }

  @Override
  public String toString() {
    return "State(recentIds="
        + recent.size()
        + ", pastIdFilters="
        + past.filters().size()
        + ", open="
        + open.size()
        + ", capWindows="
        + spend.size()
        + ", adjustments="
        + adjustments.size()
        + ")";
  }

  /** The caps a brand sent with its latest reservation (shown by {@code /usage}). */
  public record BrandCaps(long dailyMicros, long monthlyMicros) {}

  /**
   * Every cap window that {@code now} falls in, with limit, settled and held spend (see {@link
   * UsageView}).
   */
  public Usage usage(Optional<String> subject, Instant now, CapLimits limits) {
    return UsageView.of(this, subject, GetUsage.DEFAULT_TOP_SUBJECTS, now, limits);
  }

  /** As above, listing at most {@code topSubjects} subjects' caps when no subject is given. */
  public Usage usage(Optional<String> subject, int topSubjects, Instant now, CapLimits limits) {
    return UsageView.of(this, subject, topSubjects, now, limits);
  }

  // Read access for the usage view and the snapshot codec (same package, no copies).

  RecentIds recentIds() {
    return recent;
  }

  PastIds pastIds() {
    return past;
  }

  OpenReservations openById() {
    return open;
  }

  PersistentMap<CapKey, Spend> spendByKey() {
    return spend;
  }

  PersistentMap<String, BrandCaps> brandCapsBySubject() {
    return brandCaps;
  }

  PersistentMap<String, Adjustment> adjustmentsById() {
    return adjustments;
  }

  Allowances allowances() {
    return allowances;
  }

  /** The snapshot form (see {@link LedgerSnapshot}): what Jackson writes for this state. */
  @JsonValue
  LedgerSnapshot toSnapshot() {
    return LedgerSnapshot.of(this);
  }

  @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
  static LedgerState fromSnapshot(LedgerSnapshot snapshot) {
    return snapshot.toState();
  }
}
