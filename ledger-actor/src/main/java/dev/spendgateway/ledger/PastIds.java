package dev.spendgateway.ledger;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Ids that left the idempotency window, remembered only as "probably seen" for the configured
 * horizon: Bloom filters of about 1.2 bytes per id (1% false positives), each covering the ids that
 * expired together, dropped as a whole once its newest id is older than the horizon.
 *
 * <p>Ids of the gateway's own namespace ({@code gw-}) are not kept: the provider routes mint a
 * fresh one per call.
 *
 * <p>A hit answers {@code id_reused}: the ledger cannot repeat the first answer any more, and must
 * not make a second reservation under the same id. A false positive (about 1 in 100 new ids that
 * arrive while the filters are full) is answered the same way; the caller retries with a new id.
 *
 * <p>Filters are filled by the writer while expiring a chunk of {@link RecentIds}; a snapshot taken
 * concurrently may therefore see a few more bits set than its own state had, which can only turn a
 * miss into a hit for an id that was in the window anyway.
 */
final class PastIds {
  /** Bits per id and probes per lookup for a 1% false-positive rate. */
  static final int BITS_PER_ID = 10;

  static final int PROBES = 7;

  /** Smallest filter: a light day still gets a filter worth having. */
  static final int MIN_CAPACITY = 1 << 16;

  /**
   * Largest filter (16M ids, 20 MB): allocating one happens inside the writer, and a zeroed 20 MB
   * array takes a few milliseconds; a busier window gets several filters (11 a day at 2k ids/s).
   */
  static final int MAX_CAPACITY = 1 << 24;

  /** One Bloom filter: the ids that expired together, and the newest close time among them. */
  static final class Filter {
    final long[] bits;
    final int capacity;
    int count;
    long newestMillis;

    Filter(int capacity) {
      this.capacity = capacity;
      this.bits = new long[(int) Math.max(1, ((long) capacity * BITS_PER_ID + 63) / 64)];
    }

    Filter(long[] bits, int capacity, int count, long newestMillis) {
      this.bits = bits;
      this.capacity = capacity;
      this.count = count;
      this.newestMillis = newestMillis;
    }

    void add(long hash) {
      long nbits = (long) bits.length * 64;
      int h1 = (int) hash;
      int h2 = (int) (hash >>> 32);
      for (int k = 1; k <= PROBES; k++) {
        long bit = Math.floorMod(h1 + (long) k * h2, nbits);
        bits[(int) (bit >>> 6)] |= 1L << (bit & 63);
      }
      count++;
    }

    boolean mightContain(long hash) {
      long nbits = (long) bits.length * 64;
      int h1 = (int) hash;
      int h2 = (int) (hash >>> 32);
      for (int k = 1; k <= PROBES; k++) {
        long bit = Math.floorMod(h1 + (long) k * h2, nbits);
        if ((bits[(int) (bit >>> 6)] & (1L << (bit & 63))) == 0) {
          return false;
        }
      }
      return true;
    }
  }

  static final PastIds NONE = new PastIds(List.of());

  private final List<Filter> filters;

  PastIds(List<Filter> filters) {
    this.filters = List.copyOf(filters);
  }

  /**
   * These filters with the newest one copied, for reading on another thread (a snapshot) while the
   * ledger goes on: expiring ids adds them to the newest filter in place; older filters are full
   * and never change.
   */
  PastIds withNewestCopied() {
    if (filters.isEmpty()) {
      return this;
    }
    List<Filter> out = new ArrayList<>(filters);
    Filter newest = out.get(out.size() - 1);
    out.set(
        out.size() - 1,
        new Filter(newest.bits.clone(), newest.capacity, newest.count, newest.newestMillis));
    return new PastIds(out);
  }

  boolean mightContain(String id) {
    if (filters.isEmpty()) {
      return false;
    }
    long hash = RecentIds.hashOf(id);
    for (Filter f : filters) {
      if (f.mightContain(hash)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The filters with the visible ids of {@code expired} added; a new filter is started when the
   * newest one is full, sized for {@code expectedIds} (about a window's worth of ids).
   */
  PastIds withExpired(List<RecentIds.Chunk> expired, RecentIds from, int expectedIds) {
    if (expired.isEmpty()) {
      return this;
    }
    List<Filter> out = new ArrayList<>(filters);
    Filter current = out.isEmpty() ? null : out.get(out.size() - 1);
    for (RecentIds.Chunk chunk : expired) {
      int n = from.visibleIn(chunk);
      if (current == null || current.count + n > current.capacity) {
        current = new Filter(Math.min(MAX_CAPACITY, Math.max(MIN_CAPACITY, expectedIds)));
        out.add(current);
      }
      for (int i = 0; i < n; i++) {
        if ((chunk.packed[i] & RecentIds.GATEWAY_NAMESPACE) == 0) {
          current.add(chunk.hash[i]); // provider-route ids are never checked (see Decider#reserve)
        }
      }
      current.newestMillis = Math.max(current.newestMillis, chunk.newestMillis);
    }
    return new PastIds(out);
  }

  /** Without the filters whose newest id closed before {@code cutoff}. */
  PastIds withoutOlderThan(Instant cutoff) {
    long c = cutoff.toEpochMilli();
    List<Filter> kept = filters.stream().filter(f -> f.newestMillis >= c).toList();
    return kept.size() == filters.size() ? this : new PastIds(kept);
  }

  boolean hasOlderThan(Instant cutoff) {
    long c = cutoff.toEpochMilli();
    return filters.stream().anyMatch(f -> f.newestMillis < c);
  }

  List<Filter> filters() {
    return filters;
  }

  long retainedBytes() {
    return filters.stream().mapToLong(f -> 16L + 8L * f.bits.length + 32).sum();
  }
}
