package dev.spendgateway.upstream.client;

import com.typesafe.config.Config;
import dev.spendgateway.policy.catalog.Provider;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * One provider's upstream settings ({@code providers.openai} / {@code providers.anthropic} in
 * {@code conf/providers.conf}). The key is a {@link Secret}, so printing these is safe.
 *
 * @param baseUrl scheme, host, port and optional path prefix, without trailing slash
 * @param apiKey the real provider key; empty when none is configured (e.g. the demo simulator)
 * @param anthropicVersion {@code anthropic-version} sent when the caller sent none (Anthropic)
 * @param allowedBetas {@code anthropic-beta} values a caller may switch on (Anthropic)
 * @param forwardHeaders the caller headers (lower-case names, exact: no prefixes) sent on to this
 *     provider; everything else stays home
 * @param keepAliveTimeout how long a pooled connection may sit unused before the gateway closes it;
 *     below the provider's own idle close, so a connection it already closed is never reused
 * @param http2 whether calls go to the provider as HTTP/2 streams on a few connections ({@code
 *     http2}: off, prior-knowledge for http base URLs, alpn for https ones)
 * @param http2Connections HTTP/2 connections the gateway may hold to this provider at once
 * @param http2StreamsPerConnection calls one HTTP/2 connection carries at once; at most what the
 *     provider advertises as its max-concurrent-streams
 */
