package dev.spendgateway.edge.body;

import java.util.regex.Pattern;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.MediaType;
import org.apache.pekko.http.javadsl.model.MediaTypes;

/**
 * The one {@code Content-Type} a route takes its body in. A body under any other type is refused
 * with 415 before a byte of it is read: a form-encoded body (what {@code curl -d} sends unless told
 * otherwise) or an untyped one is a caller's mistake the gateway names, not JSON it guesses at.
 *
 * <p>Parameters are ignored ({@code application/json; charset=utf-8} is JSON; a form always carries
 * its {@code boundary}). Only {@code application/json} itself counts as JSON: the provider APIs and
 * the gateway's own API define their bodies as exactly that, and a {@code +json} type names a
 * different format (merge-patch, problem details), so accepting one would only hide a mistake. An
 * empty body has no type to check; the route answers it as it answers any missing body (400).
 */
public enum BodyType {
  JSON(MediaTypes.APPLICATION_JSON, "application/json", "the request body as JSON"),
  FORM_DATA(MediaTypes.MULTIPART_FORM_DATA, "multipart/form-data; boundary=…", "the upload as a multipart form");

  /** The header a refusal names (an OpenAI {@code param}, a gateway {@code field}). */
  public static final String HEADER = "content-type";

  /** A media type echoed back only when it looks like one (it is caller text, bounded by the parser). */
  private static final Pattern SHOWABLE = Pattern.compile("[A-Za-z0-9!#$&^_.+-]{1,64}/[A-Za-z0-9!#$&^_.+-]{1,64}");

  private final MediaType mediaType;
  private final String headerValue;
  private final String what;

  BodyType(MediaType mediaType, String headerValue, String what) {
    this.mediaType = mediaType;
    this.headerValue = headerValue;
    this.what = what;
  }

  /** Whether {@code entity} may be read as this type: its media type, whatever its parameters; or empty. */
  public boolean accepts(HttpEntity entity) {
    if (entity.isKnownEmpty()) {
      return true;
    }
    MediaType sent = entity.getContentType().mediaType();
    return sent.mainType().equalsIgnoreCase(mediaType.mainType())
        && sent.subType().equalsIgnoreCase(mediaType.subType());
  }

  /** Why {@code entity} is refused (415), naming the header and what to send. */
  public String refusal(HttpEntity entity) {
    return "Unsupported content-type: send " + what + " with the header `content-type: " + headerValue + "`; this request "
        + sent(entity.getContentType().mediaType()) + ".";
  }

  /**
   * Pekko reads a request without a {@code Content-Type} header as {@code application/octet-stream},
   * so the two cannot be told apart: the message names both.
   */
  private static String sent(MediaType sent) {
    String value = sent.mainType() + "/" + sent.subType();
    if (value.equalsIgnoreCase("application/octet-stream")) {
      return "has no content-type (or application/octet-stream)";
    }
    return SHOWABLE.matcher(value).matches() ? "has `" + value.toLowerCase(java.util.Locale.ROOT) + "`" : "has another one";
  }
}
