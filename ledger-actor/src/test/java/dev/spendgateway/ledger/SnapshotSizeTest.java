package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A snapshot holds open reservations, totals and the window's ids packed: its size does not grow
 * with how many reservations closed before the window, and a closed id inside it costs a few dozen
 * bytes, not a record.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SnapshotSizeTest {
  private static final Instant START = Instant.parse("2026-11-30T10:00:00Z");
  private ActorTestKit testKit;
  private Serialization serialization;

  @BeforeAll
  void start() {
    testKit = ActorTestKit.create();
    serialization = SerializationExtension.get(Adapter.toClassic(testKit.system()));
  }

  @AfterAll
  void stop() {
    testKit.shutdownTestKit();
  }

  /** {@code closed} reservations settled, then {@code open} left open, at one per millisecond. */
  private static LedgerState ledgerWith(int closed, int open) {
    // Fixed-width ids: sizes compare ids, not digits.
    return SettledThenOpen.ledger(
        START, closed, open, i -> String.format("svc-%08d", i), i -> null);
  }

  /** The state after every id closed before {@code cutoff} left the window, slice by slice. */
  private static LedgerState compacted(LedgerState state, Instant now) {
    Decider decider = new Decider(IdempotencyWindowTest.settings(1000));
    while (decider.moreToCompact(state, now)) {
      state = state.applied(decider.compact(state, now).orElseThrow());
    }
    return state;
  }

  private int snapshotBytes(LedgerState state) {
    byte[] bytes = serialization.serialize(state).get();
    LedgerState back = (LedgerState) serialization.deserialize(bytes, LedgerState.class).get();
    assertEquals(state, back);
    return bytes.length;
  }

  @ParameterizedTest(name = "{0} closed before the window")
  @CsvSource({"1000", "20000", "60000"})
  void sizeIsIndependentOfTheIdsClosedBeforeTheWindow(int closedBefore) {
    Instant now = START.plus(Duration.ofHours(2));
    LedgerState state = compacted(ledgerWith(closedBefore, 200), now);
    assertEquals(200, state.openReservations());
    int bytes = snapshotBytes(state);
    int baseline = snapshotBytes(compacted(ledgerWith(10, 200), now));
    System.out.printf(
        "snapshot with %d closed before the window: %d bytes (10 closed: %d)%n",
        closedBefore, bytes, baseline);
    // The past-id filter has a fixed minimum size; nothing else depends on the closed count.
    assertTrue(Math.abs(bytes - baseline) <= 64, bytes + " vs " + baseline);
  }

  @Test
  void aClosedIdInsideTheWindowCostsAFewDozenBytes() {
    int small = snapshotBytes(ledgerWith(1_000, 10));
    int large = snapshotBytes(ledgerWith(41_000, 10));
    double perId = (large - small) / 40_000.0;
    System.out.printf("snapshot bytes per closed id in the window: %.1f%n", perId);
    assertTrue(perId <= 48, "bytes per id " + perId);
  }
}
