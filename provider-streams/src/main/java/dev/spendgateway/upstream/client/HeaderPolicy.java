package dev.spendgateway.upstream.client;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.headers.Authorization;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;

/**
 * Which headers cross the gateway, in each direction. Pure functions; allow-lists, never
 * deny-lists, so a header nobody thought of stays home.
 *
 * <h2>Caller → provider</h2>
 *
 * Forwarded: exactly the names in the provider's {@code forward-headers} ({@code
 * conf/providers.conf}, each entry justified there) — exact names, no prefixes, so an unknown
 * {@code x-stainless-…} name or a credential dressed as telemetry stays home. {@code
 * anthropic-beta} values are further filtered by {@code providers.anthropic.allowed-betas}, every
 * instance of the header and every comma-separated value. Content type and length travel with the
 * entity.
 *
 * <p>Then the gateway's own headers are added: {@code accept-encoding: identity} (the usage tap
 * reads the body as it streams; a provider that compresses anyway is decoded by {@link
 * UpstreamClient}) and the real key — {@code Authorization: Bearer} for OpenAI, {@code x-api-key}
 * plus a default {@code anthropic-version} for Anthropic.
 *
 * <h2>Provider → caller</h2>
 *
 * Passed back: {@code retry-after}, {@code retry-after-ms}, {@code x-request-id} (renamed {@code
 * x-upstream-request-id}: the gateway answers with its own {@code x-request-id}, and two headers of
 * that name would leave a caller guessing which one to quote), {@code request-id}, {@code
 * x-ratelimit-*}, {@code anthropic-ratelimit-*}, {@code openai-processing-ms} (content type travels
 * with the entity). Never: {@code set-cookie}, {@code content-encoding} (the body is handed on
 * decoded), hop-by-hop headers, the providers' organisation headers, or anything else.
 */
public final class HeaderPolicy {

  private static final Set<String> RESPONSE_EXACT =
      Set.of("retry-after", "retry-after-ms", "x-request-id", "request-id", "openai-processing-ms");
  private static final List<String> RESPONSE_PREFIXES =
      List.of("x-ratelimit-", "anthropic-ratelimit-");

  private static final String OPENAI_REQUEST_ID = "x-request-id";

  /** Where the provider's {@code x-request-id} goes, so the gateway's own keeps its name. */
  public static final String UPSTREAM_REQUEST_ID = "x-upstream-request-id";

  private static final String ANTHROPIC_BETA = "anthropic-beta";
  private static final String ANTHROPIC_VERSION = "anthropic-version";

  private HeaderPolicy() {}

  /** The only encoding the gateway asks for: the usage tap reads bodies as they stream. */
  static final HttpHeader IDENTITY_ENCODING = RawHeader.create("accept-encoding", "identity");

  /** Whether a caller's header (lower-case name) may be forwarded to {@code settings}' provider. */
  public static boolean isForwardedRequestHeader(ProviderSettings settings, String lowercaseName) {
    return settings.forwardHeaders().contains(lowercaseName);
  }

  /** Whether a provider's response header (lower-case name) goes back to the caller. */
  public static boolean isPassedBackResponseHeader(String lowercaseName) {
    if (RESPONSE_EXACT.contains(lowercaseName)) {
      return true;
    }
    // A plain loop: this runs for every header of every answer (a stream here showed in profiles).
    for (String prefix : RESPONSE_PREFIXES) {
      if (lowercaseName.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  /**
   * The headers to send upstream: the caller's allowed headers (betas filtered), then the real key.
   * {@code settings} supplies the key, the default version and the allowed betas.
   */
  public static List<HttpHeader> upstreamRequestHeaders(
      ProviderSettings settings, Iterable<HttpHeader> callerHeaders) {
    List<HttpHeader> out = new ArrayList<>();
    boolean hasVersion = false;
    for (HttpHeader header : callerHeaders) {
      String name = header.lowercaseName();
      if (!isForwardedRequestHeader(settings, name)) {
        continue;
      }
      if (name.equals(ANTHROPIC_BETA)) {
        allowedBetas(header.value(), settings.allowedBetas())
            .ifPresent(v -> out.add(RawHeader.create(ANTHROPIC_BETA, v)));
        continue;
      }
      hasVersion |= name.equals(ANTHROPIC_VERSION);
      out.add(header);
    }
    out.add(IDENTITY_ENCODING);
    addCredentials(settings, hasVersion, out);
    return out;
  }

  /** The provider's response headers the caller may see. */
  public static List<HttpHeader> passedBackResponseHeaders(Iterable<HttpHeader> upstreamHeaders) {
    List<HttpHeader> out = new ArrayList<>();
    for (HttpHeader header : upstreamHeaders) {
      if (header.is(OPENAI_REQUEST_ID)) {
        out.add(RawHeader.create(UPSTREAM_REQUEST_ID, header.value()));
      } else if (isPassedBackResponseHeader(header.lowercaseName())) {
        out.add(header);
      }
    }
    return out;
  }

  /** The comma-separated beta values that are allowed, or empty when none is. */
  static java.util.Optional<String> allowedBetas(String headerValue, Set<String> allowed) {
    String kept =
        Arrays.stream(headerValue.split(","))
            .map(String::strip)
            .filter(allowed::contains)
            .collect(Collectors.joining(","));
    return kept.isEmpty() ? java.util.Optional.empty() : java.util.Optional.of(kept);
  }

  private static void addCredentials(
      ProviderSettings settings, boolean callerSentVersion, List<HttpHeader> out) {
    switch (settings.provider()) {
      case OPENAI ->
          settings.apiKey().ifPresent(key -> out.add(Authorization.oauth2(key.reveal())));
      case ANTHROPIC -> {
        settings.apiKey().ifPresent(key -> out.add(RawHeader.create("x-api-key", key.reveal())));
        if (!callerSentVersion) {
          out.add(RawHeader.create(ANTHROPIC_VERSION, settings.anthropicVersion()));
        }
      }
    }
  }
}
