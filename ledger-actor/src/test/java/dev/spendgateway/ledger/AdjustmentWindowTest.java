package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapName;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which cap windows an operator adjustment moves: only those containing the window it names. */
class AdjustmentWindowTest {
  private static final Instant NOW = Instant.parse("2026-11-30T10:00:00Z");

  @ParameterizedTest(name = "a {0} on {1} {2} for {3} moves {4}")
  @CsvSource(
      delimiter = '|',
      nullValues = "-",
      textBlock =
          """
      refund | app   | b1 | 2026-11-29 | brand_daily b1 2026-11-29, brand_monthly b1 2026-11, global_daily - 2026-11-29, global_monthly - 2026-11
      grant  | app   | b1 | 2026-11-29 | brand_daily b1 2026-11-29, brand_monthly b1 2026-11
      refund | app   | b1 | 2026-11    | brand_monthly b1 2026-11, global_monthly - 2026-11
      grant  | app   | b1 | 2026-11    | brand_monthly b1 2026-11
      refund | free  | -  | 2026-11-30 | free_daily - 2026-11-30, global_daily - 2026-11-30, global_monthly - 2026-11
      refund | free  | -  | 2026-10    | global_monthly - 2026-10
      grant  | trial | p1 | 2026-11-29 | preview_lifetime p1 lifetime
      refund | trial | p1 | 2026-11    | preview_lifetime p1 lifetime, global_monthly - 2026-11
      """)
  void movesOnlyTheWindowsContainingTheNamedOne(
      String scope, String lane, String subject, String window, String expected) {
    List<CapKey> keys =
        AdjustmentWindow.keys(
            Lane.fromWireName(lane).orElseThrow(),
            subject,
            window,
            AdjustmentScope.fromWireName(scope).orElseThrow());

    assertEquals(
        Arrays.stream(expected.split(",\\s*"))
            .map(AdjustmentWindowTest::key)
            .sorted(BY_TEXT)
            .toList(),
        keys.stream().sorted(BY_TEXT).toList());
  }

  @ParameterizedTest(name = "window \"{0}\" is {1} at 2026-11-30T10:00Z")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      2026-11-30 | valid and begun
      2026-11-29 | valid and begun
      2026-11    | valid and begun
      2025-01    | valid and begun
      2026-12-01 | in the future
      2026-12    | in the future
      2026-13    | not a window
      2026-11-31 | not a window
      26-11-30   | not a window
      2026-11-30T00:00Z | not a window
      today      | not a window
      """)
  void aWindowIsADayOrAMonthThatHasBegun(String window, String verdict) {
    String actual =
        !AdjustmentWindow.isValid(window)
            ? "not a window"
            : AdjustmentWindow.isInTheFuture(window, NOW) ? "in the future" : "valid and begun";
    assertEquals(verdict, actual);
  }

  private static final java.util.Comparator<CapKey> BY_TEXT =
      java.util.Comparator.comparing(CapKey::toString);

  private static CapKey key(String text) {
    String[] parts = text.trim().split(" ");
    return new CapKey(
        CapName.fromWireName(parts[0]).orElseThrow(),
        parts[1].equals("-") ? null : parts[1],
        parts[2]);
  }
}
