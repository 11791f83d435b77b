package dev.spendgateway.upstream.translate;

import com.fasterxml.jackson.databind.JsonNode;

/** Public door to the package-private {@link Json} helper for tests in other packages. */
public final class JsonForTests {
  private JsonForTests() {}

  public static JsonNode parse(String json) {
    return Json.parse(json);
  }
}
