package dev.spendgateway.edge.errors;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;

/**
 * Errors the gateway itself makes, in the JSON shape of the API the caller is speaking, so the
 * official SDKs surface them as their normal error types. Every one carries {@code x-gateway-error:
 * true} so a caller (and an operator) can tell them from upstream errors.
 */
public final class GatewayErrors {
  /** Marks an error made by the gateway rather than passed through from a provider. */
  public static final HttpHeader GATEWAY_ERROR = RawHeader.create("x-gateway-error", "true");

  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * The status of a call whose caller hung up before it was sent (the usual convention for a client
   * that closed its request): what its access line records; nobody reads the answer.
   */
  public static final int CALLER_GONE = 499;

  /** The error dialects callers speak. */
  public enum Shape {
    /** {@code {"type":"error","error":{"type":…,"message":…}}} */
    ANTHROPIC,
    /** {@code {"error":{"message":…,"type":…,"param":…,"code":…}}} */
    OPENAI,
    /** The ledger/ops API: {@code {"error":{"type":…,"message":…}}} plus optional fields. */
    GATEWAY
  }

  private GatewayErrors() {}

  /**
   * A status as Pekko's: a code Pekko does not register (Anthropic's 529 overloaded, or any other a
   * provider invents) becomes a custom status instead of an exception, so it passes through as is.
   */
  public static org.apache.pekko.http.javadsl.model.StatusCode status(int code) {
    return StatusCodes.lookup(code)
        .orElseGet(
            () ->
                StatusCodes.custom(
                    code,
                    code == 529
                        ? "Overloaded"
                        : code == CALLER_GONE ? "Client Closed Request" : "Provider Status " + code,
                    "",
                    code < 400,
                    true));
  }

  public static HttpResponse error(Shape shape, int status, String type, String message) {
    return error(shape, status, type, message, JSON.createObjectNode(), List.of());
  }

  /**
   * @param extra fields added inside the {@code error} object (e.g. {@code cap}, {@code subject},
   *     {@code param})
   * @param headers extra response headers (e.g. {@code retry-after})
   */
  public static HttpResponse error(
      Shape shape,
      int status,
      String type,
      String message,
      ObjectNode extra,
      List<HttpHeader> headers) {
    ObjectNode body = JSON.createObjectNode();
    ObjectNode error = JSON.createObjectNode();
    switch (shape) {
      case ANTHROPIC -> {
        body.put("type", "error");
        error.put("type", type);
        error.put("message", message);
      }
      case OPENAI -> {
        error.put("message", message);
        error.put("type", type);
        if (!extra.has("param")) {
          error.putNull("param");
        }
        if (!extra.has("code")) {
          error.put("code", type);
        }
      }
      case GATEWAY -> {
        error.put("type", type);
        error.put("message", message);
      }
    }
    error.setAll(extra);
    body.set("error", error);
    return HttpResponse.create()
        .withStatus(status(status))
        .addHeader(GATEWAY_ERROR)
        .addHeaders(headers)
        .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, body.toString()));
  }

  /** 401 in the caller's dialect; the message never echoes what was presented. */
  public static HttpResponse unauthorized(Shape shape) {
    String type =
        switch (shape) {
          case ANTHROPIC -> "authentication_error";
          case OPENAI -> "invalid_api_key";
          case GATEWAY -> "unauthorized";
        };
    return error(
        shape,
        401,
        type,
        "Missing or wrong gateway token: send it as `x-api-key: <token>` or `Authorization: Bearer <token>`.");
  }

  public static HttpResponse notFound(Shape shape, String what) {
    return error(shape, 404, "not_found_error", what);
  }
}
