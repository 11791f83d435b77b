package dev.spendgateway.policy.config;

import java.math.BigDecimal;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Reads values out of an unwrapped HOCON object ({@code Config.root().unwrapped()}) without
 * depending on Typesafe Config: policy-rules stays Jackson-only. Every failure names the path, so a
 * bad config file fails at start with a message an operator can act on.
 */
public final class ConfigMaps {
  private ConfigMaps() {}

  /** A child object, or an error naming the path when it is missing or not an object. */
  @SuppressWarnings("unchecked")
  public static Map<String, Object> object(Map<String, Object> parent, String key, String path) {
    Object value = parent.get(key);
    if (value instanceof Map<?, ?> map) {
      return (Map<String, Object>) map;
    }
    throw new IllegalArgumentException(path + "." + key + " must be an object");
  }

  public static Optional<String> string(Map<String, Object> map, String key, String path) {
    Object value = map.get(key);
    if (value == null) {
      return Optional.empty();
    }
    if (value instanceof String s) {
      return Optional.of(s);
    }
    throw new IllegalArgumentException(path + "." + key + " must be a string");
  }

  public static String requiredString(Map<String, Object> map, String key, String path) {
    return string(map, key, path)
        .orElseThrow(() -> new IllegalArgumentException(path + "." + key + " is required"));
  }

  /** A whole number; HOCON hands numbers over as Integer or Long. */
  public static Optional<Long> wholeNumber(Map<String, Object> map, String key, String path) {
    Object value = map.get(key);
    if (value == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(new BigDecimal(value.toString()).longValueExact());
    } catch (NumberFormatException | ArithmeticException e) {
      throw new IllegalArgumentException(
          path + "." + key + " must be a whole number, was " + value);
    }
  }

  /**
   * An exact decimal. Prices should be quoted strings in HOCON; an unquoted number is accepted
   * through its decimal text, which is exact for the short prices a catalog holds.
   */
  public static Optional<BigDecimal> decimal(Map<String, Object> map, String key, String path) {
    Object value = map.get(key);
    if (value == null) {
      return Optional.empty();
    }
    try {
      BigDecimal d = new BigDecimal(value.toString());
      if (d.signum() < 0) {
        throw new IllegalArgumentException(path + "." + key + " cannot be negative");
      }
      return Optional.of(d);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          path + "." + key + " must be a decimal number, was " + value);
    }
  }

  public static Optional<LocalDate> date(Map<String, Object> map, String key, String path) {
    Optional<String> text = string(map, key, path);
    try {
      return text.map(LocalDate::parse);
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(path + "." + key + " must be an ISO date (2027-01-31)");
    }
  }

  public static List<String> strings(Map<String, Object> map, String key, String path) {
    Object value = map.get(key);
    if (value == null) {
      return List.of();
    }
    if (value instanceof List<?> list) {
      return list.stream()
          .map(
              item -> {
                if (item instanceof String s) {
                  return s;
                }
                throw new IllegalArgumentException(path + "." + key + " must list strings");
              })
          .toList();
    }
    throw new IllegalArgumentException(path + "." + key + " must be a list");
  }
}
