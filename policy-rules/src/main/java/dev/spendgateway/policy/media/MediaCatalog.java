package dev.spendgateway.policy.media;

import dev.spendgateway.policy.config.ConfigMaps;
import dev.spendgateway.policy.money.Micros;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The video models the gateway will submit jobs for ({@code media-models} in {@code
 * conf/models.conf}). Like the text catalog it is the allow-list. Video models live in their own
 * block because they are served by their own upstream (the media provider) and are priced per
 * second of output and size, not per token.
 */
public final class MediaCatalog {
  private static final String PATH = "media-models";

  private final Map<String, MediaModel> models;

  private MediaCatalog(Map<String, MediaModel> models) {
    this.models = Map.copyOf(models);
  }

  public static MediaCatalog of(Collection<MediaModel> models) {
    Map<String, MediaModel> byName = new TreeMap<>();
    for (MediaModel m : models) {
      if (byName.put(m.name(), m) != null) {
        throw new IllegalArgumentException("media model listed twice: " + m.name());
      }
    }
    return new MediaCatalog(byName);
  }

  public static MediaCatalog empty() {
    return new MediaCatalog(Map.of());
  }

  /**
   * Builds the catalog from the unwrapped {@code media-models} object: model id → {@code
   * usd-per-second {size = "price"}} and {@code seconds = [4, 8, 12]}. Fails naming the bad key.
   */
  public static MediaCatalog fromMap(Map<String, Object> root) {
    Map<String, MediaModel> byName = new TreeMap<>();
    for (String name : root.keySet()) {
      Map<String, Object> m = ConfigMaps.object(root, name, PATH);
      String path = PATH + ".\"" + name + "\"";
      Map<String, Object> prices = ConfigMaps.object(m, "usd-per-second", path);
      Map<String, Long> bySize = new LinkedHashMap<>();
      for (String size : prices.keySet()) {
        BigDecimal usd = ConfigMaps.decimal(prices, size, path + ".usd-per-second").orElseThrow();
        try {
          bySize.put(size, Micros.ofUsdExact(usd));
        } catch (ArithmeticException e) {
          throw new IllegalArgumentException(
              path + ".usd-per-second." + size + " has more than six decimals: " + usd);
        }
      }
      List<Integer> seconds = new ArrayList<>();
      Object listed = m.get("seconds");
      if (!(listed instanceof List<?> list) || list.isEmpty()) {
        throw new IllegalArgumentException(path + ".seconds must list the allowed clip lengths");
      }
      for (Object s : list) {
        try {
          int n = new BigDecimal(s.toString()).intValueExact();
          if (n <= 0) {
            throw new NumberFormatException();
          }
          seconds.add(n);
        } catch (NumberFormatException | ArithmeticException e) {
          throw new IllegalArgumentException(path + ".seconds must list whole seconds > 0");
        }
      }
      byName.put(name, new MediaModel(name, bySize, seconds));
    }
    return new MediaCatalog(byName);
  }

  public Optional<MediaModel> find(String model) {
    return Optional.ofNullable(models.get(model));
  }

  /** Every model, sorted by name. */
  public List<MediaModel> all() {
    return List.copyOf(new TreeMap<>(models).values());
  }

  public List<String> names() {
    return List.copyOf(new TreeMap<>(models).keySet());
  }
}
