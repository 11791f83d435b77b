package dev.spendgateway.policy.money;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.spendgateway.policy.access.Lane;
import java.math.BigDecimal;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class MicrosTest {

  @ParameterizedTest(name = "${0} is {1} micros exactly, {2} rounded up, and reads back as {3}")
  @CsvSource({
    "0.30,       300000,  300000,  0.3",
    "40,         40000000, 40000000, 40",
    "0.0000001,  ,        1,       ",
    "0.000001,   1,       1,       0.000001",
  })
  void convertsExactlyOrRoundsUp(BigDecimal usd, Long exact, long ceil, BigDecimal back) {
    if (exact == null) {
      assertThrows(ArithmeticException.class, () -> Micros.ofUsdExact(usd));
    } else {
      assertEquals(exact, Micros.ofUsdExact(usd));
      assertEquals(back.toPlainString(), Micros.toUsd(exact).toPlainString());
    }
    assertEquals(ceil, Micros.ofUsdCeil(usd));
  }

  @ParameterizedTest(name = "lane {0} needs a subject: {1}")
  @CsvSource({"app, true", "trial, true", "free, false"})
  void lanesReadFromTheirHeaderValue(String wire, boolean needsSubject) {
    Lane lane = Lane.fromWireName(wire).orElseThrow();
    assertEquals(wire, lane.wireName());
    assertEquals(needsSubject, lane.needsSubject());
  }

  @Test
  void anUnknownLaneIsEmpty() {
    assertEquals(Optional.empty(), Lane.fromWireName("paid"));
  }
}
