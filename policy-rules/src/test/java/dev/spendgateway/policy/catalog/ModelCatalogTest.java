package dev.spendgateway.policy.catalog;

import static dev.spendgateway.policy.Fixtures.CATALOG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.policy.Fixtures;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ModelCatalogTest {

  @ParameterizedTest(
      name = "{0} is an {1} {2} model at {3}/{4} micros per M (cache {5}/{6}), {7}/min")
  @CsvSource({
    "gpt-6.1-sol,       OPENAI,    CHAT,          2000000, 10000000, 2000000, 200000, 0",
    "gpt-6.1-sol-mini,  OPENAI,    CHAT,           400000,  1600000,  400000,  40000, 0",
    "gpt-6-sol,         OPENAI,    CHAT,          1250000, 10000000, 1250000, 125000, 0",
    "gpt-4.1,           OPENAI,    CHAT,          2000000,  8000000, 2000000, 500000, 0",
    "claude-opus-5-5,   ANTHROPIC, CHAT,          4000000, 20000000, 5000000, 400000, 0",
    "claude-sonnet-5-5, ANTHROPIC, CHAT,          3000000, 15000000, 3750000, 300000, 0",
    "claude-haiku-5-5,  ANTHROPIC, CHAT,          1000000,  5000000, 1250000, 100000, 0",
    "gpt-6-transcribe,  OPENAI,    TRANSCRIPTION,       0,        0,       0,      0, 6000",
  })
  void seededModelsCarryTheirPrices(
      String name,
      Provider provider,
      ModelKind kind,
      long input,
      long output,
      long cacheWrite,
      long cacheRead,
      long perMinute) {
    ModelInfo m = CATALOG.find(name).orElseThrow();
    assertEquals(provider, m.provider());
    assertEquals(kind, m.kind());
    assertEquals(new Prices(input, output, cacheWrite, cacheRead, perMinute), m.prices());
  }

  @Test
  void exactlyThreeClaudeModelsAreAllowListed() {
    assertEquals(
        List.of("claude-haiku-5-5", "claude-opus-5-5", "claude-sonnet-5-5"),
        CATALOG.namesFor(Provider.ANTHROPIC, ModelKind.CHAT, Fixtures.TODAY));
  }

  @Test
  void anUnknownModelIsNotFound() {
    assertTrue(CATALOG.find("gpt-3.5-turbo").isEmpty());
    assertEquals(8, CATALOG.all().size());
  }

  @ParameterizedTest(name = "{0} on {1}: retired={2}, deprecated={3}")
  @CsvSource({
    "gpt-6.1-sol,     2026-11-30, false, false",
    "gpt-6-sol,       2026-11-30, false, true",
    "gpt-6-sol,       2027-02-28, false, true",
    "gpt-6-sol,       2027-03-01, true,  false",
    "gpt-4.1,         2026-01-01, true,  false",
    "gpt-4.1,         2026-11-30, true,  false",
  })
  void lifecycleFollowsConfigAndEndOfSupportDate(
      String name, LocalDate day, boolean retired, boolean deprecated) {
    ModelInfo m = CATALOG.find(name).orElseThrow();
    assertEquals(retired, m.isRetiredOn(day));
    assertEquals(deprecated, m.isDeprecatedOn(day));
  }

  @Test
  void anActiveModelPastItsEndOfSupportCountsAsRetired() {
    ModelInfo m =
        new ModelInfo(
            "x",
            Provider.OPENAI,
            ModelKind.CHAT,
            new Prices(1, 1, 1, 1, 0),
            10,
            Set.of("a"),
            Lifecycle.ACTIVE,
            LocalDate.of(2026, 1, 31));
    assertFalse(m.isRetiredOn(LocalDate.of(2026, 1, 31)));
    assertTrue(m.isRetiredOn(LocalDate.of(2026, 2, 1)));
    assertTrue(m.hasFeature("a"));
  }

  @Test
  void missingCachePricesDefaultToTheInputPrice() {
    ModelCatalog c =
        ModelCatalog.fromMap(
            Map.of(
                "m",
                Map.of(
                    "provider",
                    "openai",
                    "input-usd-per-million",
                    3,
                    "output-usd-per-million",
                    "4.5",
                    "context-limit",
                    1000)));
    ModelInfo m = c.find("m").orElseThrow();
    assertEquals(new Prices(3_000_000, 4_500_000, 3_000_000, 3_000_000, 0), m.prices());
    assertEquals(Lifecycle.ACTIVE, m.lifecycle());
    assertEquals(ModelKind.CHAT, m.kind());
  }

  @ParameterizedTest(name = "setting {0} to {1} fails naming it")
  @CsvSource({
    "provider,              mistral",
    "kind,                  embedding",
    "lifecycle,             sunset",
    "end-of-support,        next-year",
    "input-usd-per-million, 0.0000001",
    "input-usd-per-million, -1",
    "input-usd-per-million, two",
    "context-limit,         lots",
    "features,              web_search",
  })
  void aBadKeyFailsWithItsName(String key, String value) {
    Map<String, Object> model = new HashMap<>(validModel());
    model.put(key, value);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> ModelCatalog.fromMap(Map.of("m", model)));
    assertTrue(e.getMessage().contains(key) || e.getMessage().contains(value), e.getMessage());
  }

  @ParameterizedTest(name = "a model without {0} is refused")
  @CsvSource({"provider", "input-usd-per-million", "output-usd-per-million", "context-limit"})
  void aRequiredKeyMustBePresent(String key) {
    Map<String, Object> model = new HashMap<>(validModel());
    model.remove(key);
    assertThrows(IllegalArgumentException.class, () -> ModelCatalog.fromMap(Map.of("m", model)));
  }

  @ParameterizedTest(name = "model id \"{0}\" is refused: a reservation could not journal it")
  @ValueSource(strings = {"gpt 6", "gpt,6", "gpt\"6", "modèle"})
  void aModelIdTheJournalCannotNameStopsTheStart(String id) {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> ModelCatalog.fromMap(Map.of(id, validModel())));
    assertTrue(e.getMessage().contains(id) && e.getMessage().contains("model id"), e.getMessage());
  }

  @Test
  void shapeErrorsAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> ModelCatalog.fromMap(Map.of("m", "x")));
    Map<String, Object> model = new HashMap<>(validModel());
    model.put("provider", 7);
    assertThrows(IllegalArgumentException.class, () -> ModelCatalog.fromMap(Map.of("m", model)));
    model.put("provider", "openai");
    model.put("features", List.of(1));
    assertThrows(IllegalArgumentException.class, () -> ModelCatalog.fromMap(Map.of("m", model)));
    Map<String, Object> audio =
        Map.of("provider", "openai", "kind", "transcription", "context-limit", 1);
    assertThrows(IllegalArgumentException.class, () -> ModelCatalog.fromMap(Map.of("a", audio)));
  }

  @Test
  void aModelListedTwiceIsRefused() {
    ModelInfo m = CATALOG.find("gpt-6.1-sol").orElseThrow();
    assertThrows(IllegalArgumentException.class, () -> ModelCatalog.of(List.of(m, m)));
    assertEquals(1, ModelCatalog.of(List.of(m)).all().size());
  }

  @Test
  void negativePricesAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> new Prices(-1, 0, 0, 0, 0));
  }

  @ParameterizedTest(name = "wire name {0} is unknown to {1}")
  @CsvSource({"mistral, provider", "embedding, kind", "sunset, lifecycle"})
  void unknownWireNamesAreRefused(String name, String what) {
    assertThrows(
        IllegalArgumentException.class,
        () -> {
          switch (what) {
            case "provider" -> Provider.fromWireName(name);
            case "kind" -> ModelKind.fromWireName(name);
            default -> Lifecycle.fromWireName(name);
          }
        });
  }

  private static Map<String, Object> validModel() {
    return Map.of(
        "provider", "openai",
        "input-usd-per-million", "1",
        "output-usd-per-million", "2",
        "context-limit", 1000);
  }

  @ParameterizedTest(name = "{0}-model ending 2026-12-20, on {1}, window {2} days: warned={3}")
  @CsvSource({
    "ACTIVE,     2026-11-19, 30, false",
    "ACTIVE,     2026-11-20, 30, true",
    "ACTIVE,     2026-12-20, 30, true",
    "ACTIVE,     2026-12-21, 30, false",
    "ACTIVE,     2026-12-19, 0,  false",
    "DEPRECATED, 2026-01-01, 0,  true",
    "RETIRED,    2026-12-01, 30, false",
  })
  void anActiveModelIsWarnedWithinTheWindowOfItsEndOfSupport(
      Lifecycle lifecycle, LocalDate day, long window, boolean warned) {
    ModelInfo m =
        new ModelInfo(
            "x",
            Provider.OPENAI,
            ModelKind.CHAT,
            new Prices(1, 1, 1, 1, 0),
            10,
            Set.of(),
            lifecycle,
            LocalDate.parse("2026-12-20"));
    assertEquals(warned, m.needsWarningOn(day, window));
    assertEquals(warned, ModelCatalog.of(List.of(m)).withWarningDays(window).needsWarning(m, day));
  }
}
