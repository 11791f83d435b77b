package dev.spendgateway.upstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.policy.catalog.Provider;
import java.io.File;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class UpstreamSettingsTest {

  /** The shipped file, resolved against the test's environment. */
  static Config shippedConfig() {
    return ConfigFactory.parseFile(new File("../conf/providers.conf")).resolve();
  }

  @Test
  void theShippedConfigParsesWithItsDocumentedDefaults() {
    UpstreamSettings s = UpstreamSettings.fromConfig(shippedConfig());
    assertEquals(Duration.ofSeconds(30), s.drainTimeout());
    assertEquals(16L * 1024 * 1024, s.maxResponseBytes());
    assertEquals(4 * 1024 * 1024, s.sseLimits().maxLineBytes());
    ProviderSettings anthropic = s.provider(Provider.ANTHROPIC);
    assertEquals("2023-06-01", anthropic.anthropicVersion());
    assertEquals(Duration.ofSeconds(600), anthropic.responseStartTimeout());
    assertEquals(1024, s.provider(Provider.OPENAI).maxOpenRequests());
    if (System.getenv("OPENAI_BASE_URL") == null) {
      assertEquals("https://api.openai.com", s.openai().baseUrl());
    }
  }

  @Test
  void overridesReplaceDefaults() {
    Config overrides =
        ConfigFactory.parseMap(
            Map.of(
                "providers.anthropic.base-url", "http://127.0.0.1:9999/",
                "providers.anthropic.api-key", "sk-from-env"));
    UpstreamSettings s = UpstreamSettings.fromConfig(overrides.withFallback(shippedConfig()));
    assertEquals("http://127.0.0.1:9999", s.anthropic().baseUrl());
    assertFalse(s.anthropic().isTls());
    assertEquals("sk-from-env", s.anthropic().apiKey().orElseThrow().reveal());
  }

  @Test
  void printingTheSettingsNeverShowsAKey() {
    Config overrides = ConfigFactory.parseMap(Map.of("providers.openai.api-key", "sk-very-secret"));
    UpstreamSettings s = UpstreamSettings.fromConfig(overrides.withFallback(shippedConfig()));
    assertFalse(s.toString().contains("sk-very-secret"));
  }

  @Test
  void anIdleTimeoutShorterThanTheResponseStartTimeoutIsRefused() {
    Config overrides = ConfigFactory.parseMap(Map.of("providers.openai.idle-timeout", "10s"));
    assertThrows(
        IllegalArgumentException.class,
        () -> UpstreamSettings.fromConfig(overrides.withFallback(shippedConfig())));
  }

  @Test
  void maxOpenRequestsMustBeAPowerOfTwo() {
    Config overrides = ConfigFactory.parseMap(Map.of("providers.openai.max-open-requests", 1000));
    assertThrows(
        IllegalArgumentException.class,
        () -> UpstreamSettings.fromConfig(overrides.withFallback(shippedConfig())));
  }

  @Test
  void aBaseUrlWithUserInfoIsRefused() {
    Config overrides =
        ConfigFactory.parseMap(
            Map.of("providers.openai.base-url", "https://user:pw@api.openai.com"));
    assertThrows(
        IllegalArgumentException.class,
        () -> UpstreamSettings.fromConfig(overrides.withFallback(shippedConfig())));
  }
}
