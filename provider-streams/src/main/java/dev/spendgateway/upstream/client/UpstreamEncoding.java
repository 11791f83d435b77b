package dev.spendgateway.upstream.client;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.apache.pekko.http.javadsl.coding.Coder;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * What the gateway does with an answer the provider compressed. It asks for {@code accept-encoding:
 * identity}, but a provider (or a proxy in front of one) may compress anyway, and passing the bytes
 * on without their {@code content-encoding} would hand the caller garbage and blind the usage tap.
 * So the body is decoded here, before anyone reads it: gzip and deflate with Pekko HTTP's own
 * coders (allow-list); any other or stacked encoding is refused — the body fails at once, which
 * every reader treats as an unreadable answer (the reservation keeps its worst case).
 */
final class UpstreamEncoding {

  /** How to read a body, from its {@code content-encoding}. */
  enum Decision {
    AS_IS,
    GZIP,
    DEFLATE,
    REFUSE
  }

  /** The body failure for an encoding the gateway cannot read; names no provider text. */
  static final class UnreadableEncoding extends IOException {
    UnreadableEncoding() {
      super("upstream body has a content-encoding the gateway cannot decode", null);
    }
  }

  private static final String CONTENT_ENCODING = "content-encoding";

  private UpstreamEncoding() {}

  /**
   * Decides from every {@code content-encoding} value (any case, comma-separated, in any number of
   * headers). {@code identity} means none.
   */
  static Decision decide(List<String> contentEncodings) {
    List<String> codings = new ArrayList<>();
    for (String value : contentEncodings) {
      for (String coding : value.split(",")) {
        String c = coding.strip().toLowerCase(Locale.ROOT);
        if (!c.isEmpty() && !c.equals("identity")) {
          codings.add(c);
        }
      }
    }
    if (codings.isEmpty()) {
      return Decision.AS_IS;
    }
    if (codings.size() > 1) {
      return Decision.REFUSE;
    }
    return switch (codings.get(0)) {
      case "gzip", "x-gzip" -> Decision.GZIP;
      case "deflate" -> Decision.DEFLATE;
      default -> Decision.REFUSE;
    };
  }

  /** The response with a body its readers can parse, and no {@code content-encoding} left. */
  static HttpResponse decoded(HttpResponse response, Materializer materializer) {
    List<String> encodings = new ArrayList<>(1);
    for (HttpHeader h : response.getHeaders()) {
      if (h.is(CONTENT_ENCODING)) {
        encodings.add(h.value());
      }
    }
    return switch (decide(encodings)) {
      case AS_IS -> response;
      case GZIP -> Coder.Gzip.decodeMessage(response);
      case DEFLATE -> Coder.Deflate.decodeMessage(response);
      case REFUSE -> refused(response, materializer);
    };
  }

  private static HttpResponse refused(HttpResponse response, Materializer materializer) {
    response.discardEntityBytes(materializer);
    List<HttpHeader> kept = new ArrayList<>();
    for (HttpHeader h : response.getHeaders()) {
      if (!h.is(CONTENT_ENCODING)) {
        kept.add(h);
      }
    }
    return response
        .withHeaders(kept)
        .withEntity(
            HttpEntities.createChunked(
                response.entity().getContentType(),
                Source.<ByteString>failed(new UnreadableEncoding())));
  }
}
