package dev.spendgateway.upstream.client;

import java.net.ConnectException;
import java.net.UnknownHostException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import org.apache.pekko.stream.BufferOverflowException;
import org.apache.pekko.stream.StreamLimitReachedException;
import org.apache.pekko.stream.StreamTcpException;

/**
 * Turns an upstream failure into a short, safe error class for logs, metrics and {@link
 * UpstreamResult.ConnectionFailed}. Exception <em>messages</em> are never used: they can hold URLs,
 * host names or, from careless libraries, header values.
 *
 * <p>Classes: {@code connect_failed}, {@code dns_failed}, {@code tls_handshake_failed}, {@code
 * tls_failed}, {@code pool_overflow} (the provider's pool queue is full: answer "try later"),
 * {@code upstream_busy} (every connection to the provider is busy: answer "try later"), {@code
 * idle_timeout}, {@code response_start_timeout}, {@code max_call_duration}, {@code
 * connection_closed}, {@code connection_lost}, {@code drain_timeout}, {@code too_large}, otherwise
 * {@code error:<SimpleClassName>}.
 */
public final class SafeErrors {

  public static final String RESPONSE_START_TIMEOUT = "response_start_timeout";
  public static final String POOL_OVERFLOW = "pool_overflow";

  /**
   * Every connection to the provider is busy ({@code max-connections} calls open): refused before
   * anything was sent, so the call is free, and the caller is told to retry shortly.
   */
  public static final String UPSTREAM_BUSY = "upstream_busy";

  public static final String CONNECT_FAILED = "connect_failed";

  /**
   * The TLS handshake failed: no request byte can have been sent (HTTP is written only over an
   * established session), so the call is free and may be retried once.
   */
  public static final String TLS_HANDSHAKE_FAILED = "tls_handshake_failed";

  /**
   * Any other TLS failure (a bad record, an alert, a close_notify mid-answer): it can happen after
   * the request went out, so the provider may bill it and the caller keeps the worst case.
   */
  public static final String TLS_FAILED = "tls_failed";

  /** The call outlived {@code providers.max-call-duration} and was cut; kept at the worst case. */
  public static final String MAX_CALL_DURATION = "max_call_duration";

  /**
   * The TCP connection broke after it was open (reset, closed mid-request): the request may have
   * reached the provider and been billed, so the caller keeps the worst case.
   */
  public static final String CONNECTION_LOST = "connection_lost";

  private SafeErrors() {}

  /** Strips the future wrappers ({@link CompletionException}, {@link ExecutionException}). */
  public static Throwable unwrap(Throwable error) {
    Throwable e = error;
    while ((e instanceof CompletionException || e instanceof ExecutionException)
        && e.getCause() != null) {
      e = e.getCause();
    }
    return e;
  }

  /** The safe class of {@code error}, looking through its cause chain. */
  public static String classify(Throwable error) {
    Throwable e = unwrap(error);
    // A refused connect surfaces as a StreamTcpException wrapping a ConnectException, a failed
    // handshake may be wrapped too; only the inner one says nothing was sent, so look for them
    // through the whole chain first.
    for (Throwable c = e; c != null; c = c.getCause()) {
      if (c instanceof ConnectException) {
        return CONNECT_FAILED;
      }
      if (c instanceof SSLHandshakeException) {
        return TLS_HANDSHAKE_FAILED;
      }
    }
    String fallback = "error:" + e.getClass().getSimpleName();
    for (int depth = 0; e != null && depth < 8; depth++, e = e.getCause()) {
      String known = known(e);
      if (known != null) {
        return known;
      }
    }
    return fallback;
  }

  private static String known(Throwable e) {
    String simpleName = e.getClass().getSimpleName();
    if (e instanceof UnknownHostException) {
      return "dns_failed";
    }
    if (e instanceof MaxCallDurationExceeded) {
      return MAX_CALL_DURATION;
    }
    // Only a handshake failure (found above) proves nothing was sent; any other may come after.
    if (e instanceof SSLException) {
      return TLS_FAILED;
    }
    if (e instanceof BufferOverflowException) {
      return POOL_OVERFLOW;
    }
    if (e instanceof StreamLimitReachedException) {
      return "too_large";
    }
    if (simpleName.contains("IdleTimeout")) {
      return "idle_timeout";
    }
    if (simpleName.equals("DrainTimeoutException")) {
      return "drain_timeout";
    }
    if (simpleName.contains("ConnectionClosure") || simpleName.contains("EntityStream")) {
      return "connection_closed";
    }
    if (e instanceof StreamTcpException) {
      return CONNECTION_LOST;
    }
    if (e instanceof TimeoutException) {
      return "timeout";
    }
    return null;
  }
}
