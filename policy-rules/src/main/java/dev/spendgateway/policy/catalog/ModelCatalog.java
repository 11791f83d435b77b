package dev.spendgateway.policy.catalog;

import dev.spendgateway.policy.access.SpendModel;
import dev.spendgateway.policy.config.ConfigMaps;
import dev.spendgateway.policy.money.Micros;
import java.math.BigDecimal;
import java.time.LocalDate;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Every model the gateway will call, read from {@code conf/models.conf}. The catalog is the
 * allow-list: a model that is not here is refused.
 */
public final class ModelCatalog {
  private static final String PATH = "models";

  private final Map<String, ModelInfo> models;

  /** An active model this close to its end of support is warned like a deprecated one. */
  private final long warningDays;

  private ModelCatalog(Map<String, ModelInfo> models) {
    this(models, 0);
  }

  private ModelCatalog(Map<String, ModelInfo> models, long warningDays) {
    if (warningDays < 0) {
      throw new IllegalArgumentException(
          "model-lifecycle.warning-days must be >= 0, was " + warningDays);
    }
    this.models = Map.copyOf(models);
    this.warningDays = warningDays;
  }

  /**
   * This catalog, warning about an active model from {@code days} before its end of support ({@code
   * model-lifecycle.warning-days}); 0 warns on the last day only.
   */
  public ModelCatalog withWarningDays(long days) {
    return new ModelCatalog(models, days);
  }

  public long warningDays() {
    return warningDays;
  }

  /** Whether a call using {@code model} today raises the lifecycle warning (and its metric). */
  public boolean needsWarning(ModelInfo model, LocalDate today) {
    return model.needsWarningOn(today, warningDays);
  }

  public static ModelCatalog of(Collection<ModelInfo> models) {
    Map<String, ModelInfo> byName = new TreeMap<>();
    for (ModelInfo m : models) {
      if (byName.put(m.name(), m) != null) {
        throw new IllegalArgumentException("model listed twice: " + m.name());
      }
    }
    return new ModelCatalog(byName);
  }

  /**
   * Builds the catalog from the unwrapped {@code models} object of {@code conf/models.conf}: {@code
   * ConfigFactory.load().getConfig("models").root().unwrapped()} — a map from model id to that
   * model's keys (documented in the conf file). Fails with a message naming the bad key.
   */
  public static ModelCatalog fromMap(Map<String, Object> root) {
    Map<String, ModelInfo> byName = new TreeMap<>();
    for (String name : root.keySet()) {
      byName.put(name, readModel(name, ConfigMaps.object(root, name, PATH)));
    }
    return new ModelCatalog(byName);
  }

  private static ModelInfo readModel(String name, Map<String, Object> m) {
    String path = PATH + ".\"" + name + "\"";
    // Every reservation is journaled with its model's id under this rule, and the ledger refuses a
    // malformed one: an id outside it would refuse every call to that model, so it stops the start.
    if (!SpendModel.isValid(name)) {
      throw new IllegalArgumentException(
          path + ": a model id must be " + SpendModel.DESCRIPTION + " (it is journaled as is)");
    }
    Provider provider = Provider.fromWireName(ConfigMaps.requiredString(m, "provider", path));
    ModelKind kind =
        ModelKind.fromWireName(
            ConfigMaps.string(m, "kind", path).orElse(ModelKind.CHAT.wireName()));
    Prices prices = kind == ModelKind.CHAT ? chatPrices(m, path) : audioPrices(m, path);
    long contextLimit =
        ConfigMaps.wholeNumber(m, "context-limit", path)
            .orElseThrow(() -> new IllegalArgumentException(path + ".context-limit is required"));
    List<String> features = ConfigMaps.strings(m, "features", path);
    Lifecycle lifecycle =
        Lifecycle.fromWireName(
            ConfigMaps.string(m, "lifecycle", path).orElse(Lifecycle.ACTIVE.wireName()));
    LocalDate endOfSupport = ConfigMaps.date(m, "end-of-support", path).orElse(null);
    return new ModelInfo(
        name,
        provider,
        kind,
        prices,
        contextLimit,
        new LinkedHashSet<>(features),
        lifecycle,
        endOfSupport);
  }

  private static Prices chatPrices(Map<String, Object> m, String path) {
    long input = requiredPrice(m, "input-usd-per-million", path);
    long output = requiredPrice(m, "output-usd-per-million", path);
    long cacheWrite = optionalPrice(m, "cache-write-usd-per-million", path, input);
    long cacheRead = optionalPrice(m, "cache-read-usd-per-million", path, input);
    return new Prices(input, output, cacheWrite, cacheRead, 0);
  }

  private static Prices audioPrices(Map<String, Object> m, String path) {
    return new Prices(0, 0, 0, 0, requiredPrice(m, "usd-per-minute", path));
  }

  private static long requiredPrice(Map<String, Object> m, String key, String path) {
    BigDecimal usd =
        ConfigMaps.decimal(m, key, path)
            .orElseThrow(() -> new IllegalArgumentException(path + "." + key + " is required"));
    return toMicros(usd, path + "." + key);
  }

  private static long optionalPrice(Map<String, Object> m, String key, String path, long fallback) {
    return ConfigMaps.decimal(m, key, path)
        .map(usd -> toMicros(usd, path + "." + key))
        .orElse(fallback);
  }

  private static long toMicros(BigDecimal usd, String where) {
    try {
      return Micros.ofUsdExact(usd);
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(where + " has more than six decimals: " + usd);
    }
  }

  public Optional<ModelInfo> find(String model) {
    return Optional.ofNullable(models.get(model));
  }

  /** Every model, sorted by name. */
  public List<ModelInfo> all() {
    return List.copyOf(new TreeMap<>(models).values());
  }

  /**
   * Models of one provider and kind, sorted by name; used in refusal messages ("choose one of
   * ...").
   */
  public List<String> namesFor(Provider provider, ModelKind kind, LocalDate today) {
    return new TreeMap<>(models)
        .values().stream()
            .filter(m -> m.provider() == provider && m.kind() == kind && !m.isRetiredOn(today))
            .map(ModelInfo::name)
            .toList();
  }
}
