package dev.spendgateway.ledger;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Whether the heap has room to write a snapshot of the ledger now. A snapshot is the whole state in
 * one byte array, and the way to the database copies it several times: its packed form, the CBOR
 * bytes, the array they are copied into, and on H2 the store's own buffers for the row. A state of
 * 1 million window ids (79 MB of live heap, a 36 MB snapshot) needed about 270 MB of heap to save
 * one; 3 million ids (180 MB live, 108 MB snapshot) about 580 MB ({@code
 * loadtest/snapshot-heap.sh}). Running out of heap in the middle is far worse than a missing
 * snapshot: H2's store closes the whole database when one of its writes fails that way, and the
 * journal lives in that database, so every reservation after it would fail until a restart, and the
 * restarted ledger, as large as before, would try the same snapshot again.
 *
 * <p>So a snapshot is written only while the heap not in use (eden counted as free) is at least
 * {@link #COPIES} times the snapshot's estimated size plus {@link #SPARE_BYTES}; otherwise it is
 * skipped with a warning naming the heap it needs. A skipped snapshot costs only a longer recovery
 * (the journal holds every fact); the next one falls due after as many facts again.
 *
 * @param liveHeapBytes the heap in use, the young generation's eden left out
 * @param maxHeapBytes the most heap this JVM may use ({@code -Xmx})
 */
public record SnapshotHeadroom(LongSupplier liveHeapBytes, long maxHeapBytes) {

  /**
   * Free heap a snapshot needs, in multiples of its size. 4: the measured need above was 3.7 to 5.3
   * times the snapshot (the fixed part counts more for a small one, and {@link #SPARE_BYTES} covers
   * it), with the callers' own allocations going on beside it.
   */
  static final int COPIES = 4;

  /** Free heap a snapshot needs on top of {@link #COPIES}: the stores' fixed buffers. 64 MiB. */
  static final long SPARE_BYTES = 64L << 20;

  /** A window id in a snapshot: 36 packed bytes, rounded up for the CBOR around each chunk. */
  static final long BYTES_PER_WINDOW_ID = 40;

  /** An open reservation in a snapshot, as a record with its id, subject and amounts. */
  static final long BYTES_PER_OPEN_RESERVATION = 256;

  /**
   * The largest snapshot written: 1 GiB, what one PostgreSQL {@code bytea} value holds (a Java
   * array, which the whole snapshot is on its way, stops at 2 GiB), about 27 million window ids.
   */
  static final long MAX_SNAPSHOT_BYTES = 1L << 30;

  /** A cap window's totals, a brand's caps or an adjustment in a snapshot, with their keys. */
  static final long BYTES_PER_ENTRY = 256;

  /** The snapshot's own frame: field names, the subjects' table header. */
  static final long BYTES_FIXED = 4096;

  /** This JVM's heap: in use (eden left out), and its maximum. */
  public static SnapshotHeadroom ofThisJvm() {
    return new SnapshotHeadroom(SnapshotHeadroom::liveHeap, maxHeap());
  }

  /** About how many bytes a snapshot of {@code state} is (never less, measured). */
  public static long estimatedSnapshotBytes(LedgerState state) {
    return BYTES_FIXED
        + BYTES_PER_WINDOW_ID * state.idsInWindow()
        + BYTES_PER_OPEN_RESERVATION * state.openReservations()
        + state.pastIdFilterBytes()
        + BYTES_PER_ENTRY
            * (state.spendByKey().asMap().size()
                + state.brandCapsBySubject().asMap().size()
                + state.adjustmentsById().size());
  }

  /** The free heap a snapshot of {@code snapshotBytes} needs. */
  static long neededFreeBytes(long snapshotBytes) {
    return COPIES * snapshotBytes + SPARE_BYTES;
  }

  /**
   * Why a snapshot of {@code state} must not be written now (one line naming what it needs and what
   * to change); empty when there is room.
   */
  public Optional<String> shortfall(LedgerState state) {
    return shortfall(estimatedSnapshotBytes(state), state.knownReservations());
  }

  /** As {@link #shortfall(LedgerState)}, for a snapshot of {@code snapshotBytes} and its ids. */
  Optional<String> shortfall(long snapshotBytes, long ids) {
    if (snapshotBytes > MAX_SNAPSHOT_BYTES) {
      return Optional.of(
          String.format(
              "a snapshot of %,d reservation ids (about %,d MB) is larger than one snapshot row"
                  + " can hold (%,d MB); shorten ledger.idempotency-window",
              ids, mib(snapshotBytes), mib(MAX_SNAPSHOT_BYTES)));
    }
    long needed = neededFreeBytes(snapshotBytes);
    long free = maxHeapBytes - liveHeapBytes.getAsLong();
    if (free >= needed) {
      return Optional.empty();
    }
    return Optional.of(
        String.format(
            "writing a snapshot of %,d reservation ids (about %,d MB) needs %,d MB of free heap,"
                + " and only %,d MB of the %,d MB heap are free; running out of heap in the write"
                + " would close the journal's database. Raise the heap (-Xmx in JAVA_OPTS) or"
                + " shorten ledger.idempotency-window",
            ids, mib(snapshotBytes), mib(needed), mib(Math.max(0, free)), mib(maxHeapBytes)));
  }

  private static long mib(long bytes) {
    return (bytes + (1L << 20) - 1) >> 20;
  }

  private static long maxHeap() {
    long max = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getMax();
    return max > 0 ? max : Runtime.getRuntime().maxMemory();
  }

  /**
   * The heap in use, leaving out the young generation's eden: every young collection empties it
   * (what lives moves on to the survivor and old pools), so what it holds now is mostly garbage.
   * The other pools count with what they hold now, which may include garbage not yet collected: the
   * estimate errs towards less room, never more. (The pools' usage "after the last collection"
   * cannot be used: G1 leaves its old pool's at 0 until a mixed or full collection, which a steady
   * gateway may not run for hours.)
   */
  static long liveHeap() {
    long live = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP && pool.isValid() && !pool.getName().contains("Eden")) {
        live += pool.getUsage().getUsed();
      }
    }
    return live;
  }
}
