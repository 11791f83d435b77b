package dev.spendgateway.loadtest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;

/** The end-of-run summary, as a JSON tree ({@code --json}) or as text for people. */
final class Report {
  static final double[] PERCENTILES = {50, 90, 99, 99.9};

  private Report() {}

  /** Microseconds as milliseconds with 3 decimals. */
  static String ms(long micros) {
    return String.format("%.3fms", micros / 1000d);
  }

  static double msValue(long micros) {
    return Math.round(micros) / 1000d;
  }

  static ObjectNode latency(ObjectMapper json, Histogram h) {
    ObjectNode n = json.createObjectNode();
    n.put("count", h.getTotalCount());
    n.put("p50", msValue(h.getValueAtPercentile(50)));
    n.put("p90", msValue(h.getValueAtPercentile(90)));
    n.put("p99", msValue(h.getValueAtPercentile(99)));
    n.put("p999", msValue(h.getValueAtPercentile(99.9)));
    n.put("max", msValue(h.getMaxValue()));
    n.put("mean", Math.round(h.getMean()) / 1000d);
    return n;
  }

  static ObjectNode op(ObjectMapper json, OpStats op, double seconds) {
    ObjectNode n = json.createObjectNode();
    n.put("calls", op.total());
    n.put("throughputPerSec", Math.round(op.total() / seconds * 10) / 10d);
    ObjectNode statuses = n.putObject("statuses");
    op.statuses().forEach(statuses::put);
    n.set("latencyMs", latency(json, op.totalLatency()));
    Histogram ttfb = op.totalTtfb();
    if (ttfb.getTotalCount() > 0) {
      n.set("ttfbMs", latency(json, ttfb));
    }
    return n;
  }

  /** Gateway minus direct at p50 and p99 (latency, and TTFB when streamed), in ms, plus ratios. */
  static ObjectNode compare(ObjectMapper json, OpStats gateway, OpStats direct) {
    ObjectNode n = json.createObjectNode();
    added(n, "latency", gateway.totalLatency(), direct.totalLatency());
    if (gateway.totalTtfb().getTotalCount() > 0) {
      added(n, "ttfb", gateway.totalTtfb(), direct.totalTtfb());
    }
    return n;
  }

  private static void added(ObjectNode n, String what, Histogram g, Histogram d) {
    for (double p : new double[] {50, 90, 99}) {
      String key = what + "P" + (int) p;
      long gv = g.getValueAtPercentile(p);
      long dv = d.getValueAtPercentile(p);
      n.put(key + "AddedMs", msValue(gv - dv));
      n.put(key + "Ratio", dv == 0 ? 0 : Math.round(gv * 100d / dv) / 100d);
    }
  }

  static ObjectNode book(ObjectMapper json, BookCheck.Result r) {
    ObjectNode n = json.createObjectNode();
    n.put("overshootUsd", r.overshootUsd());
    n.put("accepted", r.accepted());
    r.expectedAccepted()
        .ifPresentOrElse(e -> n.put("expectedAccepted", e), () -> n.putNull("expectedAccepted"));
    ArrayNode v = n.putArray("violations");
    r.violations().forEach(v::add);
    return n;
  }

