package dev.spendgateway.regionsim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapName;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SplitTest {
  private static final CapKey DAY = new CapKey(CapName.GLOBAL_DAILY, null, "2026-03-14");
  private static final CapKey MONTH = new CapKey(CapName.GLOBAL_MONTHLY, null, "2026-03");

  @ParameterizedTest(name = "cap {0} over weights {1}: shares {2}")
  @CsvSource({
    "200000000, 1 1 1, 66666668 66666666 66666666", // the remainder goes to region 0
    "200000000, 1 1, 100000000 100000000",
    "7, 3 3 3 3 3, 3 1 1 1 1", // rounding leaves 2 micros: region 0 gets them
    "200000000, 60 140 100 80, 31578949 73684210 52631578 42105263",
    "0, 1 2, 0 0",
  })
  void sharesSumToTheCapExactly(long cap, String weights, String shares) {
    List<Integer> w = Arrays.stream(weights.split(" ")).map(Integer::valueOf).toList();
    Split split = new Split(cap, cap * 2, w);
    long sum = 0;
    String[] expected = shares.split(" ");
    for (int r = 0; r < w.size(); r++) {
      assertEquals(Long.parseLong(expected[r]), split.share(r, DAY), "region " + r);
      sum += split.share(r, DAY);
    }
    assertEquals(cap, sum);
    long monthSum = 0;
    for (int r = 0; r < w.size(); r++) {
      monthSum += split.share(r, MONTH);
    }
    assertEquals(cap * 2, monthSum);
  }

  @Test
  void onlyTheGlobalCapsAreSplit() {
    Split split = new Split(10, 20, List.of(1, 1));
    assertThrows(
        IllegalArgumentException.class,
        () -> split.share(0, new CapKey(CapName.FREE_DAILY, null, "2026-03-14")));
    assertThrows(IllegalArgumentException.class, () -> new Split(10, 20, List.of(1, 0)));
  }
}
