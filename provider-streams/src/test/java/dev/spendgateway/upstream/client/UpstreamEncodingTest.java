package dev.spendgateway.upstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.spendgateway.upstream.client.UpstreamEncoding.Decision;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class UpstreamEncodingTest {

  /** Content-encoding headers as "value|value" (one header each); an empty cell means none. */
  @ParameterizedTest(name = "content-encoding [{0}] -> {1} ({2})")
  @CsvSource(
      delimiter = ';',
      value = {
        "               ; AS_IS   ; no encoding: the body is what it says",
        "identity       ; AS_IS   ; identity is no encoding",
        "gzip           ; GZIP    ; what a provider that compresses anyway sends",
        "GZip           ; GZIP    ; codings are case-insensitive",
        "x-gzip         ; GZIP    ; the old alias",
        "deflate        ; DEFLATE ; Pekko HTTP decodes it too",
        "identity, gzip ; GZIP    ; identity adds nothing",
        "br             ; REFUSE  ; no decoder: never pass undecodable bytes on",
        "zstd           ; REFUSE  ; no decoder",
        "compress       ; REFUSE  ; no decoder",
        "gzip, gzip     ; REFUSE  ; stacked codings are not undone halfway",
        "gzip|br        ; REFUSE  ; stacked across headers too",
        "something-new  ; REFUSE  ; an allow-list, not a deny-list",
      })
  void decision(String headers, Decision expected, String reason) {
    List<String> values = headers == null ? List.of() : Arrays.asList(headers.split("\\|"));
    assertEquals(expected, UpstreamEncoding.decide(values), reason);
  }
}
