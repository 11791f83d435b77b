package dev.spendgateway.upstream.client;

import java.util.List;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpMethod;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.util.ByteString;

/**
 * A call to make upstream.
 *
 * @param method usually POST
 * @param callerHeaders the caller's incoming headers, unfiltered: {@link HeaderPolicy} decides what
 *     goes on, so the edge can hand over {@code request.getHeaders()} as is
 * @param body what to send
 */
public record UpstreamRequest(
    HttpMethod method, List<HttpHeader> callerHeaders, UpstreamBody body) {

  public UpstreamRequest {
    callerHeaders = List.copyOf(callerHeaders);
  }

  /** A POST of an in-memory body. */
  public static UpstreamRequest post(
      Iterable<HttpHeader> callerHeaders, ContentType contentType, ByteString body) {
    return new UpstreamRequest(
        HttpMethods.POST, copy(callerHeaders), new UpstreamBody.Strict(contentType, body));
  }

  private static List<HttpHeader> copy(Iterable<HttpHeader> headers) {
    java.util.ArrayList<HttpHeader> list = new java.util.ArrayList<>();
    headers.forEach(list::add);
    return list;
  }
}
