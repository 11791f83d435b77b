package dev.spendgateway.policy.dataclass;

import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.config.ConfigMaps;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The data classes of {@code conf/data-classes.conf} and the two rules they drive. Pure.
 *
 * <ul>
 *   <li>{@link #resolve}: the class a request carries: its {@code x-data-class} header, or the
 *       configured default when it sends none. An unknown name is refused, never mapped to the
 *       default: a caller that labelled its data did so for a reason, and a typo must not send
 *       restricted data where public data may go.
 *   <li>{@link #direct}: a provider route may serve the call only when the class allows that
 *       provider; otherwise 403 {@code data_class_forbidden} (the caller picked the provider, so a
 *       retry elsewhere is the caller's decision, not ours).
 * </ul>
 */
public final class DataClasses {
  /** The request header naming the class. */
  public static final String HEADER = "x-data-class";

  /** The error type of a call whose class does not allow the provider it asked for. */
  public static final String FORBIDDEN = "data_class_forbidden";

  /** The error type of a routed call whose fallback the class does not allow. */
  public static final String FALLBACK_NOT_PERMITTED = "fallback_not_permitted";

  /** Class names end up in logs and metric labels: short and inert. */
  private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_-]{0,31}");

  private static final String PATH = "data-classes";

  private final Map<String, DataClass> byName;
  private final DataClass defaultClass;

  public DataClasses(List<DataClass> classes, String defaultName) {
    Map<String, DataClass> map = new TreeMap<>();
    for (DataClass c : classes) {
      if (!NAME.matcher(c.name()).matches()) {
        throw new IllegalArgumentException(
            PATH
                + ": class name '"
                + c.name()
                + "' must be 1-32 characters of [a-z0-9_-], starting with a letter or digit");
      }
      if (map.put(c.name(), c) != null) {
        throw new IllegalArgumentException(PATH + ": class '" + c.name() + "' is defined twice");
      }
    }
    this.byName = Map.copyOf(map);
    this.defaultClass = byName.get(Objects.requireNonNull(defaultName, "defaultName"));
    if (defaultClass == null) {
      throw new IllegalArgumentException(
          PATH
              + ".default names '"
              + defaultName
              + "', which is not one of the classes "
              + map.keySet());
    }
  }

  /** Every provider allowed for every call: what a gateway without data classes did. */
  public static DataClasses permissive() {
    return new DataClasses(
        List.of(new DataClass("internal", EnumSet.allOf(Provider.class))), "internal");
  }

  /**
   * Reads the unwrapped {@code data-classes} object: {@code default = "internal"} and {@code
   * classes { public = [openai, anthropic], … }}.
   */
  public static DataClasses fromMap(Map<String, Object> root) {
    String defaultName = ConfigMaps.requiredString(root, "default", PATH);
    Map<String, Object> classes = ConfigMaps.object(root, "classes", PATH);
    List<DataClass> out = new ArrayList<>();
    for (Map.Entry<String, Object> e : new TreeMap<>(classes).entrySet()) {
      String path = PATH + ".classes." + e.getKey();
      if (!(e.getValue() instanceof List<?> names)) {
        throw new IllegalArgumentException(
            path + " must be a list of providers (openai, anthropic)");
      }
      Set<Provider> providers = EnumSet.noneOf(Provider.class);
      for (Object name : names) {
        try {
          providers.add(Provider.fromWireName(String.valueOf(name)));
        } catch (IllegalArgumentException unknown) {
          throw new IllegalArgumentException(
              path + ": unknown provider '" + name + "' (openai, anthropic)");
        }
      }
      if (providers.isEmpty()) {
        throw new IllegalArgumentException(path + " must allow at least one provider");
      }
      out.add(new DataClass(e.getKey(), providers));
    }
    if (out.isEmpty()) {
      throw new IllegalArgumentException(PATH + ".classes must define at least one class");
    }
    return new DataClasses(out, defaultName);
  }

  /** The class a request carries, or why its header is refused. */
  public sealed interface Resolution {}

  public record Known(DataClass dataClass) implements Resolution {}

  /** 400 naming the header: the name is not a configured class. */
  public record Unknown(String message) implements Resolution {}

  /** {@code header}: the request's {@code x-data-class} value, if it sent one. */
  public Resolution resolve(Optional<String> header) {
    if (header.isEmpty()) {
      return new Known(defaultClass);
    }
    DataClass found = byName.get(header.get());
    if (found == null) {
      return new Unknown(HEADER + " must be one of " + String.join(", ", names()));
    }
    return new Known(found);
  }

  /** Whether a call of {@code dataClass} may go to {@code provider} on a provider's own route. */
  public sealed interface Direct {}

  public record Allowed() implements Direct {}

  /** 403 {@link #FORBIDDEN}. */
  public record Forbidden(String message) implements Direct {}

  public static Direct direct(DataClass dataClass, Provider provider) {
    if (dataClass.allows(provider)) {
      return new Allowed();
    }
    return new Forbidden(
        "data class '"
            + dataClass.name()
            + "' may not be sent to "
            + provider.wireName()
            + "; it may go to "
            + String.join(", ", wireNames(dataClass.providers())));
  }

  public DataClass defaultClass() {
    return defaultClass;
  }

  /** Class names, sorted. */
  public List<String> names() {
    return List.copyOf(new TreeMap<>(byName).keySet());
  }

  public Optional<DataClass> find(String name) {
    return Optional.ofNullable(byName.get(name));
  }

  /** Provider wire names in a fixed order, for messages. */
  public static List<String> wireNames(Set<Provider> providers) {
    List<String> out = new ArrayList<>();
    for (Provider p : Provider.values()) {
      if (providers.contains(p)) {
        out.add(p.wireName());
      }
    }
    return out;
  }
}
