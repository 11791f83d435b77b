package dev.spendgateway.ledger;

import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapName;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The closed and refused reservation ids of the idempotency window, in primitive arrays: about 36
 * bytes per id in its chunk plus 16 bytes per slot of the hash table (kept between 3/8 and 3/4
 * full), so 60-80 bytes per id instead of the ~0.6-1 KB a full {@link Reservation} record costs.
 * What is kept is exactly what a repeat needs to get the first answer again: the status, lane,
 * owner, subject, amounts, the refusing cap, and a fingerprint of the brand caps sent.
 *
 * <p>Ids are kept as a 64-bit hash (two different ids share one with odds of about 1 in 10^19 per
 * pair), in insertion order, in chunks of {@link #CHUNK} ids. Those odds hold for ids nobody chose
 * to collide: the hash is unkeyed, so a caller can find a colliding pair of valid ids by a birthday
 * search (about 2^32 hashes: {@code cb_HgXt3wecO} and {@code cTtjSHHPazNO} took three minutes of
 * one core), and the second id, reserved with the first one's request while the first is closed in
 * the window, is answered as the first (a 201 with no hold). Finding a partner for an id someone
 * else chose is a second preimage (about 2^64 hashes for a generic search). Expiry drops whole
 * chunks from the front, oldest first, so it never scans the window: each compaction drops a
 * bounded slice.
 *
 * <p>Value semantics over arrays shared with the writer. The hash table is owned by one value at a
 * time, explicitly ({@link Table#owner}): the newest one the ledger's writer made. Only the owner
 * reads the table and appends or expires in place; the result becomes the new owner. Any other
 * value (an older state, a branch of one state, the copy handed to the snapshot writer) never
 * touches the table: it looks ids up in a table of its own, built from its own chunks the first
 * time it is asked, and appending to it or expiring it first copies the whole index. So an older
 * value keeps answering exactly what it held even after the writer expired those ids or grew the
 * table, and a value read on another thread never reads a table the writer is changing. A value
 * sees the slots {@code [first chunk, tail)} it was built with; the writer only ever writes the
 * slot at its tail, which no older value sees (or rewrites it with the same content).
 */
final class RecentIds {
  static final int CHUNK_BITS = 12;
  static final int CHUNK = 1 << CHUNK_BITS;

  /** One chunk: parallel arrays; a slot is written once (or rewritten with the same content). */
  static final class Chunk {
    final long number;
    final long[] hash = new long[CHUNK];
    final int[] packed = new int[CHUNK];
    final int[] subject = new int[CHUNK];
    final long[] amount = new long[CHUNK];
    final long[] actualOrHeadroom = new long[CHUNK];
    final int[] brandCaps = new int[CHUNK];

    /**
     * Newest close time in the chunk (epoch millis): the chunk expires when that is past the
     * window.
     */
    volatile long newestMillis = Long.MIN_VALUE;

    Chunk(long number) {
      this.number = number;
    }

    Chunk copy() {
      Chunk c = new Chunk(number);
      System.arraycopy(hash, 0, c.hash, 0, CHUNK);
      System.arraycopy(packed, 0, c.packed, 0, CHUNK);
      System.arraycopy(subject, 0, c.subject, 0, CHUNK);
      System.arraycopy(amount, 0, c.amount, 0, CHUNK);
      System.arraycopy(actualOrHeadroom, 0, c.actualOrHeadroom, 0, CHUNK);
      System.arraycopy(brandCaps, 0, c.brandCaps, 0, CHUNK);
      c.newestMillis = newestMillis;
      return c;
    }

    /** Bytes this chunk's arrays hold (an estimate of retained heap, headers included). */
    static long bytes() {
      return 6L * 16 + CHUNK * (8L + 4 + 4 + 8 + 8 + 4) + 32;
    }
  }

  /** The writer's shared hash table: id hash -> logical slot, open addressing, linear probing. */
  static final class Table {
    /**
     * The one value that may read and change this table: the newest the writer made. Set by every
     * value that writes the table, on the writer's thread only.
     */
    RecentIds owner;

    long[] keys;
    long[] slots; // slot + 1; 0 = empty
    int size;

    Table() {
      this(0);
    }

    /**
     * A table that holds {@code expected} ids without growing (a snapshot's window is rebuilt in
     * one go, not rehashed at every doubling).
     */
    Table(int expected) {
      int length = 1024;
      // At most 2^30 slots up front (a window of ~800 million ids); beyond that it grows as it
      // fills.
      while ((expected + 1) * 4L > length * 3L && length < 1 << 30) {
        length *= 2;
      }
      keys = new long[length];
      slots = new long[length];
    }

    /** One past the highest slot written by any value sharing this table. */
    long written;

    long find(long hash) {
      int mask = keys.length - 1;
      for (int i = mix(hash) & mask; ; i = (i + 1) & mask) {
        if (slots[i] == 0) {
          return -1;
        }
        if (keys[i] == hash) {
          return slots[i] - 1;
        }
      }
    }

    void put(long hash, long slot) {
      if ((size + 1) * 4L > keys.length * 3L) {
        grow();
      }
      int mask = keys.length - 1;
      int i = mix(hash) & mask;
      while (slots[i] != 0 && keys[i] != hash) {
        i = (i + 1) & mask;
      }
      if (slots[i] == 0) {
        size++;
      }
      keys[i] = hash;
      slots[i] = slot + 1;
    }

    /**
     * Removes {@code hash} if it maps to {@code slot} (backward-shift deletion keeps probes short).
     */
    void remove(long hash, long slot) {
      int mask = keys.length - 1;
      int i = mix(hash) & mask;
      while (slots[i] != 0 && keys[i] != hash) {
        i = (i + 1) & mask;
      }
      if (slots[i] == 0 || slots[i] - 1 != slot) {
        return;
      }
      size--;
      int hole = i;
      for (int j = (hole + 1) & mask; slots[j] != 0; j = (j + 1) & mask) {
        int home = mix(keys[j]) & mask;
        boolean movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
        if (movable) {
          keys[hole] = keys[j];
          slots[hole] = slots[j];
          hole = j;
        }
      }
      slots[hole] = 0;
      keys[hole] = 0;
    }

    private void grow() {
      long[] oldKeys = keys;
      long[] oldSlots = slots;
      keys = new long[oldKeys.length * 2];
      slots = new long[oldSlots.length * 2];
      size = 0;
      for (int i = 0; i < oldKeys.length; i++) {
        if (oldSlots[i] != 0) {
          put(oldKeys[i], oldSlots[i] - 1);
        }
      }
    }

    long bytes() {
      return 2L * (16 + 8L * keys.length) + 32;
    }

    private static int mix(long h) {
      h ^= h >>> 33;
      h *= 0xff51afd7ed558ccdL;
      h ^= h >>> 33;
      return (int) h;
    }
  }

  /** What the index remembers of one id. */
  record Entry(
      long hash,
      Status status,
      Lane lane,
      Owner owner,
      String subject,
      long amountMicros,
      long actualMicros,
      CapName refusedBy,
      boolean refusedOnSubject,
      long headroomMicros,
      int brandCaps) {}

  /** Packed flag: the id is in the gateway's own namespace (minted per provider call). */
  static final int GATEWAY_NAMESPACE = 1 << 13;

  private static final Status[] STATUSES = Status.values();
  private static final Lane[] LANES = Lane.values();
  private static final Owner[] OWNERS = Owner.values();
  private static final CapName[] CAPS = CapName.values();

  private final Table table;
  private final Chunk[] chunks;
  private final long tail;
  private final Subjects subjects;

  /**
   * For a value that does not own {@link #table}: its own lookup table, built from its chunks on
   * its first lookup (null until then).
   */
  private volatile Table own;

  private RecentIds(Table table, Chunk[] chunks, long tail, Subjects subjects) {
    this.table = table;
    this.chunks = chunks;
    this.tail = tail;
    this.subjects = subjects;
  }

  /** This value, made the owner of its table (it is the newest the writer made). */
  private RecentIds owning() {
    table.owner = this;
    return this;
  }

  /** Whether this value owns the shared table, so may read it and change it in place. */
  boolean ownsTable() {
    return table.owner == this;
  }

  /**
   * The table this value may look ids up in: the shared one if it owns it, else its own, built once
   * from the slots it sees.
   */
  private Table lookupTable() {
    if (ownsTable()) {
      return table;
    }
    Table t = own;
    if (t == null) {
      t = new Table(size());
      for (Chunk chunk : chunks) {
        long base = chunk.number << CHUNK_BITS;
        for (int i = 0; i < CHUNK && base + i < tail; i++) {
          if (base + i >= firstSlot()) {
            t.put(chunk.hash[i], base + i);
          }
        }
      }
      own = t;
    }
    return t;
  }

  /**
   * This value with its last chunk copied, for reading on another thread (a snapshot) while the
   * ledger goes on: later appends write into the last chunk only (its free slots and its newest
   * close time), the earlier ones are full and never change. Not for appending to.
   */
  RecentIds withLastChunkCopied() {
    if (chunks.length == 0) {
      return this;
    }
    Chunk[] copied = chunks.clone();
    copied[copied.length - 1] = copied[copied.length - 1].copy();
    return new RecentIds(table, copied, tail, subjects);
  }

  /** A new, empty index with its own table (never shared between ledgers). */
  static RecentIds empty() {
    return new RecentIds(new Table(), new Chunk[0], 0, Subjects.EMPTY).owning();
  }

  /** The 64-bit hash an id is remembered by (FNV-1a over UTF-8, then a 64-bit finaliser). */
  static long hashOf(String id) {
    long h = 0xcbf29ce484222325L;
    for (byte b : id.getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xff;
      h *= 0x100000001b3L;
    }
    h ^= h >>> 33;
    h *= 0xc4ceb9fe1a85ec53L;
    h ^= h >>> 33;
    return h;
  }

  /** Fingerprint of the brand caps a request sent (only they are not kept exactly). */
  static int brandCapsFingerprint(long dailyMicros, long monthlyMicros) {
    return Long.hashCode(dailyMicros * 0x9E3779B97F4A7C15L + monthlyMicros);
  }

  int size() {
    return chunks.length == 0 ? 0 : (int) (tail - (chunks[0].number << CHUNK_BITS));
  }

  /** The entry of {@code id} if it is in the window. */
  Entry find(String id) {
    return findByHash(hashOf(id));
  }

  /** The entry at {@code slot} (which this value must see). */
  Entry entryAtSlot(long slot) {
    Chunk chunk = chunks[(int) ((slot >> CHUNK_BITS) - chunks[0].number)];
    return entryAt(chunk, (int) (slot & (CHUNK - 1)));
  }

  Entry findByHash(long hash) {
    long slot = lookupTable().find(hash);
    if (slot < 0 || slot >= tail || chunks.length == 0) {
      return null;
    }
    int c = (int) ((slot >> CHUNK_BITS) - chunks[0].number);
    if (c < 0 || c >= chunks.length) {
      return null;
    }
    Chunk chunk = chunks[c];
    int i = (int) (slot & (CHUNK - 1));
    if (chunk.hash[i] != hash) {
      return null;
    }
    return entryAt(chunk, i);
  }

  private Entry entryAt(Chunk chunk, int i) {
    int p = chunk.packed[i];
    int cap = (p >>> 8) & 0xf;
    return new Entry(
        chunk.hash[i],
        STATUSES[p & 0x7],
        LANES[(p >>> 3) & 0x3],
        OWNERS[(p >>> 5) & 0x1],
        subjects.name(chunk.subject[i]),
        chunk.amount[i],
        STATUSES[p & 0x7] == Status.REFUSED ? 0 : chunk.actualOrHeadroom[i],
        cap == 0 ? null : CAPS[cap - 1],
        (p & (1 << 12)) != 0,
        STATUSES[p & 0x7] == Status.REFUSED ? chunk.actualOrHeadroom[i] : 0,
        chunk.brandCaps[i]);
  }

  /** The index with a closed or refused reservation added, closed at {@code at}. */
  RecentIds with(Reservation r, Instant at) {
    long hash = hashOf(r.id());
    Subjects newSubjects = subjects.with(r.subject(), tail >> CHUNK_BITS);
    int p = r.status().ordinal() | r.lane().ordinal() << 3 | r.owner().ordinal() << 5;
    p |= Owner.impliedBy(r.id()) == Owner.GATEWAY ? GATEWAY_NAMESPACE : 0;
    long second = r.actualMicros();
    if (r.wasRefused()) {
      p |= (r.refusal().cap().ordinal() + 1) << 8;
      p |= Objects.equals(r.refusal().subject(), r.subject()) && r.subject() != null ? 1 << 12 : 0;
      second = r.refusal().headroomMicros();
    }
    int subject = newSubjects.code(r.subject());
    int brand = brandCapsFingerprint(r.brandDailyMicros(), r.brandMonthlyMicros());
    RecentIds target = this;
    // A value that does not own the table appends in place only to rewrite what the owner already
    // wrote at its tail (the same fact folded again from the same state); anything else is a
    // branch, which gets an index of its own.
    if (!ownsTable() && !sameAt(tail, hash, p, subject, r.amountMicros(), second, brand)) {
      target = copied();
    }
    return target.appended(
        hash, p, subject, r.amountMicros(), second, brand, at.toEpochMilli(), newSubjects);
  }

  private boolean sameAt(
      long slot, long hash, int p, int subject, long amount, long second, int brand) {
    if (chunks.length == 0 || (slot >> CHUNK_BITS) != chunks[chunks.length - 1].number) {
      return false;
    }
    Chunk c = chunks[chunks.length - 1];
    int i = (int) (slot & (CHUNK - 1));
    return c.hash[i] == hash
        && c.packed[i] == p
        && c.subject[i] == subject
        && c.amount[i] == amount
        && c.actualOrHeadroom[i] == second
        && c.brandCaps[i] == brand;
  }

  private RecentIds appended(
      long hash,
      int p,
      int subject,
      long amount,
      long second,
      int brand,
      long atMillis,
      Subjects newSubjects) {
    long number = tail >> CHUNK_BITS;
    Chunk[] newChunks = chunks;
    Chunk last = chunks.length == 0 ? null : chunks[chunks.length - 1];
    if (last == null || last.number != number) {
      last = new Chunk(number);
      newChunks = Arrays.copyOf(chunks, chunks.length + 1);
      newChunks[chunks.length] = last;
    }
    int i = (int) (tail & (CHUNK - 1));
    last.hash[i] = hash;
    last.packed[i] = p;
    last.subject[i] = subject;
    last.amount[i] = amount;
    last.actualOrHeadroom[i] = second;
    last.brandCaps[i] = brand;
    if (atMillis > last.newestMillis) {
      last.newestMillis = atMillis;
    }
    table.put(hash, tail);
    table.written = Math.max(table.written, tail + 1);
    return new RecentIds(table, newChunks, tail + 1, newSubjects).owning();
  }

  /** A private copy: its own table and chunks, holding exactly what this value sees. */
  private RecentIds copied() {
    Table t = new Table();
    Chunk[] cs = new Chunk[chunks.length];
    for (int c = 0; c < chunks.length; c++) {
      cs[c] = chunks[c].copy();
      long base = cs[c].number << CHUNK_BITS;
      for (int i = 0; i < CHUNK && base + i < tail; i++) {
        if (base + i >= firstSlot()) {
          t.put(cs[c].hash[i], base + i);
        }
      }
    }
    t.written = tail;
    return new RecentIds(t, cs, tail, subjects).owning();
  }

  long firstSlot() {
    return chunks.length == 0 ? tail : chunks[0].number << CHUNK_BITS;
  }

  /** Newest close time of the oldest chunk, or null when empty: the next thing that can expire. */
  Instant oldestChunkNewest() {
    return chunks.length == 0 ? null : Instant.ofEpochMilli(chunks[0].newestMillis);
  }

  /**
   * The cutoff that drops at most {@code maxChunks} chunks when expiring before {@code cutoff}: the
   * cutoff itself if fewer would go, else just after the newest id of the last chunk allowed.
   */
  Instant sliceCutoff(Instant cutoff, int maxChunks) {
    long c = cutoff.toEpochMilli();
    int n = 0;
    while (n < chunks.length && chunks[n].newestMillis < c) {
      n++;
      if (n == maxChunks) {
        long sliceEnd = chunks[n - 1].newestMillis + 1;
        return sliceEnd < c ? Instant.ofEpochMilli(sliceEnd) : cutoff;
      }
    }
    return cutoff;
  }

  /** The chunks that expire before {@code cutoff}, oldest first (each handed to {@code sink}). */
  RecentIds expiredBefore(Instant cutoff, java.util.function.Consumer<Chunk> sink) {
    if (!ownsTable()) {
      return copied().expiredBefore(cutoff, sink);
    }
    long c = cutoff.toEpochMilli();
    int n = 0;
    while (n < chunks.length && chunks[n].newestMillis < c) {
      n++;
    }
    if (n == 0) {
      return this;
    }
    long lastDropped = chunks[n - 1].number;
    Subjects keptSubjects = subjects;
    // Codes already looked at, direct-mapped: a chunk's ids mostly repeat a few brands, so this
    // spares most of the map lookups.
    int[] seen = new int[256];
    for (int k = 0; k < n; k++) {
      Chunk chunk = chunks[k];
      long base = chunk.number << CHUNK_BITS;
      for (int i = 0; i < CHUNK && base + i < tail; i++) {
        table.remove(chunk.hash[i], base + i);
        int code = chunk.subject[i];
        if (code >= 0 && seen[code & 255] != code + 1) {
          seen[code & 255] = code + 1;
          keptSubjects = keptSubjects.withoutIfLastUsedBy(code, lastDropped);
        }
      }
      sink.accept(chunk);
    }
    // A partly filled last chunk that expired: the next id starts a new chunk, so every chunk's
    // first slot holds a real id.
    long newTail =
        n == chunks.length && (tail & (CHUNK - 1)) != 0
            ? ((tail >> CHUNK_BITS) + 1) << CHUNK_BITS
            : tail;
    table.written = Math.max(table.written, newTail);
    return new RecentIds(table, Arrays.copyOfRange(chunks, n, chunks.length), newTail, keptSubjects)
        .owning();
  }

  /** How many ids of {@code chunk} this value sees (the last chunk may be partly filled). */
  int visibleIn(Chunk chunk) {
    long base = chunk.number << CHUNK_BITS;
    return (int) Math.max(0, Math.min(CHUNK, tail - base));
  }

  Chunk[] chunks() {
    return chunks;
  }

  long tail() {
    return tail;
  }

  Subjects subjects() {
    return subjects;
  }

  /** Estimated retained bytes of the arrays (chunks + table), for the memory test and the bench. */
  long retainedBytes() {
    return chunks.length * Chunk.bytes() + 16L + 8L * chunks.length + table.bytes();
  }

  /**
   * Rebuilds an index from a snapshot's chunks (see {@link LedgerSnapshot}), whose subject codes
   * index {@code names}. Only the names the chunks still use are kept, renumbered from 0 in the
   * order of {@code names} (a snapshot written before unused names were dropped may hold others).
   */
  static RecentIds restored(Chunk[] chunks, long tail, List<String> names) {
    long first = chunks.length == 0 ? tail : chunks[0].number << CHUNK_BITS;
    Table t = new Table((int) Math.min(Integer.MAX_VALUE / 2, Math.max(0, tail - first)));
    long[] lastUse = new long[names.size()];
    Arrays.fill(lastUse, -1);
    for (Chunk chunk : chunks) {
      long base = chunk.number << CHUNK_BITS;
      for (int i = 0; i < CHUNK && base + i < tail; i++) {
        t.put(chunk.hash[i], base + i);
        int code = chunk.subject[i];
        if (code >= 0) {
          lastUse[code] = chunk.number;
        }
      }
    }
    t.written = tail;
    int[] renumbered = new int[names.size()];
    PersistentMap.Builder<String, Subjects.Use> codes = PersistentMap.builder();
    PersistentMap.Builder<Integer, String> byCode = PersistentMap.builder();
    int next = 0;
    for (int code = 0; code < names.size(); code++) {
      if (lastUse[code] >= 0) {
        codes.put(names.get(code), new Subjects.Use(next, lastUse[code]));
        byCode.put(next, names.get(code));
        renumbered[code] = next++;
      }
    }
    for (Chunk chunk : chunks) {
      long base = chunk.number << CHUNK_BITS;
      for (int i = 0; i < CHUNK && base + i < tail; i++) {
        int code = chunk.subject[i];
        if (code >= 0) {
          chunk.subject[i] = renumbered[code];
        }
      }
    }
    return new RecentIds(t, chunks, tail, new Subjects(codes.build(), byCode.build(), next))
        .owning();
  }

  /**
   * The names of {@link #subjects()} in code order, and each id's code in that list: what a
   * snapshot writes. Codes freed when their last ids left the window are closed up, so the list
   * holds exactly the names in use.
   */
  List<String> subjectNames(int[] renumbered) {
    List<String> out = new java.util.ArrayList<>(subjects.size());
    for (int code = 0; code < subjects.next(); code++) {
      String name = subjects.name(code);
      if (name != null) {
        renumbered[code] = out.size();
        out.add(name);
      } else {
        renumbered[code] = -1;
      }
    }
    return out;
  }

  /**
   * Brand and preview ids as small codes. Every caller may name a new brand or preview id with each
   * request, so a name is kept only while an id in the window uses it: each name records the last
   * chunk that used it, and is dropped when that chunk leaves the window ({@link #expiredBefore}).
   * Codes are never reused while this index lives, so an older value still reads its own names.
   *
   * @param next the code the next new name gets
   */
  record Subjects(
      PersistentMap<String, Use> codes, PersistentMap<Integer, String> names, int next) {
    static final Subjects EMPTY = new Subjects(PersistentMap.empty(), PersistentMap.empty(), 0);

    /** A name's code and the number of the newest chunk holding an id under it. */
    record Use(int code, long lastChunk) {}

    /** With {@code subject} used by an id in chunk {@code chunk}. */
    Subjects with(String subject, long chunk) {
      if (subject == null) {
        return this;
      }
      Use use = codes.get(subject);
      if (use != null) {
        return use.lastChunk() == chunk
            ? this
            : new Subjects(codes.with(subject, new Use(use.code(), chunk)), names, next);
      }
      return new Subjects(
          codes.with(subject, new Use(next, chunk)), names.with(next, subject), next + 1);
    }

    /** Without the name of {@code code} if no chunk after {@code lastDropped} uses it. */
    Subjects withoutIfLastUsedBy(int code, long lastDropped) {
      if (code < 0) {
        return this;
      }
      String name = names.get(code);
      if (name == null || codes.get(name).lastChunk() > lastDropped) {
        return this;
      }
      return new Subjects(codes.without(name), names.without(code), next);
    }

    int code(String subject) {
      return subject == null ? -1 : codes.get(subject).code();
    }

    String name(int code) {
      return code < 0 ? null : names.get(code);
    }

    int size() {
      return codes.size();
    }
  }
}
