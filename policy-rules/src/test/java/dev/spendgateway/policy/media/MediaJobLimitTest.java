package dev.spendgateway.policy.media;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class MediaJobLimitTest {

  @ParameterizedTest(
      name = "with a limit of {0}, an account with {1} unfinished jobs may submit: {2}")
  @CsvSource({
    "5, 0, true",
    "5, 4, true",
    "5, 5, false",
    "5, 9, false",
    "1, 0, true",
    "1, 1, false"
  })
  void anAccountMaySubmitWhileBelowItsLimit(int limit, int unfinished, boolean admitted) {
    assertEquals(admitted, new MediaJobLimit(limit).admitsAnother(unfinished));
  }

  @ParameterizedTest(name = "a limit of {0} is refused")
  @ValueSource(ints = {0, -1})
  void aLimitBelowOneIsAConfigError(int limit) {
    assertThrows(IllegalArgumentException.class, () -> new MediaJobLimit(limit));
  }
}
