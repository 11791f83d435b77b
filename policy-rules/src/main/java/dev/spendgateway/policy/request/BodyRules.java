package dev.spendgateway.policy.request;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.policy.catalog.ModelCatalog;
import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.catalog.ModelKind;
import dev.spendgateway.policy.catalog.Provider;
import java.time.LocalDate;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;

/** Checks every route shares. Each throws a {@link Refusal} naming the field and the rule. */
final class BodyRules {
  private BodyRules() {}

  /**
   * How every JSON route's check begins: the body's size, a JSON object, and only fields the route
   * knows. Returns the body as an object for the route's own rules.
   */
  static ObjectNode checkEnvelope(
      JsonNode json,
      long bodyBytes,
      PolicyLimits limits,
      String route,
      Map<String, String> forbidden,
      Set<String> allowed) {
    checkBodySize(bodyBytes, limits);
    ObjectNode body = requireObject(json);
    checkFields(body, route, forbidden, allowed);
    return body;
  }

  static void checkBodySize(long bodyBytes, PolicyLimits limits) {
    if (bodyBytes > limits.maxBodyBytes()) {
      throw Refusal.tooLarge(
          "body_size",
          "body",
          "request body is "
              + bodyBytes
              + " bytes; the gateway accepts at most "
              + limits.maxBodyBytes()
              + " bytes");
    }
  }

  static ObjectNode requireObject(JsonNode body) {
    if (body == null || !body.isObject()) {
      throw Refusal.of("json_object", "body", "request body must be a JSON object");
    }
    return (ObjectNode) body;
  }

  /**
   * Refuses fields that reach tools or code execution (with the reason) and every field not on the
   * route's allow-list: an unknown field is refused rather than passed through, because a field the
   * gateway does not know is a field whose cost and reach it cannot judge.
   */
  static void checkFields(
      ObjectNode body, String route, Map<String, String> forbidden, Set<String> allowed) {
    Iterator<String> names = body.fieldNames();
    while (names.hasNext()) {
      String name = names.next();
      String reason = forbidden.get(name);
      if (reason != null) {
        throw Refusal.of(
            "forbidden_field",
            name,
            "field '" + name + "' is not allowed on " + route + ": " + reason);
      }
      if (!allowed.contains(name)) {
        throw Refusal.of(
            "unknown_field",
            name,
            "field '"
                + name
                + "' is not supported by the gateway on "
                + route
                + "; supported fields: "
                + String.join(", ", new TreeSet<>(allowed)));
      }
    }
  }

  /**
   * The model must be in the catalog, belong to this route's provider and kind, and not be retired
   * today. A deprecated model passes with a warning naming its end of support, and so does an
   * active one within the catalog's warning window of its end.
   */
  static ModelInfo checkModel(
      JsonNode modelNode,
      String field,
      ModelCatalog catalog,
      Provider provider,
      ModelKind kind,
      LocalDate today,
      List<String> warnings) {
    if (modelNode == null || modelNode.isNull()) {
      throw Refusal.of("model_required", field, "field '" + field + "' is required");
    }
    if (!modelNode.isTextual()) {
      throw Refusal.of("model_required", field, "field '" + field + "' must be a string");
    }
    String name = modelNode.asText();
    ModelInfo model = catalog.find(name).orElse(null);
    if (model == null || model.provider() != provider || model.kind() != kind) {
      throw Refusal.of(
          "model_allow_list",
          field,
          "model '"
              + name
              + "' is not allowed here; allowed "
              + provider.wireName()
              + " "
              + kind.wireName()
              + " models: "
              + String.join(", ", catalog.namesFor(provider, kind, today)));
    }
    if (model.isRetiredOn(today)) {
      throw Refusal.of(
          "model_retired",
          field,
          "model '"
              + name
              + "' is retired"
              + (model.endOfSupport() == null
                  ? ""
                  : " (end of support " + model.endOfSupport() + ")")
              + "; choose one of: "
              + String.join(", ", catalog.namesFor(provider, kind, today)));
    }
    if (model.isDeprecatedOn(today)) {
      warnings.add(
          "model '"
              + name
              + "' is deprecated"
              + (model.endOfSupport() == null ? "" : " and ends on " + model.endOfSupport())
              + "; move to another model");
    } else if (catalog.needsWarning(model, today)) {
      warnings.add(
          "model '"
              + name
              + "' ends on "
              + model.endOfSupport()
              + " ("
              + model.daysOfSupportLeft(today).orElseThrow()
              + " days left); move to another model");
    }
    return model;
  }

  /** The conversation must hold between min and max entries. Returns the count. */
  static int checkMessages(JsonNode messages, String field, PolicyLimits limits) {
    if (messages == null || messages.isNull()) {
      throw Refusal.of("messages_count", field, "field '" + field + "' is required");
    }
    if (!messages.isArray()) {
      throw Refusal.of("messages_count", field, "field '" + field + "' must be an array");
    }
    int count = messages.size();
    if (count < limits.minMessages() || count > limits.maxMessages()) {
      throw Refusal.of(
          "messages_count",
          field,
          "'"
              + field
              + "' holds "
              + count
              + " entries; the gateway accepts "
              + limits.minMessages()
              + " to "
              + limits.maxMessages());
    }
    return count;
  }

  /**
   * An optional whole number in [min, max]; empty when absent. Out of range is refused under {@code
   * rule}.
   */
  static OptionalLong boundedWholeNumber(
      ObjectNode body, String field, long min, long max, String rule) {
    return boundedWholeNumber(body, field, field, min, max, rule);
  }

  /** As above, naming the field by its full path ({@code tools[0].max_uses}) in the violation. */
  static OptionalLong boundedWholeNumber(
      ObjectNode body, String key, String field, long min, long max, String rule) {
    JsonNode value = body.get(key);
    if (value == null || value.isNull()) {
      return OptionalLong.empty();
    }
    if (!value.canConvertToExactIntegral()) {
      throw Refusal.of(rule, field, "field '" + field + "' must be a whole number");
    }
    long n = value.canConvertToLong() ? value.asLong() : Long.MAX_VALUE;
    if (n < min || n > max) {
      throw Refusal.of(
          rule,
          field,
          "field '"
              + field
              + "' is "
              + value.asText()
              + "; the gateway allows "
              + min
              + " to "
              + max);
    }
    return OptionalLong.of(n);
  }

  /** {@code stream} must be a boolean when present; absent means a plain JSON answer. */
  static boolean streamFlag(ObjectNode body) {
    JsonNode stream = body.get("stream");
    if (stream == null || stream.isNull()) {
      return false;
    }
    if (!stream.isBoolean()) {
      throw Refusal.of("stream_type", "stream", "field 'stream' must be true or false");
    }
    return stream.asBoolean();
  }

  /** A string field limited to listed values (e.g. service tiers whose price the catalog knows). */
  static void checkOneOf(ObjectNode body, String field, Set<String> values, String rule) {
    JsonNode value = body.get(field);
    if (value == null || value.isNull()) {
      return;
    }
    if (!value.isTextual() || !values.contains(value.asText())) {
      throw Refusal.of(
          rule,
          field,
          "field '"
              + field
              + "' may only be one of "
              + String.join(", ", new TreeSet<>(values))
              + "; was "
              + value);
    }
  }
}
