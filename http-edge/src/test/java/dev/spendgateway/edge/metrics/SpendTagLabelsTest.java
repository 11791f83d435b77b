package dev.spendgateway.edge.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class SpendTagLabelsTest {
  private static final SpendTagLabels LISTED = SpendTagLabels.of(List.of("onboarding", "support"));

  @ParameterizedTest(name = "tag ''{0}'' is labelled {1}")
  @CsvSource(
      nullValues = "NONE",
      value = {
        "onboarding, onboarding", // listed: its own value
        "support,    support",
        "nightly,    other", // not listed: other
        "NONE,       none", // no tag: none
      })
  void aListedTagIsItsOwnLabelAnyOtherIsOtherAndNoTagIsNone(String tag, String label) {
    assertEquals(label, LISTED.labelOf(Optional.ofNullable(tag)));
  }

  @Test
  void howeverManyTagsCallersSendTheLabelHasTheListedValuesAndTwoMore() {
    Set<String> labels =
        IntStream.range(0, 10_000)
            .mapToObj(i -> LISTED.labelOf(i % 7 == 0 ? Optional.empty() : Optional.of("t" + i)))
            .collect(Collectors.toSet());
    labels.add(LISTED.labelOf(Optional.of("support")));
    assertEquals(Set.of("other", "none", "support"), labels);
  }

  @ParameterizedTest(name = "''{0}'' cannot be listed")
  @ValueSource(strings = {"other", "none", "a,b", "a b", ""})
  void theReservedValuesAndMalformedTagsCannotBeListed(String tag) {
    assertThrows(IllegalArgumentException.class, () -> SpendTagLabels.of(List.of(tag)));
  }
}
