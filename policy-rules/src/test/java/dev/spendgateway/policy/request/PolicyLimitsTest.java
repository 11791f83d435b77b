package dev.spendgateway.policy.request;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

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
    assertEquals(new PolicyLimits.UrlContent(false, false), d.urlContent());
  }

  static Stream<Arguments> urlContentSwitches() {
    return Stream.of(
        Arguments.of("absent: both off", Map.of(), false, false),
        Arguments.of("images on from a file", Map.of("images", true), true, false),
        Arguments.of("documents on from a file", Map.of("documents", true), false, true),
        Arguments.of("both on as -D text", Map.of("images", "true", "documents", "on"), true, true),
        Arguments.of(
            "both off, one as text", Map.of("images", "no", "documents", false), false, false));
  }

  @ParameterizedTest(name = "allow-url-content {0}")
  @MethodSource("urlContentSwitches")
  void urlContentSwitchesAreOptionalBooleans(
      String sentence, Map<String, Object> switches, boolean images, boolean documents) {
    PolicyLimits l = PolicyLimits.fromMap(Map.of("allow-url-content", switches));
    assertEquals(new PolicyLimits.UrlContent(images, documents), l.urlContent());
  }

  @Test
  void aMisspelledSwitchValueFailsAtStart() {
    assertThrows(
        IllegalArgumentException.class,
        () -> PolicyLimits.fromMap(Map.of("allow-url-content", Map.of("images", "sometimes"))));
    assertThrows(
        IllegalArgumentException.class,
        () -> PolicyLimits.fromMap(Map.of("allow-url-content", true)));
  }
}
