package dev.spendgateway.edge.body;

import java.util.regex.Pattern;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.MediaType;
import org.apache.pekko.http.javadsl.model.MediaTypes;

/**
 * What a route reads its body as, and which declared {@code Content-Type}s it refuses with 415
 * before a byte of the body is read.
 *
 * <p>JSON routes read the body as strict JSON whatever text type it was declared as, and refuse
 * only a {@code multipart/*} body — the one framing that cannot be JSON. Why not insist on {@code
 * application/json}: raw clients and load tools send JSON under their own defaults (none with
 * Python's {@code data=}, {@code application/x-www-form-urlencoded} with {@code curl -d}, {@code
 * text/plain} with a string body in {@code fetch}), and refusing those would break callers without
 * protecting anything: the body is still parsed strictly, so anything that is not valid JSON is a
 * 400 naming the problem. The transcription route reads a multipart form and refuses anything else,
 * since its body cannot be parsed without the form's boundary. The video submit takes either (its
 * {@code input_reference} image comes as a form), and refuses other multipart types.
 *
 * <p>Parameters are ignored ({@code application/json; charset=utf-8}); an empty body has no type to
 * check and the route answers it as it answers any missing body (400).
 */
public enum BodyType {
  JSON(MediaTypes.APPLICATION_JSON, "application/json", "the request body as JSON"),
  FORM_DATA(
      MediaTypes.MULTIPART_FORM_DATA,
      "multipart/form-data; boundary=…",
      "the upload as a multipart form"),
  /**
   * JSON as {@link #JSON} reads it, or a multipart form: the video submit takes its fields as JSON,
   * or as a form when it carries an {@code input_reference} image (as the provider does).
   */
  JSON_OR_FORM_DATA(
      MediaTypes.APPLICATION_JSON,
      "application/json` (or `multipart/form-data; boundary=…` for a form with an image",
      "the request body as JSON or a multipart form");

  /** The header a refusal names (an OpenAI {@code param}, a gateway {@code field}). */
  public static final String HEADER = "content-type";

  /**
   * A media type echoed back only when it looks like one (it is caller text, bounded by the
   * parser).
   */
  private static final Pattern SHOWABLE =
      Pattern.compile("[A-Za-z0-9!#$&^_.+-]{1,64}/[A-Za-z0-9!#$&^_.+-]{1,64}");

  private final MediaType mediaType;
  private final String headerValue;
  private final String what;

  BodyType(MediaType mediaType, String headerValue, String what) {
    this.mediaType = mediaType;
    this.headerValue = headerValue;
    this.what = what;
  }

  /**
   * Whether {@code entity} may be read as this type (see the class comment); an empty one always.
   */
  public boolean accepts(HttpEntity entity) {
    if (entity.isKnownEmpty()) {
      return true;
    }
    MediaType sent = entity.getContentType().mediaType();
    if (this == JSON) {
      return !sent.mainType().equalsIgnoreCase("multipart");
    }
    if (this == JSON_OR_FORM_DATA) {
      return JSON.accepts(entity) || FORM_DATA.accepts(entity);
    }
    return sent.mainType().equalsIgnoreCase(mediaType.mainType())
        && sent.subType().equalsIgnoreCase(mediaType.subType());
  }

  /** Why {@code entity} is refused (415), naming the header and what to send. */
  public String refusal(HttpEntity entity) {
    return "Unsupported content-type: send "
        + what
        + " with the header `content-type: "
        + headerValue
        + "`; this request "
        + sent(entity.getContentType().mediaType())
        + ".";
  }

  /**
   * Pekko reads a request without a {@code Content-Type} header as {@code
   * application/octet-stream}, so the two cannot be told apart: the message names both.
   */
  private static String sent(MediaType sent) {
    String value = sent.mainType() + "/" + sent.subType();
    if (value.equalsIgnoreCase("application/octet-stream")) {
      return "has no content-type (or application/octet-stream)";
    }
    return SHOWABLE.matcher(value).matches()
        ? "has `" + value.toLowerCase(java.util.Locale.ROOT) + "`"
        : "has another one";
  }
}
