package dev.spendgateway.upstream.failover;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigValueType;
import dev.spendgateway.policy.catalog.ModelCatalog;
import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.catalog.ModelKind;
import dev.spendgateway.policy.catalog.Provider;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The routing profiles of {@code conf/profiles.conf}, validated against the model catalog at start:
 * a bad profile stops the gateway with a message naming the profile and the key, never a 500 on the
 * first call.
 */
public final class RoutingProfiles {
  private static final String PATH = "profiles";

  /** What a profile gets for a key it leaves out (conf/profiles.conf says why each value). */
  static final String DEFAULTS_PATH = "profile-defaults";

  private final Map<String, RoutingProfile> byName;

  /** The catalog's lifecycle warning window ({@link ModelCatalog#warningDays()}). */
  private final long warningDays;

  private RoutingProfiles(Map<String, RoutingProfile> byName, long warningDays) {
    this.byName = Map.copyOf(byName);
    this.warningDays = warningDays;
  }

  /** Reads {@code profiles} and validates it against the catalog built from {@code models}. */
  public static RoutingProfiles fromConfig(Config config) {
    return fromConfig(config, ModelCatalog.fromMap(config.getConfig("models").root().unwrapped()));
  }

  /**
   * Reads {@code profiles} from {@code config} against an existing catalog.
   *
   * @throws IllegalArgumentException naming the profile and key when a profile is invalid: unknown
   *     model, primary not an OpenAI chat model, fallback not an Anthropic chat model, a required
   *     feature missing on either model, a context limit above a model's window
   */
  public static RoutingProfiles fromConfig(Config config, ModelCatalog catalog) {
    Config profiles = config.getConfig(PATH);
    Config defaults = config.getConfig(DEFAULTS_PATH);
    Map<String, RoutingProfile> byName = new TreeMap<>();
    for (String name : profiles.root().keySet()) {
      String path = PATH + "." + name;
      if (profiles.root().get(name).valueType() != ConfigValueType.OBJECT) {
        throw new IllegalArgumentException(path + " must be an object");
      }
      try {
        Config profile = profiles.getConfig(quoted(name)).withFallback(defaults);
        byName.put(name, read(name, profile, catalog));
      } catch (ConfigException e) {
        throw new IllegalArgumentException("profile '" + name + "': " + e.getMessage(), e);
      }
    }
    if (byName.isEmpty()) {
      throw new IllegalArgumentException(PATH + " must define at least one profile");
    }
    return new RoutingProfiles(byName, catalog.warningDays());
  }

  private static String quoted(String key) {
    return "\"" + key + "\"";
  }

  private static RoutingProfile read(String name, Config c, ModelCatalog catalog) {
    ModelInfo primary = model(name, "primary", c.getString("primary"), catalog, Provider.OPENAI);
    Optional<ModelInfo> fallback =
        c.hasPath("fallback")
            ? Optional.of(
                model(name, "fallback", c.getString("fallback"), catalog, Provider.ANTHROPIC))
            : Optional.empty();
    Set<String> features = new LinkedHashSet<>(c.getStringList("features"));
    long contextLimit =
        c.hasPath("context-limit")
            ? c.getLong("context-limit")
            : Math.min(
                primary.contextLimit(),
                fallback.map(ModelInfo::contextLimit).orElse(Long.MAX_VALUE));
    for (ModelInfo m : fallback.isPresent() ? List.of(primary, fallback.get()) : List.of(primary)) {
      for (String feature : features) {
        if (!m.hasFeature(feature)) {
          throw new IllegalArgumentException(
              "profile '"
                  + name
                  + "' requires feature '"
                  + feature
                  + "' but model '"
                  + m.name()
                  + "' does not have it (conf/models.conf features)");
        }
      }
      if (contextLimit > m.contextLimit()) {
        throw new IllegalArgumentException(
            "profile '"
                + name
                + "' context-limit "
                + contextLimit
                + " exceeds model '"
                + m.name()
                + "' context window "
                + m.contextLimit());
      }
    }
    if (contextLimit < 1) {
      throw new IllegalArgumentException("profile '" + name + "' context-limit must be positive");
    }
    Pool pool = Pool.fromWireName(c.getString("pool"));
    long defaultMaxTokens = c.getLong("default-max-tokens");
    if (defaultMaxTokens < 1) {
      throw new IllegalArgumentException(
          "profile '" + name + "' default-max-tokens must be positive");
    }
    return new RoutingProfile(
        name,
        primary,
        fallback,
        contextLimit,
        features,
        pool,
        defaultMaxTokens,
        dataClasses(name, c));
  }

  /**
   * {@code data-classes { restricted = [openai] }}: the providers the profile may use per class.
   */
  private static Map<String, Set<Provider>> dataClasses(String profile, Config c) {
    Config classes = c.getConfig("data-classes");
    Map<String, Set<Provider>> out = new TreeMap<>();
    for (String className : classes.root().keySet()) {
      Set<Provider> providers = java.util.EnumSet.noneOf(Provider.class);
      for (String p : classes.getStringList(quoted(className))) {
        try {
          providers.add(Provider.fromWireName(p));
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(
              "profile '"
                  + profile
                  + "' data-classes."
                  + className
                  + ": unknown provider '"
                  + p
                  + "' (openai, anthropic)");
        }
      }
      out.put(className, providers);
    }
    return out;
  }

  private static ModelInfo model(
      String profile, String key, String model, ModelCatalog catalog, Provider expected) {
    ModelInfo info =
        catalog
            .find(model)
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        "profile '"
                            + profile
                            + "' "
                            + key
                            + " model '"
                            + model
                            + "' is not in conf/models.conf"));
    if (info.provider() != expected || info.kind() != ModelKind.CHAT) {
      throw new IllegalArgumentException(
          "profile '"
              + profile
              + "' "
              + key
              + " model '"
              + model
              + "' must be a "
              + expected.wireName()
              + " chat model");
    }
    return info;
  }

  /** Every profile, by name (for start-up checks against other config). */
  public java.util.Collection<RoutingProfile> all() {
    return new TreeMap<>(byName).values();
  }

  public Optional<RoutingProfile> find(String name) {
    return Optional.ofNullable(byName.get(name));
  }

  /** Profile names, sorted: for the "unknown profile, choose one of …" answer. */
  public List<String> names() {
    return List.copyOf(new TreeMap<>(byName).keySet());
  }

  /** A profile model that is deprecated today, with the days left before its end of support. */
  public record LifecycleWarning(String profile, String model, Optional<Long> daysLeft) {}

  /**
   * Deprecated models used by profiles, and active ones within the catalog's warning window of
   * their end of support, for the start-up and daily warning (log + metric with days left). Retired
   * ones are not listed: the plan routes around them.
   */
  public List<LifecycleWarning> lifecycleWarnings(LocalDate today) {
    List<LifecycleWarning> out = new ArrayList<>();
    for (RoutingProfile p : new TreeMap<>(byName).values()) {
      List<ModelInfo> models = new ArrayList<>(List.of(p.primary()));
      p.fallback().ifPresent(models::add);
      for (ModelInfo m : models) {
        if (m.needsWarningOn(today, warningDays)) {
          out.add(new LifecycleWarning(p.name(), m.name(), m.daysOfSupportLeft(today)));
        }
      }
    }
    return out;
  }
}
