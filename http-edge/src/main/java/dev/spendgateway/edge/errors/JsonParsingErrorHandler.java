package dev.spendgateway.edge.errors;

import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.ParsingErrorHandler;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.scaladsl.model.ErrorInfo;
import org.apache.pekko.http.scaladsl.model.StatusCode;
import org.apache.pekko.http.scaladsl.settings.ParserSettings;
import org.apache.pekko.http.scaladsl.settings.ServerSettings;

/**
 * Answers requests Pekko's HTTP parser refuses before any route runs — a header value too large
 * (431), a URI too long (414), too many headers or a broken request line or header (400), an
 * unknown method (501) or HTTP version (505) — with a JSON error in the gateway's shape plus {@code
 * x-gateway-error: true}, instead of Pekko's plain text. (A body over {@code max-content-length} is
 * not among them: Pekko checks that as the body is read, and the routes answer it themselves.)
 * Named by {@code pekko.http.server.parsing.error-handler} in {@code conf/http.conf}; Pekko creates
 * it by reflection with its no-argument constructor.
 *
 * <p>The parser hands over only the status and the error, not the request (there may be none to
 * speak of), so the answer cannot take the provider shape of the route it was meant for. The
 * message names the limit that was hit; for other errors it is the parser's one-line summary, which
 * Pekko itself sends by default. The log line carries only that summary, never the detail (which
 * may quote the offending header value — a token, say).
 */
public final class JsonParsingErrorHandler extends ParsingErrorHandler {

  @Override
  public HttpResponse handle(
      StatusCode status, ErrorInfo info, LoggingAdapter log, ServerSettings settings) {
    int code = status.intValue();
    log.warning("Illegal request, responding with status {}: {}", code, summary(info));
    return GatewayErrors.error(
        Shape.GATEWAY, code, type(code), message(code, info, settings.parserSettings()));
  }

  private static String type(int code) {
    if (code == 501 || code == 505) {
      return "not_supported";
    }
    return code < 500 ? "invalid_request" : "internal_error";
  }

  private static String message(int code, ErrorInfo info, ParserSettings limits) {
    return switch (code) {
      case 431 ->
          "A request header is too large: the gateway takes headers with names up to "
              + limits.maxHeaderNameLength()
              + " and values up to "
              + limits.maxHeaderValueLength()
              + " characters.";
      case 414 ->
          "The request URI is longer than the gateway's limit of "
              + limits.maxUriLength()
              + " characters.";
      // Pekko 1.3 checks max-content-length as the body is read; should a parser answer it, say
      // which limit.
      case 413 ->
          "The request body is larger than the gateway's limit of "
              + limits.maxContentLength()
              + " bytes.";
      default ->
          "The request could not be read as HTTP/1.1: "
              + summary(info).replaceAll("\\.$", "")
              + ".";
    };
  }

  /** The parser's summary, bounded (it names what went wrong, not the caller's bytes). */
  private static String summary(ErrorInfo info) {
    String summary =
        info.summary() == null || info.summary().isBlank()
            ? "malformed request"
            : info.summary().strip();
    return summary.length() > 200 ? summary.substring(0, 200) : summary;
  }
}
