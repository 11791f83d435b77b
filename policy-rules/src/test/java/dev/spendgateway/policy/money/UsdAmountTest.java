package dev.spendgateway.policy.money;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigDecimal;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class UsdAmountTest {

  private static String verdict(UsdAmount.Checked checked) {
    return checked instanceof UsdAmount.Valid v
        ? Long.toString(v.micros())
        : ((UsdAmount.Invalid) checked).reason();
  }

  /** One row per value and reason; the same verdict from a header's text as from a JSON number. */
  @ParameterizedTest(name = "{0} is {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      5                  | 5000000
      5.25               | 5250000
      5.000000000        | 5000000
      0.0000010          | 1
      1000000.0000000    | 1000000000000
      0                  | 0
      0E-20              | 0
      5.0000001          | must have at most 6 decimals (a fraction of a micro-dollar cannot be booked; trailing zeros are fine)
      0.0000001          | must have at most 6 decimals (a fraction of a micro-dollar cannot be booked; trailing zeros are fine)
      -1                 | must not be negative
      -0.0000001         | must not be negative
      1000000.000001     | must be at most 1000000
      1e400              | must be at most 1000000
      """)
  void aNonNegativeAmountIsExactInMicrosByValueNotBySpelling(String usd, String expected) {
    assertEquals(expected, verdict(UsdAmount.nonNegative(usd)));
    assertEquals(expected, verdict(UsdAmount.nonNegative(new BigDecimal(usd))));
  }

  @ParameterizedTest(name = "text ''{0}'' is {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      banana                               | must be a number of US dollars
      NaN                                  | must be a number of US dollars
      ''                                   | must be a number of US dollars
      5.000000000000000000000000000000000  | must be a number of US dollars of at most 32 characters
      ' 5 '                                | 5000000
      """)
  void textThatIsNoAmountIsRefused(String text, String expected) {
    assertEquals(expected, verdict(UsdAmount.nonNegative(text)));
  }

  @ParameterizedTest(name = "signed {0} is {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      -2.500000000       | -2500000
      -1000000.1         | must be at most 1000000 in size
      -0.00000001        | must have at most 6 decimals (a fraction of a micro-dollar cannot be booked; trailing zeros are fine)
      """)
  void aSignedAmountFollowsTheSameRuleBothWays(String usd, String expected) {
    assertEquals(expected, verdict(UsdAmount.signed(new BigDecimal(usd))));
  }
}
