package dev.spendgateway.upstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.spendgateway.policy.catalog.Provider;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HeaderPolicyTest {

  /** The shipped providers.conf: the table below is a test of its allow-lists. */
  private static final UpstreamSettings SHIPPED =
      UpstreamSettings.fromConfig(UpstreamSettingsTest.shippedConfig());

  @ParameterizedTest(name = "to {0}: {1} forwarded={2} ({3})")
  @CsvSource({
    "ANTHROPIC, accept,                      true,  content negotiation",
    "OPENAI,    user-agent,                  true,  harmless client identification",
    "ANTHROPIC, x-stainless-lang,            true,  vetted SDK telemetry",
    "OPENAI,    x-stainless-retry-count,     true,  vetted SDK telemetry",
    "OPENAI,    x-stainless-os-version,      true,  vetted SDK telemetry",
    "OPENAI,    x-stainless-authorization,   false, a credential dressed as telemetry",
    "ANTHROPIC, x-stainless-authorization,   false, a credential dressed as telemetry",
    "OPENAI,    x-stainless-foo,             false, telemetry nobody vetted",
    "ANTHROPIC, x-stainless-helper,          false, telemetry nobody vetted",
    "ANTHROPIC, anthropic-version,           true,  selects the API version",
    "OPENAI,    anthropic-version,           false, another provider's header",
    "ANTHROPIC, anthropic-beta,              true,  forwarded but values filtered",
    "OPENAI,    openai-beta,                 false, switches on stateful beta APIs (assistants=v2)",
    "ANTHROPIC, openai-beta,                 false, another provider's header",
    "ANTHROPIC, x-api-key,                   false, the gateway token",
    "OPENAI,    authorization,               false, the gateway token",
    "OPENAI,    proxy-authorization,         false, a credential and hop-by-hop",
    "OPENAI,    cookie,                      false, a credential",
    "ANTHROPIC, x-forwarded-for,             false, internal topology",
    "ANTHROPIC, forwarded,                   false, internal topology",
    "OPENAI,    connection,                  false, hop-by-hop",
    "OPENAI,    keep-alive,                  false, hop-by-hop",
    "OPENAI,    te,                          false, hop-by-hop",
    "OPENAI,    trailer,                     false, hop-by-hop",
    "OPENAI,    transfer-encoding,           false, hop-by-hop",
    "OPENAI,    upgrade,                     false, hop-by-hop",
    "ANTHROPIC, host,                        false, set by the client",
    "ANTHROPIC, content-length,              false, travels with the entity",
    "OPENAI,    accept-encoding,             false, the gateway asks for identity itself",
    "ANTHROPIC, x-spend-lane,                false, gateway spend header",
    "ANTHROPIC, x-spend-brand,               false, gateway spend header",
    "OPENAI,    x-request-id,                false, the gateway's correlation id",
    "OPENAI,    openai-organization,         false, would choose who pays",
    "OPENAI,    openai-project,              false, would choose who pays",
    "OPENAI,    idempotency-key,             false, shared key: cross-caller replay",
    "ANTHROPIC, x-some-new-header,           false, not on the allow-list",
  })
  void requestHeaders(Provider provider, String name, boolean forwarded, String reason) {
    assertEquals(
        forwarded, HeaderPolicy.isForwardedRequestHeader(SHIPPED.provider(provider), name), reason);
  }

  @ParameterizedTest(name = "forward-headers may not list {0}")
  @CsvSource({
    "authorization,     the gateway sets the credential",
    "x-api-key,         the gateway sets the credential",
    "accept-encoding,   the gateway asks for identity",
    "host,              set by the client",
    "content-length,    travels with the entity",
    "x-stainless-*,     a wildcard: every name would pass",
    "X-Stainless-Lang,  names are matched lower-case",
  })
  void theAllowListRefusesNamesTheGatewayOwnsAndPatterns(String name, String reason) {
    assertThrows(
        IllegalArgumentException.class,
        () -> settings(Provider.OPENAI, Set.of(), Set.of("accept", name)),
        reason);
  }

  @ParameterizedTest(name = "{0} passed back={1} ({2})")
  @CsvSource({
    "retry-after,                         true,  client backs off",
    "retry-after-ms,                      true,  client backs off",
    "x-request-id,                        true,  OpenAI request id",
    "request-id,                          true,  Anthropic request id",
    "x-ratelimit-remaining-requests,      true,  OpenAI rate limits",
    "x-ratelimit-reset-tokens,            true,  OpenAI rate limits",
    "anthropic-ratelimit-tokens-remaining,true,  Anthropic rate limits",
    "openai-processing-ms,                true,  latency hint",
    "set-cookie,                          false, never",
    "connection,                          false, hop-by-hop",
    "transfer-encoding,                   false, hop-by-hop",
    "openai-organization,                 false, names our account",
    "anthropic-organization-id,           false, names our account",
    "cf-ray,                              false, not on the allow-list",
  })
  void responseHeaders(String name, boolean passedBack, String reason) {
    assertEquals(passedBack, HeaderPolicy.isPassedBackResponseHeader(name), reason);
  }

  private static ProviderSettings settings(Provider provider, Set<String> betas) {
    return settings(provider, betas, SHIPPED.provider(provider).forwardHeaders());
  }

  private static ProviderSettings settings(
      Provider provider, Set<String> betas, Set<String> forwarded) {
    return new ProviderSettings(
        provider,
        "https://example.invalid",
        Secret.of("sk-real-" + provider.wireName()),
        Duration.ofSeconds(1),
        Duration.ofSeconds(1),
        Duration.ofSeconds(2),
        4,
        16,
        ProviderSettings.DEFAULT_ANTHROPIC_VERSION,
        betas,
        forwarded);
  }

  private static Map<String, String> byName(List<HttpHeader> headers) {
    return headers.stream().collect(Collectors.toMap(HttpHeader::lowercaseName, HttpHeader::value));
  }

  private static final List<HttpHeader> CALLER =
      List.of(
          RawHeader.create("Authorization", "Bearer gateway-token"),
          RawHeader.create("x-api-key", "gateway-token"),
          RawHeader.create("Cookie", "session=1"),
          RawHeader.create("X-Forwarded-For", "10.0.0.1"),
          RawHeader.create("x-spend-lane", "app"),
          RawHeader.create("Accept", "text/event-stream"),
          RawHeader.create("Accept-Encoding", "gzip, br"),
          RawHeader.create("x-stainless-os", "Linux"),
          RawHeader.create("x-stainless-authorization", "Bearer caller-secret"),
          RawHeader.create("openai-beta", "assistants=v2"));

  @Test
  void openAiGetsTheRealBearerKeyAndNoGatewayToken() {
    Map<String, String> sent =
        byName(HeaderPolicy.upstreamRequestHeaders(settings(Provider.OPENAI, Set.of()), CALLER));
    assertEquals(
        Map.of(
            "authorization", "Bearer sk-real-openai",
            "accept", "text/event-stream",
            "accept-encoding", "identity",
            "x-stainless-os", "Linux"),
        sent);
  }

  @Test
  void anthropicGetsTheRealKeyAndADefaultVersion() {
    Map<String, String> sent =
        byName(HeaderPolicy.upstreamRequestHeaders(settings(Provider.ANTHROPIC, Set.of()), CALLER));
    assertEquals(
        Map.of(
            "x-api-key", "sk-real-anthropic",
            "anthropic-version", "2023-06-01",
            "accept", "text/event-stream",
            "accept-encoding", "identity",
            "x-stainless-os", "Linux"),
        sent);
  }

  @Test
  void anthropicKeepsTheCallersVersionAndOnlyAllowedBetas() {
    List<HttpHeader> caller =
        List.of(
            RawHeader.create("anthropic-version", "2024-01-01"),
            RawHeader.create(
                "anthropic-beta", "context-1m-2025-08-07, fine-beta,code-execution-2025-05-22"));
    Map<String, String> sent =
        byName(
            HeaderPolicy.upstreamRequestHeaders(
                settings(Provider.ANTHROPIC, Set.of("fine-beta")), caller));
    assertEquals("2024-01-01", sent.get("anthropic-version"));
    assertEquals("fine-beta", sent.get("anthropic-beta"));
  }

  @Test
  void everyBetaHeaderIsFilteredNotOnlyTheFirst() {
    List<HttpHeader> caller =
        List.of(
            RawHeader.create("anthropic-beta", "fine-beta"),
            RawHeader.create("anthropic-beta", "code-execution-2025-08-25"),
            RawHeader.create("anthropic-beta", "other-fine, mcp-client-2025-04-04"));
    List<String> sent =
        HeaderPolicy.upstreamRequestHeaders(
                settings(Provider.ANTHROPIC, Set.of("fine-beta", "other-fine")), caller)
            .stream()
            .filter(h -> h.is("anthropic-beta"))
            .map(HttpHeader::value)
            .toList();
    assertEquals(List.of("fine-beta", "other-fine"), sent);
  }

  @Test
  void aBetaHeaderWithNoAllowedValueIsDropped() {
    List<HttpHeader> caller = List.of(RawHeader.create("anthropic-beta", "mcp-client-2025-04-04"));
    assertFalse(
        byName(HeaderPolicy.upstreamRequestHeaders(settings(Provider.ANTHROPIC, Set.of()), caller))
            .containsKey("anthropic-beta"));
  }

  @Test
  void noKeyConfiguredSendsNoCredentialAtAll() {
    ProviderSettings keyless =
        new ProviderSettings(
            Provider.OPENAI,
            "http://127.0.0.1:1",
            Secret.of(""),
            Duration.ofSeconds(1),
            Duration.ofSeconds(1),
            Duration.ofSeconds(1),
            1,
            1,
            "v",
            Set.of(),
            Set.of("accept"));
    assertFalse(
        byName(HeaderPolicy.upstreamRequestHeaders(keyless, CALLER)).containsKey("authorization"));
  }

  @Test
  void responseHeadersAreFilteredToTheAllowList() {
    List<HttpHeader> upstream =
        List.of(
            RawHeader.create("Retry-After", "3"),
            RawHeader.create("request-id", "req_1"),
            RawHeader.create("Set-Cookie", "a=b"),
            RawHeader.create("anthropic-organization-id", "org"));
    assertEquals(
        Map.of("retry-after", "3", "request-id", "req_1"),
        byName(HeaderPolicy.passedBackResponseHeaders(upstream)));
  }
}
