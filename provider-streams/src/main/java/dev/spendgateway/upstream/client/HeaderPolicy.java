package dev.spendgateway.upstream.client;

import dev.spendgateway.policy.catalog.Provider;
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
 * Forwarded: {@code accept}, {@code user-agent}, {@code x-stainless-*} (the official SDKs'
 * telemetry: language, OS, package version, retry count, timeout — harmless and it helps the
 * provider's support), and per provider {@code anthropic-version} and {@code anthropic-beta}
 * (values filtered by {@code providers.anthropic.allowed-betas}) for Anthropic, {@code
 * openai-beta} for OpenAI. Content type and length travel with the entity.
 *
 * <p>Never forwarded, among everything else: the gateway token ({@code authorization}, {@code
 * x-api-key}), any other credential, {@code cookie}, {@code x-forwarded-*}/{@code forwarded},
 * hop-by-hop headers ({@code connection}, {@code keep-alive}, {@code te}, {@code trailer}, {@code
 * transfer-encoding}, {@code upgrade}, {@code proxy-*}), {@code host}, {@code x-spend-*}, {@code
 * x-request-id} (the gateway's own correlation id), {@code accept-encoding} (a compressed SSE body
 * could not be read by the usage tap), {@code openai-organization}/{@code openai-project} (would
 * let a caller pick which of our projects pays) and {@code idempotency-key} (shared across every
 * caller of our one key: one service could receive another's cached answer).
 *
 * <p>Then the real key is added: {@code Authorization: Bearer} for OpenAI, {@code x-api-key} plus
 * a default {@code anthropic-version} for Anthropic.
 *
 * <h2>Provider → caller</h2>
 *
 * Passed back: {@code retry-after}, {@code retry-after-ms}, {@code x-request-id} (renamed {@code
 * x-upstream-request-id}: the gateway answers with its own {@code x-request-id}, and two headers of
 * that name would leave a caller guessing which one to quote), {@code request-id}, {@code x-ratelimit-*}, {@code anthropic-ratelimit-*}, {@code openai-processing-ms}
 * (content type travels with the entity). Never: {@code set-cookie}, hop-by-hop headers, the
 * providers' organisation headers, or anything else.
 */
public final class HeaderPolicy {

  private static final Set<String> REQUEST_ANY_PROVIDER = Set.of("accept", "user-agent");
  private static final Set<String> REQUEST_ANTHROPIC = Set.of("anthropic-version", "anthropic-beta");
  private static final Set<String> REQUEST_OPENAI = Set.of("openai-beta");
  private static final String SDK_TELEMETRY_PREFIX = "x-stainless-";

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

  /** Whether a caller's header (lower-case name) may be forwarded to {@code provider}. */
  public static boolean isForwardedRequestHeader(Provider provider, String lowercaseName) {
    if (REQUEST_ANY_PROVIDER.contains(lowercaseName)
        || lowercaseName.startsWith(SDK_TELEMETRY_PREFIX)) {
      return true;
    }
    return switch (provider) {
      case ANTHROPIC -> REQUEST_ANTHROPIC.contains(lowercaseName);
      case OPENAI -> REQUEST_OPENAI.contains(lowercaseName);
    };
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
   * The headers to send upstream: the caller's allowed headers (betas filtered), then the real
   * key. {@code settings} supplies the key, the default version and the allowed betas.
   */
  public static List<HttpHeader> upstreamRequestHeaders(
      ProviderSettings settings, Iterable<HttpHeader> callerHeaders) {
    List<HttpHeader> out = new ArrayList<>();
    boolean hasVersion = false;
    for (HttpHeader header : callerHeaders) {
      String name = header.lowercaseName();
      if (!isForwardedRequestHeader(settings.provider(), name)) {
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
    addCredentials(settings, hasVersion, out);
    return out;
  }

  /** The provider's response headers the caller may see. */
  public static List<HttpHeader> passedBackResponseHeaders(Iterable<HttpHeader> upstreamHeaders) {
    List<HttpHeader> out = new ArrayList<>();
    for (HttpHeader header : upstreamHeaders) {
      if (header.is(OPENAI_REQUEST_ID)) {
        out.add(org.apache.pekko.http.javadsl.model.headers.RawHeader.create(UPSTREAM_REQUEST_ID, header.value()));
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
