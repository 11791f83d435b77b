package dev.spendgateway.policy.request;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PolicyLimitsTest {

  @Test
  void defaultsAreTheSpecNumbers() {
    PolicyLimits d = PolicyLimits.defaults();
    assertEquals(4_194_304, d.maxBodyBytes());
    assertEquals(1, d.minMessages());
    assertEquals(12, d.maxMessages());
    assertEquals(64_000, d.anthropicMaxTokens());
    assertEquals(32_000, d.openAiMaxTokens());
    assertEquals(8, d.webSearchMaxUses());
    assertEquals(10_000, d.webSearchMicrosPerUse());
    assertEquals(26_214_400, d.transcriptionMaxFileBytes());
    assertEquals(3, d.bytesPerToken());
  }

  @Test
  void anOverrideChangesOnlyItsKey() {
    PolicyLimits l =
        PolicyLimits.fromMap(Map.of("max-messages", 20, "web-search-usd-per-use", "0.025"));
    assertEquals(20, l.maxMessages());
    assertEquals(25_000, l.webSearchMicrosPerUse());
    assertEquals(64_000, l.anthropicMaxTokens());
  }

  @ParameterizedTest(name = "{0} = {1} is refused")
  @CsvSource({
    "max-body-bytes,         0",
    "max-messages,           0",
    "bytes-per-token,        0",
    "web-search-usd-per-use, 0.0000001",
    "web-search-usd-per-use, free",
    "max-choices,            1.5",
  })
  void outOfRangeValuesAreRefused(String key, String value) {
    assertThrows(IllegalArgumentException.class, () -> PolicyLimits.fromMap(Map.of(key, value)));
  }
}
