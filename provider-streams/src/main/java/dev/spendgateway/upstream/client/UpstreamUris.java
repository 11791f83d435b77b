package dev.spendgateway.upstream.client;

import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.http.javadsl.model.Uri;

/**
 * A provider's upstream URIs (base URL + path), each parsed once. Parsing the URI string again for
 * every call showed up in the gateway's CPU profile; the paths are the few APIs the gateway passes
 * through, so they are kept. Past {@link #MAX_KEPT} distinct paths (not expected: paths come from
 * the gateway's own table of APIs) a path is parsed per call rather than kept, so memory stays
 * bounded whatever is asked.
 */
final class UpstreamUris {
  static final int MAX_KEPT = 64;

  private final String baseUrl;
  private final ConcurrentHashMap<String, Uri> parsed = new ConcurrentHashMap<>();

  UpstreamUris(String baseUrl) {
    this.baseUrl = baseUrl;
  }

  /** {@code baseUrl + path}, e.g. {@code https://api.anthropic.com/v1/messages?beta=true}. */
  Uri of(String path) {
    Uri uri = parsed.get(path);
    if (uri != null) {
      return uri;
    }
    uri = Uri.create(baseUrl + path);
    if (parsed.size() < MAX_KEPT) {
      parsed.putIfAbsent(path, uri);
    }
    return uri;
  }

  int kept() {
    return parsed.size();
  }
}
