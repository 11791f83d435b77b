package dev.spendgateway.policy;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.spendgateway.policy.catalog.ModelCatalog;
import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.request.PolicyLimits;
import dev.spendgateway.policy.request.RequestPolicy;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.Map;

/** Shared test data: the catalog (same content as conf/models.conf), limits, a fixed "today". */
public final class Fixtures {
  public static final ObjectMapper JSON = new ObjectMapper();

  /** A day when gpt-6-sol is deprecated and gpt-4.1 retired. */
  public static final LocalDate TODAY = LocalDate.of(2026, 11, 30);

  public static final PolicyLimits LIMITS = PolicyLimits.defaults();

  public static final ModelCatalog CATALOG = ModelCatalog.fromMap(catalogMap());

  public static final RequestPolicy POLICY = new RequestPolicy(CATALOG, LIMITS);

  private Fixtures() {}

  public static Map<String, Object> catalogMap() {
    try (InputStream in = Fixtures.class.getResourceAsStream("/models.json")) {
      return JSON.readValue(in, new TypeReference<Map<String, Object>>() {});
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static ModelInfo model(String name) {
    return CATALOG.find(name).orElseThrow();
  }

  /** JSON written with single quotes for readable table rows. */
  public static JsonNode json(String singleQuoted) {
    try {
      return JSON.readTree(singleQuoted.replace('\'', '"'));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static long sizeOf(JsonNode node) {
    return node.toString().getBytes(StandardCharsets.UTF_8).length;
  }
}