public record ProviderSettings(
    Provider provider,
    String baseUrl,
    Optional<Secret> apiKey,
    Duration connectTimeout,
    Duration responseStartTimeout,
    Duration idleTimeout,
    int maxConnections,
    int maxOpenRequests,
    String anthropicVersion,
    Set<String> allowedBetas,
    Set<String> forwardHeaders,
    Duration keepAliveTimeout,
    Http2Mode http2,
    int http2Connections,
    int http2StreamsPerConnection) {

  public static final String DEFAULT_ANTHROPIC_VERSION = "2023-06-01";

  /** {@code keep-alive-timeout}'s default: below the 60 s and more after which providers close. */
  public static final Duration DEFAULT_KEEP_ALIVE_TIMEOUT = Duration.ofSeconds(30);

  /** {@code http2-connections}' default (see conf/providers.conf). */
  public static final int DEFAULT_HTTP2_CONNECTIONS = 100;

  /**
   * {@code http2-streams-per-connection}'s default: 100, the least HTTP/2 asks a server to allow
   * (RFC 9113 section 6.5.2), so a provider never refuses a stream the gateway opened.
   */
  public static final int DEFAULT_HTTP2_STREAMS_PER_CONNECTION = 100;

  /** How calls reach a provider: HTTP/1.1, or HTTP/2 (cleartext with prior knowledge, or TLS). */
  public enum Http2Mode {
    /** HTTP/1.1: one pooled connection per open call. */
    OFF("off"),
    /** HTTP/2 without TLS (h2c), the provider known to speak it: http base URLs only. */
    PRIOR_KNOWLEDGE("prior-knowledge"),
    /** HTTP/2 over TLS, agreed in the handshake (ALPN): https base URLs only. */
    ALPN("alpn");

    private final String configValue;

    Http2Mode(String configValue) {
      this.configValue = configValue;
    }

    public String configValue() {
      return configValue;
    }

    static Http2Mode parse(Provider provider, String value) {
      for (Http2Mode mode : values()) {
        if (mode.configValue.equals(value)) {
          return mode;
        }
      }
      throw new IllegalArgumentException(
          provider.wireName()
              + ".http2 = '"
              + value
              + "': must be off, prior-knowledge (http base URL) or alpn (https base URL)");
    }
  }

  /** A header name as HTTP spells it, lower-case; no wildcard can slip into the allow-list. */
  private static final java.util.regex.Pattern HEADER_NAME =
      java.util.regex.Pattern.compile("[a-z0-9][a-z0-9-]*");

  /**
   * Headers the gateway writes itself on every upstream call: the credential, the encoding it can
   * read, and what travels with the connection or the entity. Listing one as forwarded would send
   * the caller's copy next to (or instead of) the gateway's.
   */
  private static final Set<String> SET_BY_THE_GATEWAY =
      Set.of(
          "authorization",
          "x-api-key",
          "accept-encoding",
          "host",
          "content-type",
          "content-length",
          "transfer-encoding",
          "connection");

  public ProviderSettings {
    URI uri = URI.create(baseUrl);
    if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme())) {
      throw new IllegalArgumentException(provider.wireName() + ".base-url must be http(s)");
    }
    if (uri.getHost() == null || uri.getRawQuery() != null || uri.getUserInfo() != null) {
      throw new IllegalArgumentException(
          provider.wireName() + ".base-url needs a host and no query or user-info");
    }
    baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    if (idleTimeout.compareTo(responseStartTimeout) < 0) {
      throw new IllegalArgumentException(
          provider.wireName() + ".idle-timeout must be >= response-start-timeout");
    }
    if (maxConnections < 1 || maxOpenRequests < 1 || Integer.bitCount(maxOpenRequests) != 1) {
      throw new IllegalArgumentException(
          provider.wireName() + ": max-connections >= 1, max-open-requests a power of two");
    }
    allowedBetas = Set.copyOf(allowedBetas);
    for (String name : forwardHeaders) {
      if (!HEADER_NAME.matcher(name).matches() || SET_BY_THE_GATEWAY.contains(name)) {
        throw new IllegalArgumentException(
            provider.wireName()
                + ".forward-headers: '"
                + name
                + "' must be a lower-case header name"
                + " the gateway does not set itself (not one of "
                + new java.util.TreeSet<>(SET_BY_THE_GATEWAY)
                + ")");
      }
    }
    forwardHeaders = Set.copyOf(forwardHeaders);
    if (keepAliveTimeout.isNegative() || keepAliveTimeout.isZero()) {
      throw new IllegalArgumentException(provider.wireName() + ".keep-alive-timeout must be > 0");
    }
    boolean tls = "https".equals(uri.getScheme());
    if ((http2 == Http2Mode.PRIOR_KNOWLEDGE && tls) || (http2 == Http2Mode.ALPN && !tls)) {
      throw new IllegalArgumentException(
          provider.wireName()
              + ".http2 = "
              + http2.configValue()
              + " does not fit base-url "
              + baseUrl
              + ": prior-knowledge is for http base URLs, alpn for https ones");
    }
    if (http2Connections < 1 || http2StreamsPerConnection < 1) {
      throw new IllegalArgumentException(
          provider.wireName() + ": http2-connections and http2-streams-per-connection >= 1");
    }
  }

  /** With the default {@link #DEFAULT_KEEP_ALIVE_TIMEOUT}, HTTP/1.1. */
  public ProviderSettings(
      Provider provider,
      String baseUrl,
      Optional<Secret> apiKey,
      Duration connectTimeout,
      Duration responseStartTimeout,
      Duration idleTimeout,
      int maxConnections,
      int maxOpenRequests,
      String anthropicVersion,
      Set<String> allowedBetas,
      Set<String> forwardHeaders,
      Duration keepAliveTimeout) {
    this(
        provider,
        baseUrl,
        apiKey,
        connectTimeout,
        responseStartTimeout,
        idleTimeout,
        maxConnections,
        maxOpenRequests,
        anthropicVersion,
        allowedBetas,
        forwardHeaders,
        keepAliveTimeout,
        Http2Mode.OFF,
        DEFAULT_HTTP2_CONNECTIONS,
        DEFAULT_HTTP2_STREAMS_PER_CONNECTION);
  }

  /** With the default {@link #DEFAULT_KEEP_ALIVE_TIMEOUT}. */
  public ProviderSettings(
      Provider provider,
      String baseUrl,
      Optional<Secret> apiKey,
      Duration connectTimeout,
      Duration responseStartTimeout,
      Duration idleTimeout,
      int maxConnections,
      int maxOpenRequests,
      String anthropicVersion,
      Set<String> allowedBetas,
      Set<String> forwardHeaders) {
    this(
        provider,
        baseUrl,
        apiKey,
        connectTimeout,
        responseStartTimeout,
        idleTimeout,
        maxConnections,
        maxOpenRequests,
        anthropicVersion,
        allowedBetas,
        forwardHeaders,
        DEFAULT_KEEP_ALIVE_TIMEOUT);
  }

  /** Reads one provider block, e.g. {@code config.getConfig("providers.openai")}. */
  public static ProviderSettings fromConfig(Provider provider, Config c) {
    return new ProviderSettings(
        provider,
        c.getString("base-url"),
        Secret.of(c.getString("api-key")),
        c.getDuration("connect-timeout"),
        c.getDuration("response-start-timeout"),
        c.getDuration("idle-timeout"),
        c.getInt("max-connections"),
        c.getInt("max-open-requests"),
        c.hasPath("default-version") ? c.getString("default-version") : DEFAULT_ANTHROPIC_VERSION,
        c.hasPath("allowed-betas") ? Set.copyOf(c.getStringList("allowed-betas")) : Set.of(),
        Set.copyOf(c.getStringList("forward-headers")),
        c.hasPath("keep-alive-timeout")
            ? c.getDuration("keep-alive-timeout")
            : DEFAULT_KEEP_ALIVE_TIMEOUT,
        c.hasPath("http2") ? Http2Mode.parse(provider, c.getString("http2")) : Http2Mode.OFF,
        c.hasPath("http2-connections") ? c.getInt("http2-connections") : DEFAULT_HTTP2_CONNECTIONS,
        c.hasPath("http2-streams-per-connection")
            ? c.getInt("http2-streams-per-connection")
            : DEFAULT_HTTP2_STREAMS_PER_CONNECTION);
  }

  /** True when calls go to this provider as HTTP/2 streams. */
  public boolean isHttp2() {
    return http2 != Http2Mode.OFF;
  }

  /** A copy speaking HTTP/2 in {@code mode} (or HTTP/1.1 for {@link Http2Mode#OFF}). */
  public ProviderSettings withHttp2(Http2Mode mode, int connections, int streamsPerConnection) {
    return new ProviderSettings(
        provider,
        baseUrl,
        apiKey,
        connectTimeout,
        responseStartTimeout,
        idleTimeout,
        maxConnections,
        maxOpenRequests,
        anthropicVersion,
        allowedBetas,
        forwardHeaders,
        keepAliveTimeout,
        mode,
        connections,
        streamsPerConnection);
  }

  public boolean isTls() {
    return baseUrl.startsWith("https:");
  }

  /** A copy with another base URL (tests, simulator). */
  public ProviderSettings withBaseUrl(String url) {
    return new ProviderSettings(
        provider,
        url,
        apiKey,
        connectTimeout,
        responseStartTimeout,
        idleTimeout,
        maxConnections,
        maxOpenRequests,
        anthropicVersion,
        allowedBetas,
        forwardHeaders,
        keepAliveTimeout,
        http2,
        http2Connections,
        http2StreamsPerConnection);
  }

  /** A copy with another response-start timeout (and an idle timeout at least as long). */
  public ProviderSettings withResponseStartTimeout(Duration timeout) {
    Duration idle = idleTimeout.compareTo(timeout) < 0 ? timeout : idleTimeout;
    return new ProviderSettings(
        provider,
        baseUrl,
        apiKey,
        connectTimeout,
        timeout,
        idle,
        maxConnections,
        maxOpenRequests,
        anthropicVersion,
        allowedBetas,
        forwardHeaders,
        keepAliveTimeout,
        http2,
        http2Connections,
        http2StreamsPerConnection);
  }
}
