package dev.spendgateway.upstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class RateLimitHeadersTest {
  @ParameterizedTest(name = "{0}: {1} -> {2} {3} = {4}")
  @CsvSource(
      nullValues = "none",
      value = {
        "x-ratelimit-remaining-requests,                499,      remaining, requests,      499",
        "x-ratelimit-limit-requests,                    500,      limit,     requests,      500",
        "x-ratelimit-remaining-tokens,                  149984,   remaining, tokens,        149984",
        "X-RateLimit-Limit-Tokens,                      150000,   limit,     tokens,        150000",
        "anthropic-ratelimit-requests-remaining,        49,       remaining, requests,      49",
        "anthropic-ratelimit-tokens-limit,              80000,    limit,     tokens,        80000",
        "anthropic-ratelimit-input-tokens-remaining,    39000,    remaining, input_tokens,  39000",
        "anthropic-ratelimit-output-tokens-limit,       8000,     limit,     output_tokens, 8000",
        "x-ratelimit-reset-requests,                    1s,       none,      none,          none",
        "anthropic-ratelimit-requests-reset,            2026-12-01T00:00:00Z, none, none,  none",
        "x-ratelimit-remaining-images,                  5,        none,      none,          none",
        "x-ratelimit-remaining-tokens,                  lots,     none,      none,          none",
        "x-ratelimit-remaining-tokens,                  -1,       none,      none,          none",
        "retry-after,                                   5,        none,      none,          none",
      })
  void readsOneHeader(String name, String value, String kind, String resource, Long expected) {
    RateLimitHeaders.Reading r = RateLimitHeaders.read(List.of(RawHeader.create(name, value)));
    if (kind == null) {
      assertTrue(r.isEmpty(), name + " is not a rate-limit count");
      return;
    }
    Map<String, Long> side = kind.equals("remaining") ? r.remaining() : r.limit();
    assertEquals(Map.of(resource, expected), side);
  }

  @Test
  void readsAWholeOpenAiAnswer() {
    List<HttpHeader> headers = new ArrayList<>();
    headers.add(RawHeader.create("x-ratelimit-limit-requests", "500"));
    headers.add(RawHeader.create("x-ratelimit-remaining-requests", "499"));
    headers.add(RawHeader.create("x-ratelimit-limit-tokens", "30000"));
    headers.add(RawHeader.create("x-ratelimit-remaining-tokens", "29000"));
    headers.add(RawHeader.create("x-ratelimit-reset-tokens", "2s"));
    RateLimitHeaders.Reading r = RateLimitHeaders.read(headers);
    assertEquals(Map.of("requests", 499L, "tokens", 29000L), r.remaining());
    assertEquals(Map.of("requests", 500L, "tokens", 30000L), r.limit());
  }
}
