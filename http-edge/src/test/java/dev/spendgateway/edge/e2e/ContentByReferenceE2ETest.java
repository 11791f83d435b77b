package dev.spendgateway.edge.e2e;

import static dev.spendgateway.edge.e2e.E2eGateway.TOKEN;
import static dev.spendgateway.edge.testkit.TestGateway.JSON;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.SimConfig;
import dev.spendgateway.sim.Usage;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Content the provider fetches by URL or reads from its own file store, against a real gateway and
 * the provider simulator. The probe this reproduces: a trial preview sent ten parallel 229-byte
 * calls naming a PDF URL; each reserved its bytes / 3 ($0.0007) and was billed 150,000 input tokens
 * ($0.60), so six passed and the preview spent $3.60 of its $0.60. And a {@code file_id} let any
 * caller read files stored in the shared provider account.
 *
 * <p>Two gateways: the shipped defaults (URL content off), and one with both URL switches on
 * through a config override, where the reservation must be the model's whole context window.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ContentByReferenceE2ETest {
  /** What the simulator bills, as the probe saw it: a large fetched PDF. */
  private static final Usage FETCHED_PDF = new Usage(150_000, 100, 0, 0, 0);

  private static final TestGateway.Suite SUITE =
      new TestGateway.Suite(
          "e2e-test.conf", "e2e-content", SimConfig.defaults().withUsage(FETCHED_PDF));

  private static final String PDF_URL = "https://example.com/annual-report.pdf";
  private static final String IMAGE_URL = "https://example.com/large-photo.png";

  /** The probe's Anthropic body: a document block whose source is a URL (229 bytes). */
  private static final String CLAUDE_PDF_BY_URL =
      "{\"model\":\"claude-opus-5-5\",\"max_tokens\":1000,\"messages\":[{\"role\":\"user\",\"content\":["
          + "{\"type\":\"text\",\"text\":\"Summarise.\"},"
          + "{\"type\":\"document\",\"source\":{\"type\":\"url\",\"url\":\""
          + PDF_URL
          + "\"}}]}]}";

  private static final String CHAT_IMAGE_BY_URL =
      "{\"model\":\"gpt-6.1-sol\",\"messages\":[{\"role\":\"user\",\"content\":["
          + "{\"type\":\"text\",\"text\":\"Describe.\"},"
          + "{\"type\":\"image_url\",\"image_url\":{\"url\":\""
          + IMAGE_URL
          + "\"}}]}]}";
  private static final String RESPONSES_FILE_BY_URL =
      "{\"model\":\"gpt-6.1-sol\",\"tools\":[{\"type\":\"web_search\"}],\"input\":[{\"role\":\"user\",\"content\":["
          + "{\"type\":\"input_text\",\"text\":\"Summarise.\"},"
          + "{\"type\":\"input_file\",\"file_url\":\""
          + PDF_URL
          + "\"}]}]}";
  private static final String CHAT_STORED_FILE =
      "{\"model\":\"gpt-6.1-sol\",\"messages\":[{\"role\":\"user\",\"content\":["
          + "{\"type\":\"text\",\"text\":\"Read it.\"},"
          + "{\"type\":\"file\",\"file\":{\"file_id\":\"file-abc123\"}}]}]}";
  private static final String RESPONSES_STORED_FILE =
      "{\"model\":\"gpt-6.1-sol\",\"tools\":[{\"type\":\"web_search\"}],\"input\":[{\"role\":\"user\",\"content\":["
          + "{\"type\":\"input_text\",\"text\":\"Read it.\"},"
          + "{\"type\":\"input_file\",\"file_id\":\"file-abc123\"}]}]}";
  private static final String CLAUDE_INLINE_PDF =
      "{\"model\":\"claude-opus-5-5\",\"max_tokens\":1000,\"messages\":[{\"role\":\"user\",\"content\":["
          + "{\"type\":\"text\",\"text\":\"Summarise.\"},"
          + "{\"type\":\"document\",\"source\":{\"type\":\"base64\","
          + "\"media_type\":\"application/pdf\",\"data\":\"JVBERi0xLjQK\"}}]}]}";
  private static final String CHAT_INLINE_PDF =
      "{\"model\":\"gpt-6.1-sol\",\"messages\":[{\"role\":\"user\",\"content\":["
          + "{\"type\":\"text\",\"text\":\"Summarise.\"},"
          + "{\"type\":\"file\",\"file\":{\"filename\":\"a.pdf\","
          + "\"file_data\":\"data:application/pdf;base64,JVBERi0xLjQK\"}}]}]}";

  /** A one-colour PNG of 1092 x 1092 pixels: 226 bytes, which Claude bills at ~1,590 tokens. */
  private static final String CLAUDE_INLINE_IMAGE =
      "{\"model\":\"claude-opus-5-5\",\"max_tokens\":1000,\"messages\":[{\"role\":\"user\",\"content\":["
          + "{\"type\":\"text\",\"text\":\"Describe.\"},"
          + "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\","
          + "\"data\":\"iVBORw0KGgoAAAANSUhEUgAABEQAAAREAQAAAABU/vmOAAAAqUlEQVR42u3BgQAAAADDoPlTX+AIVQEAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAfANMxgABIo9q8gAAAABJRU5ErkJggg==\"}}]}]}";

  private static final String ROUTER_IMAGE_BY_URL =
      "{\"model\":\"long-draft\",\"max_tokens\":500,\"messages\":[{\"role\":\"user\",\"content\":["
          + "{\"type\":\"text\",\"text\":\"Describe.\"},"
          + "{\"type\":\"image_url\",\"image_url\":{\"url\":\""
          + IMAGE_URL
          + "\"}}]}]}";

  private TestGateway shipped;
  private TestGateway urlsOn;

  @BeforeAll
  void start() throws Exception {
    shipped = TestGateway.start(SUITE, "shipped");
    urlsOn =
        TestGateway.start(
            SUITE,
            "urls-on",
            Map.of(
                "policy.allow-url-content.images", true,
                "policy.allow-url-content.documents", true));
  }

  @AfterAll
  void stop() throws Exception {
    if (shipped != null) {
      shipped.close();
    }
    if (urlsOn != null) {
      urlsOn.close();
    }
  }

  @BeforeEach
  void resetSimulators() {
    shipped.sim.reset();
    urlsOn.sim.reset();
  }

  static Stream<Arguments> urlContent() {
    return Stream.of(
        Arguments.of(
            "an Anthropic PDF document by URL",
            TestGateway.ANTHROPIC,
            CLAUDE_PDF_BY_URL,
            "messages[0].content[1].source.url"),
        Arguments.of(
            "an OpenAI chat image by URL",
            TestGateway.CHAT,
            CHAT_IMAGE_BY_URL,
            "messages[0].content[1].image_url.url"),
        Arguments.of(
            "a Responses file by URL",
            TestGateway.RESPONSES,
            RESPONSES_FILE_BY_URL,
            "input[0].content[1].file_url"));
  }

  @ParameterizedTest(
      name = "{0}: ten parallel trial calls all get 400 and none reaches the provider")
  @MethodSource("urlContent")
  void theTrialProbeIsRefusedBeforeAnyReservation(
      String what, String path, String body, String field) throws Exception {
    String preview = "preview-42-" + System.nanoTime();

    List<HttpResponse<String>> answers = inParallel(shipped, 10, path, body, trial(preview));

    for (HttpResponse<String> r : answers) {
      assertEquals(400, r.statusCode(), r.body());
      assertEquals("true", r.headers().firstValue("x-gateway-error").orElse(null));
      String message = JSON.readTree(r.body()).path("error").path("message").asText();
      assertTrue(message.contains(field), message);
      assertTrue(message.contains("(rule url_content)"), message);
    }
    assertTrue(shipped.sim.received().isEmpty(), "reached the provider: " + shipped.sim.received());
    assertNothingHeldFor(shipped, preview);
  }

  static Stream<Arguments> storedFiles() {
    return Stream.of(
        Arguments.of(
            "an OpenAI chat file part",
            TestGateway.CHAT,
            CHAT_STORED_FILE,
            "messages[0].content[1].file.file_id"),
        Arguments.of(
            "a Responses input_file",
            TestGateway.RESPONSES,
            RESPONSES_STORED_FILE,
            "input[0].content[1].file_id"));
  }

  @ParameterizedTest(name = "{0} naming a stored file_id gets 400 even with every URL switch on")
  @MethodSource("storedFiles")
  void aStoredFileIsNeverReadThroughTheGateway(String what, String path, String body, String field)
      throws Exception {
    for (TestGateway gw : List.of(shipped, urlsOn)) {
      HttpResponse<String> r = gw.send(gw.postJson(path, body, Brand.fresh("files")).build());

      assertEquals(400, r.statusCode(), r.body());
      String message = JSON.readTree(r.body()).path("error").path("message").asText();
      assertTrue(message.contains(field), message);
      assertTrue(message.contains("(rule file_reference)"), message);
      assertTrue(gw.sim.received().isEmpty(), "reached the provider: " + gw.sim.received());
    }
  }

  @Test
  void theFailoverRouterRefusesAUrlImageToo() throws Exception {
    HttpResponse<String> r =
        shipped.send(
            shipped
                .postJson("/v1/chat/completions", ROUTER_IMAGE_BY_URL, Brand.fresh("router"))
                .build());

    assertEquals(400, r.statusCode(), r.body());
    String message = JSON.readTree(r.body()).path("error").path("message").asText();
    assertTrue(message.contains("messages[0].content[1].image_url.url"), message);
    assertTrue(message.contains("(rule url_content)"), message);
    assertTrue(shipped.sim.received().isEmpty(), "reached the provider: " + shipped.sim.received());
  }

  @Test
  void withTheSwitchOnTheRouterStillRefusesAUrlImageItsProfileCannotHold() throws Exception {
    // The primary's whole window (400,000 tokens) is more than any shipped profile allows
    // (200,000).
    HttpResponse<String> r =
        urlsOn.send(
            urlsOn
                .postJson("/v1/chat/completions", ROUTER_IMAGE_BY_URL, Brand.fresh("router"))
                .build());

    assertEquals(400, r.statusCode(), r.body());
    assertEquals(
        "context_length_exceeded",
        JSON.readTree(r.body()).path("error").path("type").asText(),
        r.body());
    assertTrue(urlsOn.sim.received().isEmpty(), "reached the provider: " + urlsOn.sim.received());
  }

  static Stream<Arguments> urlContentReservations() {
    return Stream.of(
        // 200,000 x $5 (Opus's dearest input rate, cache write) + 1,000 x $20 per million
        Arguments.of(
            "an Anthropic PDF document by URL", TestGateway.ANTHROPIC, CLAUDE_PDF_BY_URL, "1.02"),
        // 400,000 x $2 + 32,000 (the cap written in) x $10 per million
        Arguments.of("an OpenAI chat image by URL", TestGateway.CHAT, CHAT_IMAGE_BY_URL, "1.12"),
        // as chat, + 8 searches' results (32,000 tokens x $2) + 8 x $0.01
        Arguments.of(
            "a Responses file by URL", TestGateway.RESPONSES, RESPONSES_FILE_BY_URL, "1.264"));
  }

  @ParameterizedTest(
      name = "with the switch on, {0} reserves the model's whole context window (${3})")
  @MethodSource("urlContentReservations")
  void withTheSwitchOnTheReservationIsTheWholeContextWindow(
      String what, String path, String body, String reservedUsd) throws Exception {
    assertOneCallReserved(urlsOn, path, body, new BigDecimal(reservedUsd));
  }

  static Stream<Arguments> inlineDocuments() {
    return Stream.of(
        // as by URL: 200,000 x $5 + 1,000 x $20 per million. A small PDF can fill the window: its
        // pages are billed as text and as images, and its text sits in compressed streams.
        Arguments.of("an Anthropic base64 PDF", TestGateway.ANTHROPIC, CLAUDE_INLINE_PDF, "1.02"),
        // 400,000 x $2 + 32,000 (the cap written in) x $10 per million
        Arguments.of("an OpenAI chat file_data PDF", TestGateway.CHAT, CHAT_INLINE_PDF, "1.12"));
  }

  @ParameterizedTest(name = "{0}, sent inline, reserves the model's whole context window (${3})")
  @MethodSource("inlineDocuments")
  void anInlineDocumentReservesTheWholeContextWindow(
      String what, String path, String body, String reservedUsd) throws Exception {
    assertOneCallReserved(shipped, path, body, new BigDecimal(reservedUsd));
  }

  @Test
  void anInlineImageIsReservedForItsPixelsNotItsBytes() throws Exception {
    // ~100 tokens by its bytes, ~1,590 billed: the body's bytes / 3 + 10,000 per inline image,
    // at $5 per million (Opus's dearest input rate), + 1,000 output tokens at $20 per million.
    long bytes = CLAUDE_INLINE_IMAGE.getBytes(StandardCharsets.UTF_8).length;
    long inputTokens = (bytes + 2) / 3 + 10_000;
    BigDecimal expected = BigDecimal.valueOf(inputTokens * 5 + 1_000 * 20, 6);
    assertOneCallReserved(shipped, TestGateway.ANTHROPIC, CLAUDE_INLINE_IMAGE, expected);
  }

  /** Sends one call, which reaches the provider, and checks its access line's reservation. */
  private static void assertOneCallReserved(
      TestGateway gw, String path, String body, BigDecimal reservedUsd) throws Exception {
    String requestId = "reserved-" + System.nanoTime();
    int before = gw.sim.received().size();
    HttpResponse<String> r =
        gw.send(
            gw.postJson(path, body, Brand.fresh("reserved"))
                .header("x-request-id", requestId)
                .build());

    assertEquals(200, r.statusCode(), r.body());
    assertEquals(before + 1, gw.sim.received().size());
    JsonNode line = gw.awaitAccessLine(l -> requestId.equals(l.path("request_id").asText()));
    assertEquals(
        0,
        reservedUsd.compareTo(new BigDecimal(line.path("reserved_usd").asText())),
        line.toString());
  }

  @Test
  void withTheSwitchOnTheTrialProbeCannotFitOneCallInThePreviewBudget() throws Exception {
    String preview = "preview-42-" + System.nanoTime();

    List<HttpResponse<String>> answers =
        inParallel(urlsOn, 10, TestGateway.ANTHROPIC, CLAUDE_PDF_BY_URL, trial(preview));

    for (HttpResponse<String> r : answers) {
      assertEquals(402, r.statusCode(), r.body());
      JsonNode error = JSON.readTree(r.body()).path("error");
      assertEquals("budget_exceeded", error.path("type").asText(), r.body());
      assertTrue(error.path("message").asText().contains("preview_lifetime"), r.body());
    }
    assertTrue(urlsOn.sim.received().isEmpty(), "reached the provider: " + urlsOn.sim.received());
    assertNothingHeldFor(urlsOn, preview);
  }

  /** The preview's own caps, if the ledger has any row for it, hold no spend and no reservation. */
  private static void assertNothingHeldFor(TestGateway gw, String preview) throws Exception {
    JsonNode usage = gw.usage(preview);
    assertEquals(0, usage.path("openReservations").asInt(), usage.toString());
    for (JsonNode row : usage.path("caps")) {
      if (preview.equals(row.path("subject").asText())) {
        assertEquals(0, TestGateway.money(row, "spentUsd").signum(), usage.toString());
        assertEquals(0, TestGateway.money(row, "reservedUsd").signum(), usage.toString());
      }
    }
  }

  /** The trial lane's spend headers for one preview. */
  private static Map<String, String> trial(String preview) {
    return Map.of("x-spend-lane", "trial", "x-spend-brand", preview);
  }

  private static List<HttpResponse<String>> inParallel(
      TestGateway gw, int calls, String path, String body, Map<String, String> spendHeaders) {
    List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
    for (int i = 0; i < calls; i++) {
      HttpRequest.Builder b =
          HttpRequest.newBuilder(URI.create(gw.base + path))
              .timeout(Duration.ofSeconds(20))
              .header("authorization", "Bearer " + TOKEN)
              .header("content-type", "application/json")
              .POST(HttpRequest.BodyPublishers.ofString(body));
      spendHeaders.forEach(b::header);
      sent.add(gw.http.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString()));
    }
    return sent.stream().map(CompletableFuture::join).toList();
  }
}
