package dev.spendgateway.regionsim;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class AllowanceRulesTest {

  @ParameterizedTest(name = "headroom {0}, floor {1}, asked {2}, rate left {3}: lends {4}")
  @CsvSource({
    // headroom, floor, want, rateLeft, lent
    "100, 20, 50, 1000, 50", // plenty spare: what was asked
    "100, 20, 500, 1000, 80", // asked more than is spare: only down to the floor
    "100, 20, 50, 30, 30", // the rate is the limit
    "20, 20, 50, 1000, 0", // at the floor: nothing
    "10, 20, 50, 1000, 0", // below the floor: nothing, never negative
    "-5, 0, 50, 1000, 0", // over its allowance (settles above reserve): nothing
    "100, 20, 50, 0, 0", // rate used up this minute
    "100, 20, 0, 1000, 0", // nothing asked
  })
  void lendsAtMostWhatIsSpareAskedAndAllowed(
      long headroom, long floor, long want, long rateLeft, long lent) {
    assertEquals(lent, AllowanceRules.lendable(headroom, floor, want, rateLeft));
  }
}
