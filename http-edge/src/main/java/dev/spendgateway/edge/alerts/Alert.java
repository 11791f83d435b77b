package dev.spendgateway.edge.alerts;

import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * One alert for the webhook: its delivery id (the same on every attempt), its type ({@code
 * budget_threshold}, {@code model_retired}, {@code model_deprecated}, {@code circuit_open}) and the
 * exact JSON body that is signed and sent. Never a prompt, a key or a token: bodies carry cap
 * names, brand ids, model names and amounts only.
 *
 * @param key what makes the alert one of a kind (e.g. cap, subject, window and threshold): an alert
 *     whose key was raised before is never raised again
 */
public record Alert(String key, String type, String body) {
  /** The delivery id: derived from the key, so it is the same on every retry and after a crash. */
  public String deliveryId() {
    return UUID.nameUUIDFromBytes(key.getBytes(StandardCharsets.UTF_8)).toString();
  }
}
