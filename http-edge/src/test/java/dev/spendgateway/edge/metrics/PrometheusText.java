package dev.spendgateway.edge.metrics;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A tiny parser for the Prometheus text exposition format (0.0.4), strict enough that output it
 * accepts is what a Prometheus server accepts: {@code # HELP} / {@code # TYPE} lines, then samples
 * {@code name{label="value",…} value}. Samples are keyed {@code name{a="x",b="y"}} with labels
 * sorted.
 */
final class PrometheusText {
  private static final Pattern NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
  private static final Pattern SAMPLE =
      Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)\\})?\\s+(\\S+)(\\s+-?\\d+)?");
  private static final Pattern LABEL =
      Pattern.compile("\\s*([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\[\\\\\"n])*)\"\\s*(,|$)");
  private static final Pattern TYPE =
      Pattern.compile("# TYPE (\\S+) (counter|gauge|histogram|summary|untyped)");

  private PrometheusText() {}

  /**
   * Every sample; throws {@link IllegalArgumentException} naming the first line that does not
   * parse.
   */
  static Map<String, Double> parse(String text) {
    Map<String, Double> samples = new LinkedHashMap<>();
    Map<String, String> types = new LinkedHashMap<>();
    int lineNo = 0;
    for (String line : text.split("\n", -1)) {
      lineNo++;
      if (line.isEmpty()) {
        continue;
      }
      if (line.startsWith("#")) {
        if (line.startsWith("# TYPE ")) {
          Matcher t = TYPE.matcher(line);
          if (!t.matches()) {
            throw new IllegalArgumentException("line " + lineNo + ": bad TYPE: " + line);
          }
          if (types.put(t.group(1), t.group(2)) != null) {
            throw new IllegalArgumentException(
                "line " + lineNo + ": TYPE repeated for " + t.group(1));
          }
        } else if (line.startsWith("# HELP ")) {
          String name = line.substring(7).split(" ", 2)[0];
          if (!NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("line " + lineNo + ": bad HELP: " + line);
          }
        }
        continue;
      }
      Matcher m = SAMPLE.matcher(line);
      if (!m.matches()) {
        throw new IllegalArgumentException("line " + lineNo + ": not a sample: " + line);
      }
      Map<String, String> labels = new TreeMap<>();
      if (m.group(3) != null && !m.group(3).isEmpty()) {
        Matcher l = LABEL.matcher(m.group(3));
        int end = 0;
        while (l.find() && l.start() == end) {
          labels.put(l.group(1), l.group(2));
          end = l.end();
        }
        if (end != m.group(3).length()) {
          throw new IllegalArgumentException("line " + lineNo + ": bad labels: " + line);
        }
      }
      double value = value(m.group(4), lineNo);
      String key = key(m.group(1), labels);
      if (samples.put(key, value) != null) {
        throw new IllegalArgumentException("line " + lineNo + ": sample repeated: " + key);
      }
    }
    return samples;
  }

  static String key(String name, Map<String, String> labels) {
    if (labels.isEmpty()) {
      return name;
    }
    StringBuilder b = new StringBuilder(name).append('{');
    new TreeMap<>(labels).forEach((k, v) -> b.append(k).append("=\"").append(v).append("\","));
    b.setLength(b.length() - 1);
    return b.append('}').toString();
  }

  private static double value(String text, int lineNo) {
    return switch (text) {
      case "+Inf" -> Double.POSITIVE_INFINITY;
      case "-Inf" -> Double.NEGATIVE_INFINITY;
      case "NaN" -> Double.NaN;
      default -> {
        try {
          yield Double.parseDouble(text);
        } catch (NumberFormatException e) {
          throw new IllegalArgumentException("line " + lineNo + ": bad value " + text);
        }
      }
    };
  }
}
