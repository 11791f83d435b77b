package dev.spendgateway.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The JSON form of faults, usage and recorded calls for the HTTP scripting API. Hand-written (not
 * Jackson polymorphism) so error messages name the offending field and the format stays small.
 */
final class FaultJson {
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  private FaultJson() {}

  /** A scripted step: a fault and how many calls it covers ({@code -1} = forever). */
  record Step(Fault fault, int times) {}

  /** Thrown for a malformed script; the message names the field. */
  static final class BadScript extends RuntimeException {
    BadScript(String message) {
      super(message);
    }
  }

  static Step step(JsonNode n) {
    int times;
    if (n.path("forever").asBoolean(false)) {
      times = -1;
    } else if (n.has("times")) {
      if (!n.get("times").canConvertToInt()) {
        throw new BadScript("'times' must be an integer (>= 1, or -1 for forever)");
      }
      times = n.get("times").asInt();
      if (times == 0 || times < -1) {
        throw new BadScript("'times' must be >= 1, or -1 for forever");
      }
    } else {
      times = 1;
    }
    return new Step(fault(n), times);
  }

  static Fault fault(JsonNode n) {
    String kind = text(n, "kind");
    try {
      return switch (kind) {
        case "normal" ->
            new Fault.Normal(
                n.has("usage")
                    ? Optional.of(usage(n.get("usage"), Usage.defaults()))
                    : Optional.empty(),
                Duration.ofMillis(n.path("latencyMs").asLong(0)));
        case "status" ->
            new Fault.Status(
                requiredInt(n, "status"), headers(n.path("headers")), body(n.get("body")));
        case "rateLimited" -> Fault.rateLimited(n.path("retryAfter").asInt(1));
        case "creditBalanceTooLow" -> Fault.creditBalanceTooLow();
        case "overloaded" -> Fault.overloaded();
        case "reset" -> Fault.connectionReset();
        case "streamCut" ->
            new Fault.StreamCut(requiredInt(n, "afterEvents"), n.path("abort").asBoolean(true));
        case "slowDrip" -> Fault.slowDrip(Duration.ofMillis(requiredInt(n, "intervalMs")));
        case "malformedSse" -> Fault.malformedSse(n.path("afterEvents").asInt(0));
        case "streamError" ->
            Fault.streamError(n.path("afterEvents").asInt(0), n.path("status").asInt(529));
        case "invalidJson" -> Fault.invalidJson();
        case "gzip" -> Fault.gzip();
        case "streamPause" ->
            Fault.streamPause(
                requiredInt(n, "afterEvents"), Duration.ofMillis(requiredLong(n, "pauseMs")));
        case "usageMissing" -> Fault.usageMissing();
        case "streamHold" ->
            Fault.streamHold(
                requiredInt(n, "afterEvents"),
                Duration.ofMillis(n.path("maxHoldMs").asLong(600_000)));
        default ->
            throw new BadScript(
                "unknown 'kind' '"
                    + kind
                    + "'; expected normal, status, rateLimited, creditBalanceTooLow,"
                    + " overloaded, reset, streamCut, slowDrip, malformedSse, streamError, invalidJson,"
                    + " streamPause, streamHold, usageMissing, gzip");
      };
    } catch (IllegalArgumentException e) {
      throw new BadScript(e.getMessage());
    }
  }

  /** Usage from JSON; absent fields keep the given base values. */
  static Usage usage(JsonNode n, Usage base) {
    if (!n.isObject()) {
      throw new BadScript("'usage' must be an object");
    }
    try {
      return new Usage(
          n.path("inputTokens").asLong(base.inputTokens()),
          n.path("outputTokens").asLong(base.outputTokens()),
          n.path("cacheReadTokens").asLong(base.cacheReadTokens()),
          n.path("cacheWriteTokens").asLong(base.cacheWriteTokens()),
          n.path("webSearches").asInt(base.webSearches()));
    } catch (IllegalArgumentException e) {
      throw new BadScript(e.getMessage());
    }
  }

  static ObjectNode usageJson(Usage u) {
    return F.objectNode()
        .put("inputTokens", u.inputTokens())
        .put("outputTokens", u.outputTokens())
        .put("cacheReadTokens", u.cacheReadTokens())
        .put("cacheWriteTokens", u.cacheWriteTokens())
        .put("webSearches", u.webSearches());
  }

  static ObjectNode callJson(ReceivedCall c) {
    ObjectNode o = F.objectNode();
    o.put("seq", c.seq());
    o.put("atMillis", c.atMillis());
    o.put("route", c.route().wireName());
    o.put("fault", c.fault());
    ObjectNode headers = o.putObject("headers");
    c.headers().forEach(headers::put);
    o.set("body", c.body().orElse(F.nullNode()));
    c.formFields().forEach(o.putArray("formFields")::add);
    ObjectNode values = o.putObject("formValues");
    c.formValues().forEach(values::put);
    ObjectNode files = o.putObject("fileSizes");
    c.fileSizes().forEach(files::put);
    return o;
  }

  private static Map<String, String> headers(JsonNode n) {
    if (n.isMissingNode() || n.isNull()) {
      return Map.of();
    }
    if (!n.isObject()) {
      throw new BadScript("'headers' must be an object of name to string value");
    }
    Map<String, String> out = new LinkedHashMap<>();
    n.fields()
        .forEachRemaining(
            e ->
                out.put(
                    e.getKey(),
                    e.getValue().isTextual() ? e.getValue().asText() : e.getValue().toString()));
    return out;
  }

  /** A body given as a string is sent as is; given as JSON, it is sent serialized. */
  private static Optional<String> body(JsonNode n) {
    if (n == null || n.isNull()) {
      return Optional.empty();
    }
    return Optional.of(n.isTextual() ? n.asText() : n.toString());
  }

  private static String text(JsonNode n, String field) {
    JsonNode v = n.get(field);
    if (v == null || !v.isTextual()) {
      throw new BadScript("'" + field + "' is required and must be a string");
    }
    return v.asText();
  }

  private static int requiredInt(JsonNode n, String field) {
    JsonNode v = n.get(field);
    if (v == null || !v.canConvertToInt()) {
      throw new BadScript("'" + field + "' is required and must be an integer");
    }
    return v.asInt();
  }

  private static long requiredLong(JsonNode n, String field) {
    JsonNode v = n.get(field);
    if (v == null || !v.canConvertToLong()) {
      throw new BadScript("'" + field + "' is required and must be an integer");
    }
    return v.asLong();
  }
}
