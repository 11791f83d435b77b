package dev.spendgateway.edge.alerts;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.catalog.Provider;
import java.time.Instant;
import java.time.LocalDate;

/**
 * Pure: the webhook's alerts about models and providers, beside the budget ones. Each key says how
 * often its alert may be sent, since the outbox sends a key once: a retired model once per model,
 * route and day (its circuit may open again tomorrow, and someone should hear it again); a
 * deprecated model in use once per model and day; an open breaker once per opening. Bodies name
 * providers, models and routes only.
 */
public final class ModelAlerts {
  private static final ObjectMapper JSON = new ObjectMapper();

  private ModelAlerts() {}

  /** {@code model_retired}: a 410 from the provider opened the model's circuit. */
  public static Alert retired(Provider provider, String model, String route, Instant at) {
    ObjectNode body = JSON.createObjectNode();
    body.put("type", "model_retired");
    body.put("provider", provider.wireName());
    body.put("model", model);
    body.put("route", route);
    body.put("at", at.toString());
    return new Alert(
        key("model_retired", model, route, dayOf(at)), "model_retired", body.toString());
  }

  /** {@code model_deprecated}: a call on {@code today} used a model its owners should move off. */
  public static Alert deprecatedInUse(ModelInfo model, LocalDate today, Instant at) {
    ObjectNode body = JSON.createObjectNode();
    body.put("type", "model_deprecated");
    body.put("provider", model.provider().wireName());
    body.put("model", model.name());
    body.put("lifecycle", model.lifecycle().name().toLowerCase(java.util.Locale.ROOT));
    if (model.endOfSupport() == null) {
      body.putNull("endOfSupport");
    } else {
      body.put("endOfSupport", model.endOfSupport().toString());
    }
    body.put("day", today.toString());
    body.put("at", at.toString());
    return new Alert(
        key("model_deprecated", model.name(), today.toString()),
        "model_deprecated",
        body.toString());
  }

  /** {@code circuit_open}: {@code provider}'s breaker opened at {@code at}. */
  public static Alert circuitOpen(Provider provider, Instant at) {
    ObjectNode body = JSON.createObjectNode();
    body.put("type", "circuit_open");
    body.put("provider", provider.wireName());
    body.put("at", at.toString());
    return new Alert(
        key("circuit_open", provider.wireName(), at.toString()), "circuit_open", body.toString());
  }

  private static String dayOf(Instant at) {
    return LocalDate.ofInstant(at, java.time.ZoneOffset.UTC).toString();
  }

  private static String key(String... parts) {
    return String.join("\u0000", parts);
  }
}