  /** The text form of a summary built by {@link LoadTest}. */
  static String text(ObjectNode s) {
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            "%nscenario %s, %s, concurrency %d%s: %,d calls in %.1f s = %,.0f calls/s%n",
            s.path("scenario").asText(),
            s.path("mode").asText(),
            s.path("concurrency").asInt(),
            s.path("ratePerSec").isNumber()
                ? String.format(", rate %.0f/s", s.path("ratePerSec").asDouble())
                : "",
            s.path("calls").asLong(),
            s.path("elapsedSec").asDouble(),
            s.path("throughputPerSec").asDouble()));
    out.append(
        String.format(
            "%-10s %9s %9s %9s %9s %9s %9s %9s  %s%n",
            "op", "calls", "rate/s", "p50", "p90", "p99", "p99.9", "max", "statuses"));
    s.path("ops")
        .fields()
        .forEachRemaining(
            e -> {
              row(
                  out,
                  e.getKey(),
                  e.getValue().path("calls").asLong(),
                  e.getValue().path("throughputPerSec").asDouble(),
                  (ObjectNode) e.getValue().path("latencyMs"),
                  e.getValue().path("statuses").toString());
              if (e.getValue().has("ttfbMs")) {
                row(
                    out,
                    "  ttfb",
                    e.getValue().path("calls").asLong(),
                    e.getValue().path("throughputPerSec").asDouble(),
                    (ObjectNode) e.getValue().path("ttfbMs"),
                    "");
              }
            });
    if (s.has("compare")) {
      ObjectNode c = (ObjectNode) s.path("compare");
      out.append(
          String.format(
              "added by the gateway: p50 %+.3f ms (x%.2f), p90 %+.3f ms, p99 %+.3f ms (x%.2f)%n",
              c.path("latencyP50AddedMs").asDouble(),
              c.path("latencyP50Ratio").asDouble(),
              c.path("latencyP90AddedMs").asDouble(),
              c.path("latencyP99AddedMs").asDouble(),
              c.path("latencyP99Ratio").asDouble()));
      if (c.has("ttfbP50AddedMs")) {
        out.append(
            String.format(
                "added to time to first byte: p50 %+.3f ms, p99 %+.3f ms%n",
                c.path("ttfbP50AddedMs").asDouble(), c.path("ttfbP99AddedMs").asDouble()));
      }
    }
    if (s.has("book")) {
      ObjectNode b = (ObjectNode) s.path("book");
      out.append(
          String.format(
              "book check: overshoot $%s",
              new BigDecimal(b.path("overshootUsd").asText()).toPlainString()));
      if (b.path("expectedAccepted").isNumber()) {
        out.append(
            String.format(
                ", accepted %,d / expected %,d",
                b.path("accepted").asLong(), b.path("expectedAccepted").asLong()));
      }
      if (s.has("indeterminateReserves")) {
        JsonNode n = s.path("indeterminateReserves");
        out.append(
            String.format(
                " (incl. %,d of %,d reserves answered 5xx/no answer that the ledger did book)",
                n.path("heldByLedger").asLong(), n.path("count").asLong()));
      }
      out.append(String.format("%n"));
    } else if (s.has("bookSkipped")) {
      out.append("book check: skipped (")
          .append(s.path("bookSkipped").asText())
          .append(String.format(")%n"));
    }
    for (var v : s.path("violations")) {
      out.append("VIOLATION: ").append(v.asText()).append(String.format("%n"));
    }
    out.append(s.path("ok").asBoolean() ? "RESULT: PASS" : "RESULT: FAIL")
        .append(String.format("%n"));
    return out.toString();
  }

  private static void row(
      StringBuilder out, String name, long calls, double rate, ObjectNode l, String statuses) {
    out.append(
        String.format(
            "%-10s %9d %9.0f %9.3f %9.3f %9.3f %9.3f %9.3f  %s%n",
            name,
            calls,
            rate,
            l.path("p50").asDouble(),
            l.path("p90").asDouble(),
            l.path("p99").asDouble(),
            l.path("p999").asDouble(),
            l.path("max").asDouble(),
            statuses));
  }

  /**
   * Statuses that are not expected for an op become violations (5xx and transport errors always).
   */
  static void statusViolations(OpStats op, List<String> expected, List<String> violations) {
    for (Map.Entry<String, Long> e : op.statuses().entrySet()) {
      if (!expected.contains(e.getKey())) {
        String kind =
            e.getKey().startsWith("5")
                ? "5xx"
                : OpStats.TRANSPORT_ERROR.equals(e.getKey())
                    ? "transport error (no HTTP answer)"
                    : "unexpected status";
        violations.add(String.format("%s: %,d x %s %s", op.name(), e.getValue(), kind, e.getKey()));
      }
    }
  }
}
