package dev.spendgateway.upstream.client;

import java.util.List;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/** What an upstream call gave: a response (any status), or no response at all. */
public sealed interface UpstreamResult {

  /**
   * The provider answered. The body streams from the pooled connection and <b>must</b> be consumed
   * or discarded exactly once (pass it on, {@code StreamMeter.meter}, {@code
   * BodyCollector.collect}, or {@link #discardBody}); an unread body holds the connection until the
   * pool's subscription timeout.
   *
   * @param status HTTP status, passed through to the caller as is
   * @param headersToPassBack the allow-listed response headers ({@link HeaderPolicy})
   * @param contentType the body's content type
   * @param body the body bytes, decoded when the provider compressed them ({@link
   *     UpstreamEncoding}), otherwise unchanged
   */
  record Responded(
      int status,
      List<HttpHeader> headersToPassBack,
      ContentType contentType,
      Source<ByteString, ?> body)
      implements UpstreamResult {

    public boolean isSuccess() {
      return status >= 200 && status < 300;
    }

    /** A {@code text/event-stream} body: meter it with {@code StreamMeter}. */
    public boolean isEventStream() {
      return contentType.mediaType().equals(MediaTypes.TEXT_EVENT_STREAM);
    }

    /** Reads and drops the body, freeing the connection. */
    public void discardBody(Materializer materializer) {
      body.runWith(Sink.ignore(), materializer);
    }
  }

  /**
   * No response: connect/TLS/DNS failure, every connection busy ({@link SafeErrors#UPSTREAM_BUSY}),
   * full pool queue ({@link SafeErrors#POOL_OVERFLOW}), response-start timeout, connection lost
   * before the status line.
   *
   * @param safeErrorClass see {@link SafeErrors}; never an exception message
   */
  record ConnectionFailed(String safeErrorClass) implements UpstreamResult {

    private static final java.util.Set<String> NEVER_SENT =
        java.util.Set.of(
            SafeErrors.CONNECT_FAILED,
            SafeErrors.POOL_OVERFLOW,
            SafeErrors.UPSTREAM_BUSY,
            "dns_failed",
            SafeErrors.TLS_HANDSHAKE_FAILED);

    /**
     * Whether the request may have reached the provider (and been billed): false only for failures
     * provably before any byte was sent (a refused connect, DNS, a failed TLS handshake, a full
     * pool) — those settle at 0. Any other TLS error, a response-start timeout or a connection lost
     * mid-request may have been processed: keep the worst case.
     */
    public boolean mayHaveReachedProvider() {
      return !NEVER_SENT.contains(safeErrorClass);
    }

    /**
     * Whether the gateway refused the call for lack of capacity (every connection busy, or the
     * pool's queue full): nothing was sent, and the caller should retry shortly rather than treat
     * the provider as down.
     */
    public boolean isOverload() {
      return SafeErrors.UPSTREAM_BUSY.equals(safeErrorClass)
          || SafeErrors.POOL_OVERFLOW.equals(safeErrorClass);
    }

    /**
     * Whether the same request may be sent once more: only when the connection was refused or its
     * TLS handshake failed (nothing reached the provider). DNS failures and a full pool are not
     * retried: a second try at once would meet the same answer.
     */
    public boolean isRetryableNeverSent() {
      return SafeErrors.CONNECT_FAILED.equals(safeErrorClass)
          || SafeErrors.TLS_HANDSHAKE_FAILED.equals(safeErrorClass);
    }
  }
}
