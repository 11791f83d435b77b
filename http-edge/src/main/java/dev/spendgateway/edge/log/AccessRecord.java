package dev.spendgateway.edge.log;

import java.time.Instant;

/**
 * One call as the access log records it (one line per call, or per attempt of a routed call):
 * metadata only. There is deliberately no field that could hold a prompt, an output, a key or a
 * token — what is not in this record cannot leak.
 *
 * @param time when the call arrived
 * @param requestId the caller's {@code x-request-id} or a generated one
 * @param route the matched route template (e.g. {@code /anthropic/v1/messages}), not the raw URI
 * @param provider {@code openai}, {@code anthropic} or null when no provider was called
 * @param lane the spend lane, null when not a spend call
 * @param brand the brand or preview id, null for the free lane
 * @param model the requested model, null when unknown
 * @param status the HTTP status sent to the caller
 * @param reservedUsd the worst case reserved, null when nothing was reserved
 * @param settledUsd the settled amount, null while open or when nothing was reserved
 * @param durationMs from arrival to the last byte sent
 * @param errorClass a safe, fixed error class (e.g. {@code budget_exceeded}, {@code usage_missing})
 * @param failover whether the call was answered by a fallback provider
 * @param profile the routing profile a router call named; null on the provider routes
 * @param dataClass the data class name the call carried ({@code x-data-class} or the default); null
 *     when the call was refused before it was read
 */
public record AccessRecord(
    Instant time,
    String requestId,
    String route,
    String provider,
    String lane,
    String brand,
    String model,
    int status,
    String reservedUsd,
    String settledUsd,
    long durationMs,
    String errorClass,
    boolean failover,
    String profile,
    String dataClass) {

  /**
   * The line of a call refused at the door, before anything of it was read (wrong token, unknown
   * route, too many open calls): no spend, model, profile or data class, nothing reserved.
   */
  public static AccessRecord refusedAtTheDoor(
      Instant time,
      String requestId,
      String route,
      String provider,
      int status,
      String errorClass) {
    return new AccessRecord(
        time,
        requestId,
        route,
        provider,
        null,
        null,
        null,
        status,
        null,
        null,
        0,
        errorClass,
        false,
        null,
        null);
  }
}
