package dev.spendgateway.policy.access;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class LedgerIdTest {

  @ParameterizedTest(name = "''{0}'' valid={1}: {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "b1                 | true  | letters and digits",
        "acme.eu:shop_2-b   | true  | dots, colons, underscores and dashes",
        "a                  | true  | one character is enough",
        "a/../b             | false | a slash cannot be a URL path segment (and ../ walks paths)",
        "a/b                | false | a slash cannot be a URL path segment",
        "a+b                | false | a plus reads as a space in a query string",
        "a=b                | false | an equals sign splits a query parameter",
        "ops@acme           | false | an at sign means user-info in a URL",
        "a%2Fb              | false | a percent starts a URL escape",
        "a?b                | false | a question mark starts a query",
        "a#b                | false | a hash starts a fragment",
        "'a b'              | false | whitespace makes log lines ambiguous",
        "''                 | false | empty names nobody",
        "brändi             | false | non-ASCII letters look alike",
      })
  void theRule(String id, boolean valid, String reason) {
    assertEquals(valid, LedgerId.isValid(id), reason);
  }

  @Test
  void lengthIsCappedAtOneHundredTwentyEight() {
    assertEquals(true, LedgerId.isValid("x".repeat(LedgerId.MAX_LENGTH)));
    assertFalse(LedgerId.isValid("x".repeat(LedgerId.MAX_LENGTH + 1)));
  }

  @Test
  void nullIsNotAnId() {
    assertFalse(LedgerId.isValid(null));
  }

  @Test
  void controlCharactersAreRefused() {
    assertFalse(LedgerId.isValid("a\nb"));
    assertFalse(LedgerId.isValid("a\u0000b"));
  }
}
