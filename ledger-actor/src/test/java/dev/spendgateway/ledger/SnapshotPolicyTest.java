package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SnapshotPolicyTest {

  @ParameterizedTest(name = "every {0}: {1} facts since, {2} ids held -> {3}")
  @CsvSource({
    // min facts, facts since, ids held, due
    "100000,  99999,       1000, false",
    "100000, 100000,       1000, true",
    "100000, 100000,     200000, true", // half of 200k is 100k: due
    "100000, 100000,     200002, false", // a bigger state waits for half its ids
    "100000, 4320000,   8640000, true", // a day of ids at 100/s: twice a day at 200 facts/s
    "100000, 4319999,   8640000, false",
    "1,           1,          0, true",
    "1,           0,          0, false",
  })
  void dueOnceFactsReachTheFloorAndHalfTheIdsHeld(
      long minFacts, long factsSince, long idsHeld, boolean due) {
    assertEquals(due, new SnapshotPolicy(minFacts).due(factsSince, idsHeld));
  }

  @ParameterizedTest
  @CsvSource({"0", "-1"})
  void aFloorBelowOneIsRefusedNamingTheKey(long minFacts) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> new SnapshotPolicy(minFacts));
    assertEquals("ledger.snapshot-every must be at least 1", e.getMessage());
  }
}
