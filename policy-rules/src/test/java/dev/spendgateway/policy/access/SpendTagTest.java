package dev.spendgateway.policy.access;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SpendTagTest {

  @ParameterizedTest(name = "''{0}'' valid={1}: {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "onboarding            | true  | letters",
        "support.triage_v2-eu  | true  | dots, underscores and dashes",
        "7                     | true  | one character is enough",
        "a:b                   | false | a colon is a brand id's character, not a tag's",
        "a/b                   | false | a slash",
        "a,b                   | false | a comma would split a CSV row",
        "a\"b                  | false | a quote would end a label value",
        "'a b'                 | false | whitespace",
        "''                    | false | empty names no workflow",
        "étape                 | false | non-ASCII letters look alike",
      })
  void theRule(String tag, boolean valid, String reason) {
    assertEquals(valid, SpendTag.isValid(tag), reason);
  }

  @Test
  void lengthIsCappedAtSixtyFour() {
    assertTrue(SpendTag.isValid("t".repeat(SpendTag.MAX_LENGTH)));
    assertFalse(SpendTag.isValid("t".repeat(SpendTag.MAX_LENGTH + 1)));
  }

  @Test
  void nullAndControlCharactersAreNotTags() {
    assertFalse(SpendTag.isValid(null));
    assertFalse(SpendTag.isValid("a\nb"));
  }
}
