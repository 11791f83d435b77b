package dev.spendgateway.edge.router;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.RetryAfter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.util.ByteString;

/** Pure helpers for upstream answers seen by the router: Retry-After, error bodies, headers. */
final class UpstreamErrors {
  /** The provider's own request id is passed back under this name (ours stays in x-request-id). */
  static final String UPSTREAM_REQUEST_ID = "x-upstream-request-id";

  private UpstreamErrors() {}

  /**
   * {@code retry-after-ms} (OpenAI) when present, else {@code retry-after} (seconds or HTTP-date).
   */
  static Optional<Duration> retryAfter(List<HttpHeader> headers, Instant now) {
    Optional<Duration> millis = header(headers, "retry-after-ms").flatMap(RetryAfter::parseMillis);
    return millis.isPresent()
        ? millis
        : header(headers, "retry-after").flatMap(h -> RetryAfter.parse(h, now));
  }

  static Optional<String> header(List<HttpHeader> headers, String name) {
    return headers.stream().filter(h -> h.is(name)).map(HttpHeader::value).findFirst();
  }

  /**
   * The allow-listed upstream headers for the caller, with the provider's request id renamed to
   * {@link #UPSTREAM_REQUEST_ID} so that {@code x-request-id} is only ever the gateway's.
   */
  static List<HttpHeader> passBack(List<HttpHeader> headers) {
    List<HttpHeader> out = new ArrayList<>();
    for (HttpHeader h : headers) {
      String name = h.lowercaseName();
      if (name.equals("x-request-id") || name.equals("request-id")) {
        out.add(RawHeader.create(UPSTREAM_REQUEST_ID, h.value()));
      } else {
        out.add(h);
      }
    }
    return out;
  }

  /**
   * An upstream error body in the OpenAI shape: OpenAI's as it is, Anthropic's {@code
   * {"type":"error","error":{"type","message"}}} rewritten to {@code {"error":{"message","type",
   * "param","code"}}}, anything unreadable wrapped with a neutral message.
   */
  static ByteString toOpenAiShape(Provider provider, int status, ByteString body) {
    Optional<ObjectNode> parsed = RouterJson.parseObject(body);
    if (provider == Provider.OPENAI && parsed.map(o -> o.path("error").isObject()).orElse(false)) {
      return body;
    }
    JsonNode error = parsed.map(o -> o.path("error")).orElse(RouterJson.object());
    ObjectNode out = RouterJson.object();
    ObjectNode e = out.putObject("error");
    e.put(
        "message", error.path("message").asText(provider.wireName() + " answered HTTP " + status));
    e.put("type", error.path("type").asText("upstream_error"));
    e.putNull("param");
    e.putNull("code");
    return ByteString.fromArray(RouterJson.bytes(out));
  }

  /** The error body as text for the classifier (credit balance, schema refusals); bounded. */
  static String text(ByteString body) {
    ByteString cut = body.size() > 64 * 1024 ? body.take(64 * 1024) : body;
    return cut.utf8String();
  }

  static String lower(String s) {
    return s.toLowerCase(Locale.ROOT);
  }
}
