package dev.spendgateway.policy.access;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SpendModelTest {

  @ParameterizedTest(name = "''{0}'' valid={1}: {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "gpt-6.1-sol           | true  | a catalog model",
        "openai                | true  | a provider",
        "ft:gpt-4o:org:abc     | true  | a fine-tuned model's colons",
        "org/model@2024+eu     | true  | slashes, at signs and pluses",
        "a,b                   | false | a comma would split a CSV row",
        "a\"b                  | false | a quote would end a JSON string",
        "'a b'                 | false | whitespace",
        "''                    | false | empty names no model",
        "modèle                | false | non-ASCII letters look alike",
      })
  void theRule(String name, boolean valid, String reason) {
    assertEquals(valid, SpendModel.isValid(name), reason);
  }

  @Test
  void lengthIsCappedAndNullIsNoName() {
    assertTrue(SpendModel.isValid("m".repeat(SpendModel.MAX_LENGTH)));
    assertFalse(SpendModel.isValid("m".repeat(SpendModel.MAX_LENGTH + 1)));
    assertFalse(SpendModel.isValid(null));
    assertFalse(SpendModel.isValid("a\nb"));
  }
}
