package dev.spendgateway.upstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.apache.pekko.http.javadsl.model.Uri;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class UpstreamUrisTest {

  @ParameterizedTest(name = "{0} + {1}")
  @CsvSource({
    "https://api.anthropic.com, /v1/messages",
    "https://api.anthropic.com, /v1/messages?beta=true",
    "http://127.0.0.1:9100, /v1/chat/completions",
    "https://proxy.example:8443/openai, /v1/responses",
    "http://[::1]:9100, /v1/audio/transcriptions",
  })
  void theUriIsTheOneParsedFromTheJoinedString(String base, String path) {
    UpstreamUris uris = new UpstreamUris(base);
    Uri expected = Uri.create(base + path);
    assertEquals(expected, uris.of(path));
    assertSame(uris.of(path), uris.of(path), "parsed once, then reused");
  }

  @Test
  void pastTheBoundPathsAreParsedButNotKept() {
    UpstreamUris uris = new UpstreamUris("http://127.0.0.1:9100");
    for (int i = 0; i < UpstreamUris.MAX_KEPT + 50; i++) {
      assertEquals(Uri.create("http://127.0.0.1:9100/v1/x" + i), uris.of("/v1/x" + i));
    }
    assertEquals(UpstreamUris.MAX_KEPT, uris.kept());
  }
}
