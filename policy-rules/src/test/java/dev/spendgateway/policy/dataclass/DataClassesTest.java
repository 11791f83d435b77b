package dev.spendgateway.policy.dataclass;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.policy.catalog.Provider;
import java.io.File;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DataClassesTest {
  private static final File CONF_DIR = new File(System.getProperty("gateway.conf.dir", "../conf"));

  /** The shipped conf/data-classes.conf, read the way the edge reads it. */
  private static final DataClasses SHIPPED =
      DataClasses.fromMap(
          ConfigFactory.parseFile(new File(CONF_DIR, "data-classes.conf"))
              .resolve()
              .getConfig("data-classes")
              .root()
              .unwrapped());

  @ParameterizedTest(name = "a call carrying ''{0}'' to {1}: {2}")
  @CsvSource(
      nullValues = "none",
      value = {
        "none,       openai,    allowed",
        "none,       anthropic, allowed",
        "public,     openai,    allowed",
        "public,     anthropic, allowed",
        "internal,   anthropic, allowed",
        "restricted, openai,    allowed",
        "restricted, anthropic, forbidden",
      })
  void aDirectRouteServesOnlyProvidersTheClassAllows(
      String header, String provider, String expected) {
    DataClasses.Resolution r = SHIPPED.resolve(Optional.ofNullable(header));
    DataClass c = assertInstanceOf(DataClasses.Known.class, r).dataClass();
    DataClasses.Direct d = DataClasses.direct(c, Provider.fromWireName(provider));
    assertEquals(expected, d instanceof DataClasses.Allowed ? "allowed" : "forbidden");
  }

  @Test
  void aForbiddenCallSaysWhereTheClassMayGo() {
    DataClass restricted = SHIPPED.find("restricted").orElseThrow();
    DataClasses.Forbidden f =
        assertInstanceOf(
            DataClasses.Forbidden.class, DataClasses.direct(restricted, Provider.ANTHROPIC));
    assertEquals(
        "data class 'restricted' may not be sent to anthropic; it may go to openai", f.message());
  }

  @ParameterizedTest(name = "header ''{0}'' is refused")
  @CsvSource({"secret", "RESTRICTED", "'restricted '", "''"})
  void anUnknownClassIsRefusedNotMappedToTheDefault(String header) {
    DataClasses.Unknown u =
        assertInstanceOf(DataClasses.Unknown.class, SHIPPED.resolve(Optional.of(header)));
    assertEquals("x-data-class must be one of internal, public, restricted", u.message());
  }

  @Test
  void theShippedDefaultIsInternal() {
    assertEquals("internal", SHIPPED.defaultClass().name());
    assertEquals(List.of("internal", "public", "restricted"), SHIPPED.names());
  }

  @ParameterizedTest(name = "class {0} narrowed by the profile to [{1}] -> [{2}]")
  @CsvSource(
      nullValues = "none",
      value = {
        "openai anthropic, none,             openai anthropic",
        "openai anthropic, openai,           openai",
        "openai,           openai anthropic, openai",
        "openai,           anthropic,        ''",
      })
  void aProfileOnlyNarrowsAClass(String classProviders, String narrowing, String expected) {
    DataClass c = new DataClass("c", providers(classProviders));
    Optional<Set<Provider>> n = Optional.ofNullable(narrowing).map(DataClassesTest::providers);
    assertEquals(providers(expected), c.narrowedTo(n));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "a default naming no class | default = nope, classes { a = [openai] } | data-classes.default names 'nope'",
        "a class without providers | default = a, classes { a = [] } | data-classes.classes.a must allow at least one provider",
        "an unknown provider | default = a, classes { a = [gemini] } | data-classes.classes.a: unknown provider 'gemini'",
        "no classes at all | default = a, classes {} | data-classes.classes must define at least one class",
        "a name with capitals | default = A, classes { A = [openai] } | class name 'A' must be",
      })
  void aBadConfigFailsAtStartNamingTheKey(String sentence, String hocon, String message) {
    Config c = ConfigFactory.parseString(hocon);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> DataClasses.fromMap(c.root().unwrapped()));
    assertTrue(e.getMessage().contains(message), e.getMessage());
  }

  @Test
  void permissiveAllowsEveryProvider() {
    DataClass c = DataClasses.permissive().defaultClass();
    assertEquals(EnumSet.allOf(Provider.class), c.providers());
  }

  private static Set<Provider> providers(String names) {
    if (names.isBlank()) {
      return Set.of();
    }
    return Arrays.stream(names.trim().split("\\s+"))
        .map(Provider::fromWireName)
        .collect(Collectors.toSet());
  }
}
