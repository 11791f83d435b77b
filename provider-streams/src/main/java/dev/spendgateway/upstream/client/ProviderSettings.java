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
    Duration keepAliveTimeout) {

  public static final String DEFAULT_ANTHROPIC_VERSION = "2023-06-01";

  /** {@code keep-alive-timeout}'s default: below the 60 s and more after which providers close. */
  public static final Duration DEFAULT_KEEP_ALIVE_TIMEOUT = Duration.ofSeconds(30);

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
            : DEFAULT_KEEP_ALIVE_TIMEOUT);
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
        keepAliveTimeout);
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
        keepAliveTimeout);
  }
}
