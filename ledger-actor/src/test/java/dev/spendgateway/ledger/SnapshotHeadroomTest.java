package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.Optional;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.SerializationExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A snapshot is written only while the heap has room for its copies: running out of heap in the
 * middle of the write closes H2's database, journal included.
 */
class SnapshotHeadroomTest {
  private static final long MIB = 1L << 20;
  private static final Instant START = Instant.parse("2026-11-30T10:00:00Z");

  /** {@code closed} ids settled, then {@code open} left open, one per millisecond. */
  static LedgerState ledgerWith(int closed, int open) {
    return SettledThenOpen.ledger(
        START, closed, open, i -> "svc-reservation-" + i, i -> "brand-" + i % 7);
  }

  @ParameterizedTest(name = "{0} closed ids, {1} open")
  @CsvSource({"0, 0", "50000, 0", "0, 5000", "40000, 3000"})
  void theEstimateIsNeverBelowTheSnapshotsRealSize(int closed, int open) {
    LedgerState state = ledgerWith(closed, open);
    ActorTestKit kit = ActorTestKit.create();
    try {
      byte[] bytes =
          SerializationExtension.get(Adapter.toClassic(kit.system()))
              .serialize(state.forSnapshot())
              .get();
      long estimate = SnapshotHeadroom.estimatedSnapshotBytes(state);
      assertTrue(estimate >= bytes.length, "estimate " + estimate + " < real " + bytes.length);
      // Not far above either: an estimate twice the size would skip snapshots a heap has room for.
      assertTrue(
          estimate <= 1.5 * bytes.length + 4096,
          "estimate " + estimate + " vs real " + bytes.length);
    } finally {
      kit.shutdownTestKit();
    }
  }

  /** live MB, max MB, snapshot MB → whether it may be written (needs 4 x snapshot + 64 MB free). */
  @ParameterizedTest(name = "live {0} MB of {1} MB, snapshot {2} MB: room {3}")
  @CsvSource({
    "79, 272, 36, false", // 1M ids: 193 MB free, 208 needed (the store's failure began at 240)
    "79, 320, 36, true",
    "180, 576, 108, false", // 3M ids: 396 free, 496 needed (failure at 544)
    "180, 704, 108, true",
    "10, 100, 0, true", // an empty ledger in a small heap
    "37, 100, 0, false", // ... but not if other work holds the heap
    "600, 512, 1, false" // a pool counting more than the maximum: no room, no negative free
  })
  void roomIsFourCopiesOfTheSnapshotAndSomeSpare(
      long liveMb, long maxMb, long snapshotMb, boolean room) {
    long free = (maxMb - liveMb) * MIB;
    assertEquals(room, free >= SnapshotHeadroom.neededFreeBytes(snapshotMb * MIB));
  }

  @Test
  void aShortfallNamesTheHeapAndTheSettingToChange() {
    LedgerState state = ledgerWith(100_000, 10);
    Optional<String> shortfall = new SnapshotHeadroom(() -> 200 * MIB, 256 * MIB).shortfall(state);
    assertTrue(shortfall.isPresent());
    String message = shortfall.get();
    assertTrue(message.contains("100,010 reservation ids"), message);
    assertTrue(message.contains("needs 80 MB of free heap"), message);
    assertTrue(message.contains("only 56 MB of the 256 MB heap are free"), message);
    assertTrue(message.contains("-Xmx") && message.contains("ledger.idempotency-window"), message);
    assertEquals(
        Optional.empty(), new SnapshotHeadroom(() -> 100 * MIB, 256 * MIB).shortfall(state));
  }

  @Test
  void aSnapshotLargerThanOneRowIsNeverWrittenWhateverTheHeap() {
    SnapshotHeadroom huge = new SnapshotHeadroom(() -> 0, 64L << 30);
    long row = SnapshotHeadroom.MAX_SNAPSHOT_BYTES;
    assertEquals(Optional.empty(), huge.shortfall(row, 26_000_000));
    String message = huge.shortfall(row + 1, 30_000_000).orElseThrow();
    assertTrue(message.contains("30,000,000 reservation ids"), message);
    assertTrue(message.contains("larger than one snapshot row can hold (1,024 MB)"), message);
    assertTrue(message.contains("shorten ledger.idempotency-window"), message);
  }

  @Test
  void thisJvmsHeapIsReadWithoutItsEden() {
    SnapshotHeadroom jvm = SnapshotHeadroom.ofThisJvm();
    long live = jvm.liveHeapBytes().getAsLong();
    assertTrue(live > 0 && live <= jvm.maxHeapBytes(), live + " of " + jvm.maxHeapBytes());
    assertEquals(Runtime.getRuntime().maxMemory(), jvm.maxHeapBytes(), 64 * MIB);
  }
}
