package dev.spendgateway.ledger;

import dev.spendgateway.ledger.LedgerEvents.AllowanceIn;
import dev.spendgateway.ledger.LedgerEvents.AllowanceOut;
import dev.spendgateway.ledger.LedgerState.BrandCaps;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.Spend;
import dev.spendgateway.policy.caps.WindowCalendar;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The snapshot form of {@link LedgerState}: open reservations as records, cap totals, brand caps,
 * adjustments, and the idempotency window's ids and past-id filters as packed binary arrays. Its
 * size follows the open reservations and the window's ids (about 36 bytes each), never the closed
 * reservations as full records.
 *
 * <p>Open reservations are listed soonest to expire first, the order of the expiry index, which
 * recovery then builds without sorting (see {@link OpenReservations#of}). The order is not part of
 * the format: a snapshot listing them in any other order (all written before) reads the same.
 *
 * <p>Older formats stay readable: the first held every known reservation in {@code reservations}
 * (closed and refused ones too) and no {@code recentIds}; those closed ones are moved into the
 * compact index on load. {@code adjustments} was added after the first format: a snapshot without
 * it reads as remembering no adjustment ids; {@code endedMediaJobs} too, a snapshot without it
 * reads as remembering no ended media job. {@code windowZones} was added with window zones: a
 * snapshot without it counts its windows in UTC, as every ledger did before. {@code allowanceOuts}
 * and {@code allowanceIns} (regional allowance transfers, kept whole like adjustment ids) too:
 * without them it reads as none.
 */
public record LedgerSnapshot(
    List<Reservation> reservations,
    List<SpendEntry> spend,
    Map<String, BrandCaps> brandCaps,
    List<Adjustment> adjustments,
    RecentIdsForm recentIds,
    List<FilterForm> pastIds,
    List<LedgerState.EndedMediaJob> endedMediaJobs,
    List<ZoneForm> windowZones,
    List<AllowanceOut> allowanceOuts,
    List<AllowanceIn> allowanceIns) {

  public LedgerSnapshot {
    adjustments = adjustments == null ? List.of() : adjustments;
    endedMediaJobs = endedMediaJobs == null ? List.of() : endedMediaJobs;
    pastIds = pastIds == null ? List.of() : pastIds;
    windowZones = windowZones == null ? List.of() : windowZones;
    // Added with regional allowances: an older snapshot, or a single-region ledger's, holds none.
    allowanceOuts = allowanceOuts == null ? List.of() : allowanceOuts;
    allowanceIns = allowanceIns == null ? List.of() : allowanceIns;
  }

  /** The form without allowance transfers (every snapshot before regional allowances). */
  public LedgerSnapshot(
      List<Reservation> reservations,
      List<SpendEntry> spend,
      Map<String, BrandCaps> brandCaps,
      List<Adjustment> adjustments,
      RecentIdsForm recentIds,
      List<FilterForm> pastIds) {
    this(reservations, spend, brandCaps, adjustments, recentIds, pastIds, null, null, null, null);
  }

  /**
   * One period of the window calendar: {@code zone} (an IANA id) counts from {@code from}; the
   * first period's {@code from} is null (from the beginning). Empty, or absent in a snapshot
   * written before window zones: UTC from the beginning.
   */
  public record ZoneForm(Instant from, String zone) {}

  /** One cap window's totals. */
  public record SpendEntry(CapKey key, Spend spend) {}

  /** The window's ids: one past the newest slot, the subject names by code, and the chunks. */
  public record RecentIdsForm(long tail, List<String> subjects, List<ChunkForm> chunks) {}

  /** One chunk: its number, newest close time, and its visible slots packed 36 bytes each. */
  public record ChunkForm(long number, long newestMillis, byte[] packed) {}

  /** One past-id filter. */
  public record FilterForm(int capacity, int count, long newestMillis, byte[] bits) {}

  private static final int ENTRY_BYTES = 8 + 4 + 4 + 8 + 8 + 4;

  static LedgerSnapshot of(LedgerState state) {
    List<SpendEntry> entries =
        state.spendByKey().asMap().entrySet().stream()
            .map(e -> new SpendEntry(e.getKey(), e.getValue()))
            .toList();
    return new LedgerSnapshot(
        state.openById().inExpiryOrder(),
        entries,
        new HashMap<>(state.brandCapsBySubject().asMap()),
        List.copyOf(state.adjustmentsById().values()),
        recentForm(state.recentIds()),
        pastForm(state.pastIds()),
        state.endedMediaJobs(),
        zoneForm(state.calendar()),
        state.allowances().outs(),
        state.allowances().ins());
  }

  private static List<ZoneForm> zoneForm(WindowCalendar calendar) {
    if (calendar.equals(WindowCalendar.UTC)) {
      return List.of(); // as every snapshot before zones: nothing to write
    }
    List<ZoneForm> out = new ArrayList<>();
    for (WindowCalendar.Period p : calendar.periods()) {
      out.add(new ZoneForm(p.from().equals(Instant.MIN) ? null : p.from(), p.zone().getId()));
    }
    return out;
  }

  private static WindowCalendar restoredCalendar(List<ZoneForm> forms) {
    if (forms.isEmpty()) {
      return WindowCalendar.UTC;
    }
    List<WindowCalendar.Period> periods = new ArrayList<>();
    for (ZoneForm f : forms) {
      periods.add(
          new WindowCalendar.Period(
              f.from() == null ? Instant.MIN : f.from(), ZoneId.of(f.zone())));
    }
    return WindowCalendar.ofPeriods(periods);
  }

  private static RecentIdsForm recentForm(RecentIds recent) {
    int[] renumbered = new int[recent.subjects().next()];
    List<String> names = recent.subjectNames(renumbered);
    List<ChunkForm> chunks = new ArrayList<>();
    for (RecentIds.Chunk c : recent.chunks()) {
      int n = recent.visibleIn(c);
      ByteBuffer b = ByteBuffer.allocate(n * ENTRY_BYTES);
      for (int i = 0; i < n; i++) {
        b.putLong(c.hash[i])
            .putInt(c.packed[i])
            .putInt(c.subject[i] < 0 ? c.subject[i] : renumbered[c.subject[i]])
            .putLong(c.amount[i])
            .putLong(c.actualOrHeadroom[i])
            .putInt(c.brandCaps[i]);
      }
      chunks.add(new ChunkForm(c.number, c.newestMillis, b.array()));
    }
    return new RecentIdsForm(recent.tail(), names, chunks);
  }

  private static List<FilterForm> pastForm(PastIds past) {
    List<FilterForm> out = new ArrayList<>();
    for (PastIds.Filter f : past.filters()) {
      ByteBuffer b = ByteBuffer.allocate(f.bits.length * 8);
      for (long word : f.bits) {
        b.putLong(word);
      }
      out.add(new FilterForm(f.capacity, f.count, f.newestMillis, b.array()));
    }
    return out;
  }

  /** The state this snapshot holds; open reservations are re-indexed by expiry. */
  LedgerState toState() {
    RecentIds recent = recentIds == null ? RecentIds.empty() : restoredRecent(recentIds);
    List<Reservation> stillOpen = new ArrayList<>(reservations.size());
    for (Reservation r : reservations) {
      if (r.isOpen()) {
        stillOpen.add(r);
      } else if (recentIds == null) {
        // The first format: closed and refused reservations were kept as records.
        Instant closedAt = r.closedAt() != null ? r.closedAt() : r.reservedAt();
        recent = recent.with(r, closedAt);
      }
    }
    PersistentMap.Builder<CapKey, Spend> totals = PersistentMap.builder();
    for (SpendEntry e : spend) {
      totals.put(e.key(), e.spend());
    }
    PersistentMap.Builder<String, Adjustment> byId = PersistentMap.builder();
    for (Adjustment a : adjustments) {
      byId.put(a.id(), a);
    }
    PersistentMap<CapKey, Spend> books = totals.build();
    PersistentMap.Builder<String, LedgerState.EndedMediaJob> ended = PersistentMap.builder();
    for (LedgerState.EndedMediaJob e : endedMediaJobs) {
      ended.put(e.id(), e);
    }
    return new LedgerState(
        recent,
        restoredPast(pastIds),
        OpenReservations.of(stillOpen),
        books,
        // A snapshot written before brand caps ended with their windows may hold more.
        LedgerState.brandCapsWithWindows(PersistentMap.of(brandCaps), books),
        byId.build(),
        Allowances.of(allowanceOuts, allowanceIns),
        ended.build(),
        restoredCalendar(windowZones),
        0);
  }

  private static RecentIds restoredRecent(RecentIdsForm form) {
    RecentIds.Chunk[] chunks = new RecentIds.Chunk[form.chunks().size()];
    for (int k = 0; k < chunks.length; k++) {
      ChunkForm f = form.chunks().get(k);
      RecentIds.Chunk c = new RecentIds.Chunk(f.number());
      ByteBuffer b = ByteBuffer.wrap(f.packed());
      for (int i = 0; b.remaining() >= ENTRY_BYTES; i++) {
        c.hash[i] = b.getLong();
        c.packed[i] = b.getInt();
        c.subject[i] = b.getInt();
        c.amount[i] = b.getLong();
        c.actualOrHeadroom[i] = b.getLong();
        c.brandCaps[i] = b.getInt();
      }
      c.newestMillis = f.newestMillis();
      chunks[k] = c;
    }
    return RecentIds.restored(chunks, form.tail(), form.subjects());
  }

  private static PastIds restoredPast(List<FilterForm> forms) {
    List<PastIds.Filter> filters = new ArrayList<>();
    for (FilterForm f : forms) {
      ByteBuffer b = ByteBuffer.wrap(f.bits());
      long[] bits = new long[f.bits().length / 8];
      for (int i = 0; i < bits.length; i++) {
        bits[i] = b.getLong();
      }
      filters.add(new PastIds.Filter(bits, f.capacity(), f.count(), f.newestMillis()));
    }
    return filters.isEmpty() ? PastIds.NONE : new PastIds(filters);
  }
}
