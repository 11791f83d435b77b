package dev.spendgateway.upstream.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.policy.catalog.ModelCatalog;
import java.time.Duration;
import java.time.LocalDate;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RoutingProfilesTest {
  private static final Config SHIPPED = Confs.shipped();
  private static final ModelCatalog CATALOG =
      ModelCatalog.fromMap(SHIPPED.getConfig("models").root().unwrapped());

  /** A test's own profiles over the shipped profile-defaults (nothing else of the shipped conf). */
  private static Config profiles(String hocon) {
    return ConfigFactory.parseString(hocon)
        .withFallback(SHIPPED.withOnlyPath(RoutingProfiles.DEFAULTS_PATH));
  }

  @Test
  void theShippedProfilesAreValid() {
    RoutingProfiles profiles = RoutingProfiles.fromConfig(SHIPPED);
    assertEquals(List.of("fast-summary", "long-draft", "structured-analysis"), profiles.names());
    RoutingProfile fast = profiles.find("fast-summary").orElseThrow();
    assertEquals("gpt-6.1-sol-mini", fast.primary().name());
    assertEquals("claude-haiku-5-5", fast.fallback().orElseThrow().name());
    assertEquals(Set.of("streaming"), fast.features());
    assertEquals(Pool.INTERACTIVE, fast.pool());
    assertEquals(200_000, fast.contextLimit());
    assertEquals(Pool.BATCH, profiles.find("structured-analysis").orElseThrow().pool());
    assertEquals(Optional.empty(), profiles.find("gpt-6.1-sol"));
  }

  @Test
  void theShippedFailoverSettingsAreRead() {
    FailoverSettings s = FailoverSettings.fromConfig(SHIPPED);
    assertEquals(
        new AttemptBudget.Limits(4, Duration.ofSeconds(30)), s.budgets().get(Pool.INTERACTIVE));
    assertEquals(new AttemptBudget.Limits(8, Duration.ofMinutes(10)), s.budgets().get(Pool.BATCH));
    assertEquals(Duration.ofSeconds(20), s.retryPolicy().maxRetryAfter());
    assertEquals(Optional.empty(), s.modelGoneOpenFor());
    assertEquals(200, s.pools().pools().get(Pool.INTERACTIVE).queueSize());
  }

  @Test
  void modelGoneOpenForMayBeADuration() {
    Config c = ConfigFactory.parseString("failover.model-gone-open-for = 1h").withFallback(SHIPPED);
    assertEquals(
        Optional.of(Duration.ofHours(1)), FailoverSettings.fromConfig(c).modelGoneOpenFor());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          an unknown primary is named                  | p { primary = "gpt-9", fallback = "claude-haiku-5-5" }                          | profile 'p' primary model 'gpt-9' is not in conf/models.conf
          an unknown fallback is named                 | p { primary = "gpt-6.1-sol", fallback = "claude-9" }                            | profile 'p' fallback model 'claude-9' is not in conf/models.conf
          a Claude primary is refused                  | p { primary = "claude-haiku-5-5" }                                                | profile 'p' primary model 'claude-haiku-5-5' must be a openai chat model
          an OpenAI fallback is refused                | p { primary = "gpt-6.1-sol", fallback = "gpt-6.1-sol-mini" }                     | profile 'p' fallback model 'gpt-6.1-sol-mini' must be a anthropic chat model
          a transcription primary is refused           | p { primary = "gpt-6-transcribe" }                                                | profile 'p' primary model 'gpt-6-transcribe' must be a openai chat model
          a feature the fallback lacks is refused      | p { primary = "gpt-6.1-sol", fallback = "claude-haiku-5-5", features = [json_schema] } | profile 'p' requires feature 'json_schema' but model 'claude-haiku-5-5' does not have it
          a context limit beyond a model is refused    | p { primary = "gpt-6.1-sol", fallback = "claude-haiku-5-5", context-limit = 300000 }  | profile 'p' context-limit 300000 exceeds model 'claude-haiku-5-5' context window 200000
          an unknown pool is refused                   | p { primary = "gpt-6.1-sol", pool = urgent }                                      | unknown pool 'urgent'
          a missing primary is named                   | p { fallback = "claude-haiku-5-5" }                                               | profile 'p':
          """)
  void aBadProfileStopsTheStartNamingIt(String what, String profiles, String message) {
    Config c = profiles("profiles { " + profiles + " }");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> RoutingProfiles.fromConfig(c, CATALOG));
    assertTrue(e.getMessage().contains(message), what + ": " + e.getMessage());
  }

  @Test
  void aProfileLeavingKeysOutGetsTheConfiguredDefaults() {
    Config c = profiles("profiles { solo { primary = \"gpt-6.1-sol\" } }");
    RoutingProfile solo = RoutingProfiles.fromConfig(c, CATALOG).find("solo").orElseThrow();
    Config defaults = SHIPPED.getConfig(RoutingProfiles.DEFAULTS_PATH);
    assertEquals(Set.copyOf(defaults.getStringList("features")), solo.features());
    assertEquals(Pool.fromWireName(defaults.getString("pool")), solo.pool());
    assertEquals(defaults.getLong("default-max-tokens"), solo.defaultMaxTokens());
    assertEquals(Optional.empty(), solo.narrowingFor("internal"));
  }

  @Test
  void withoutAFallbackTheContextLimitDefaultsToThePrimaryWindow() {
    Config c = profiles("profiles { solo { primary = \"gpt-6.1-sol\" } }");
    RoutingProfile solo = RoutingProfiles.fromConfig(c, CATALOG).find("solo").orElseThrow();
    assertEquals(Optional.empty(), solo.fallback());
    assertEquals(400_000, solo.contextLimit());
    assertEquals(4096, solo.defaultMaxTokens());
  }

  @Test
  void deprecatedProfileModelsAreWarnedWithDaysLeft() {
    Config c = profiles("profiles { old { primary = \"gpt-6-sol\" } }");
    assertEquals(
        List.of(new RoutingProfiles.LifecycleWarning("old", "gpt-6-sol", Optional.of(90L))),
        RoutingProfiles.fromConfig(c, CATALOG).lifecycleWarnings(LocalDate.parse("2026-11-30")));
  }

  /** The shipped catalog plus an active model whose end of support is announced for 2026-12-20. */
  private static ModelCatalog catalogWithEndingModel(long warningDays) {
    Config models =
        ConfigFactory.parseString(
                "models { \"gpt-6.1-sol-old\" { provider = openai, input-usd-per-million = \"1\", output-usd-per-million = \"2\","
                    + " context-limit = 400000, lifecycle = active, end-of-support = \"2026-12-20\" } }")
            .withFallback(SHIPPED);
    return ModelCatalog.fromMap(models.getConfig("models").root().unwrapped())
        .withWarningDays(warningDays);
  }

  @ParameterizedTest(name = "on {0} with a {1}-day window: warned {2}")
  @CsvSource({
    "2026-11-19, 30, false",
    "2026-11-20, 30, true",
    "2026-12-19, 30, true",
    "2026-12-20, 30, true",
    "2026-12-21, 30, false",
    "2026-12-19, 0,  false",
    "2026-12-20, 0,  true",
  })
  void anActiveModelNearItsEndOfSupportIsWarnedLikeADeprecatedOne(
      String day, long window, boolean warned) {
    Config c = profiles("profiles { soon { primary = \"gpt-6.1-sol-old\" } }");
    LocalDate today = LocalDate.parse(day);
    List<RoutingProfiles.LifecycleWarning> expected =
        warned
            ? List.of(
                new RoutingProfiles.LifecycleWarning(
                    "soon",
                    "gpt-6.1-sol-old",
                    Optional.of(
                        java.time.temporal.ChronoUnit.DAYS.between(
                            today, LocalDate.parse("2026-12-20")))))
            : List.of();
    assertEquals(
        expected,
        RoutingProfiles.fromConfig(c, catalogWithEndingModel(window)).lifecycleWarnings(today));
  }

  @Test
  void aProfileMayNarrowADataClass() {
    Config c =
        profiles(
            "profiles { p { primary = \"gpt-6.1-sol\", fallback = \"claude-opus-5-5\","
                + " data-classes { internal = [openai] } } }");
    RoutingProfile p = RoutingProfiles.fromConfig(c, CATALOG).find("p").orElseThrow();
    assertEquals(
        Optional.of(Set.of(dev.spendgateway.policy.catalog.Provider.OPENAI)),
        p.narrowingFor("internal"));
    assertEquals(Optional.empty(), p.narrowingFor("public"));
  }

  @Test
  void aNarrowingNamingAnUnknownProviderFailsAtStart() {
    Config c =
        profiles(
            "profiles { p { primary = \"gpt-6.1-sol\", data-classes { internal = [gemini] } } }");
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> RoutingProfiles.fromConfig(c, CATALOG));
    assertTrue(
        e.getMessage().contains("profile 'p' data-classes.internal: unknown provider 'gemini'"),
        e.getMessage());
  }
}
