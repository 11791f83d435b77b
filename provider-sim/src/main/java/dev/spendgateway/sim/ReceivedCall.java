package dev.spendgateway.sim;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One call as it reached the simulator, so tests can assert what the gateway sent upstream.
 *
 * @param seq 1-based arrival number since start or the last reset (keeps counting past the ring)
 * @param atMillis arrival time, epoch millis
 * @param route the endpoint called
 * @param headers request headers, names lower-cased, repeated headers joined with ", "
 * @param body the parsed JSON body; empty for multipart or unparseable bodies
 * @param formFields multipart field names in arrival order (empty for JSON calls)
 * @param formValues values of the non-file multipart fields (truncated to 1 KiB each)
 * @param fileSizes byte size of each multipart file field, by field name
 * @param fault the kind of behaviour applied ({@code normal}, {@code status}, {@code reset}, …)
 * @param protocol how the call came: {@code HTTP/1.1}, or {@code HTTP/2.0} on the h2c listener
 */
public record ReceivedCall(
    long seq,
    long atMillis,
    SimRoute route,
    Map<String, String> headers,
    Optional<JsonNode> body,
    List<String> formFields,
    Map<String, String> formValues,
    Map<String, Long> fileSizes,
    String fault,
    String protocol) {

  public ReceivedCall {
    headers = Map.copyOf(headers);
    formFields = List.copyOf(formFields);
    formValues = Map.copyOf(formValues);
    fileSizes = Map.copyOf(fileSizes);
  }

  /** A call that came over HTTP/1.1. */
  public ReceivedCall(
      long seq,
      long atMillis,
      SimRoute route,
      Map<String, String> headers,
      Optional<JsonNode> body,
      List<String> formFields,
      Map<String, String> formValues,
      Map<String, Long> fileSizes,
      String fault) {
    this(seq, atMillis, route, headers, body, formFields, formValues, fileSizes, fault, "HTTP/1.1");
  }

  /** True when the call came as an HTTP/2 stream. */
  public boolean overHttp2() {
    return protocol.startsWith("HTTP/2");
  }

  /** A header by case-insensitive name. */
  public Optional<String> header(String name) {
    return Optional.ofNullable(headers.get(name.toLowerCase(java.util.Locale.ROOT)));
  }
}
