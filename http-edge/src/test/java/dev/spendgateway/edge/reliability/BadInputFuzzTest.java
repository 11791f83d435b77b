package dev.spendgateway.edge.reliability;

import static dev.spendgateway.edge.reliability.ReliabilityGateway.TOKEN;
import static dev.spendgateway.edge.testkit.TestGateway.ANTHROPIC;
import static dev.spendgateway.edge.testkit.TestGateway.CHAT;
import static dev.spendgateway.edge.testkit.TestGateway.RESPONSES;
import static dev.spendgateway.edge.testkit.TestGateway.TRANSCRIPTIONS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Seeded, time-bounded fuzz of bad input on every route: valid bodies mutated (wrong types,
 * huge/negative/fractional numbers, NaN/Infinity, nulls, missing fields, 10,000-deep nesting,
 * duplicate keys, invalid UTF-8, truncation, other top-level values, wrong content types, truncated
 * or broken multipart, oversized headers, empty bodies) must always get a clear 4xx — a JSON error
 * body, never a 5xx — never reach the provider, and leave the books exactly as they were. A body
 * under a content type its route cannot read (a multipart type on a JSON route; anything but {@code
 * multipart/form-data} on the transcription route, a missing one too) is exactly a 415 naming the
 * header, even when the body itself is valid; JSON routes read any other declared type as JSON (see
 * {@code BodyType}), so a broken body under one is a 400, never a 415.
 *
 * <p>Mutations aim at what the gateway itself reads (model, token limits, messages, tools, the
 * ledger fields) or break the body's structure, so every case is one the gateway must refuse; a
 * wrong type deep in a message the provider would refuse is the provider's business. CI runs 10s
 * (the seed differs every run, so runs add up to more ground than one long run within the suite's
 * time budget); {@code -Dfuzz.seconds=N} runs longer, {@code -Dfuzz.seed=S} replays a run.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BadInputFuzzTest {
  private TestGateway gw;
  private final Brand brand = new Brand("fuzz-brand", "5", "50");

  /** An open reservation the settle cases aim at. */
  private static final String OPEN_ID = "fuzz-open-1";

  /**
   * One seed per run, printed before the first case and named in any failure, so a failing run can
   * be replayed with {@code -Dfuzz.seed=S}.
   */
  private static final long SEED = Long.getLong("fuzz.seed", System.nanoTime());

  @RegisterExtension
  static final TestExecutionExceptionHandler NAME_THE_SEED =
      (context, failure) -> {
        throw new AssertionError(
            failure.getMessage() + " [seed " + SEED + ": replay with -Dfuzz.seed=" + SEED + "]",
            failure);
      };

  @BeforeAll
  static void printTheSeed() {
    System.out.println(
        "BadInputFuzzTest: seed " + SEED + " (replay with -Dfuzz.seed=" + SEED + ")");
  }

  @BeforeAll
  void start() throws Exception {
    gw = ReliabilityGateway.start("fuzz");
    HttpResponse<String> r =
        gw.send(
            ledgerPost(
                    "/ledger/reservations",
                    bytes(
                        "{\"id\":\""
                            + OPEN_ID
                            + "\",\"lane\":\"app\",\"brand\":\"fuzz-brand\",\"amountUsd\":0.5,\"brandDailyUsd\":5,\"brandMonthlyUsd\":50}"),
                    "application/json")
                .build());
    assertEquals(201, r.statusCode(), r.body());
  }

  @AfterAll
  void stop() throws Exception {
    gw.close();
  }

  /** One request: where it goes, its body, its content type, its extra headers. */
  record Case(
      String what,
      String path,
      byte[] body,
      String contentType,
      Map<String, String> headers,
      boolean ledgerApi) {}

  /** A route under fuzz: a valid body, the fields the gateway reads, how to send. */
  record Target(
      String path,
      String validBody,
      List<String> requiredFields,
      List<String> numberFields,
      boolean ledgerApi) {}

  private static final String ROUTED = "/v1/chat/completions";

  private static final List<Target> JSON_TARGETS =
      List.of(
          new Target(
              ANTHROPIC,
              "{\"model\":\"claude-opus-5-5\",\"max_tokens\":800,\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}",
              List.of("model", "max_tokens", "messages"),
              List.of("max_tokens"),
              false),
          new Target(
              CHAT,
              "{\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":800,\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}",
              List.of("model", "messages"),
              List.of("max_completion_tokens"),
              false),
          new Target(
              RESPONSES,
              "{\"model\":\"gpt-6.1-sol\",\"max_output_tokens\":800,\"tools\":[{\"type\":\"web_search\"}],\"input\":\"hello\"}",
              List.of("model", "tools"),
              List.of("max_output_tokens"),
              false),
          new Target(
              "/ledger/reservations",
              "{\"id\":\"fuzz-new-1\",\"lane\":\"app\",\"brand\":\"fuzz-brand\",\"amountUsd\":0.3,\"brandDailyUsd\":5,\"brandMonthlyUsd\":50}",
              List.of("id", "lane", "brand", "amountUsd", "brandDailyUsd", "brandMonthlyUsd"),
              List.of("amountUsd", "brandDailyUsd", "brandMonthlyUsd"),
              true),
          new Target(
              "/ledger/reservations/" + OPEN_ID + "/settle",
              "{\"actualUsd\":0.1}",
              List.of("actualUsd"),
              List.of("actualUsd"),
              true),
          // The failover router: model names a profile, the body is translated for the fallback.
          new Target(
              ROUTED,
              "{\"model\":\"fast-summary\",\"max_tokens\":800,\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}",
              List.of("model", "messages"),
              List.of("max_tokens"),
              false));

  /** Values no vetted field may take: wrong types, out-of-range numbers, non-JSON numbers. */
  private static final List<String> BAD_VALUES =
      List.of(
          "null",
          "true",
          "\"\"",
          "[]",
          "{}",
          "\"800\"",
          "[\"gpt-6.1-sol\"]",
          "{\"nested\":{\"x\":1}}");

  private static final List<String> BAD_NUMBERS =
      List.of(
          "-1",
          "-0.000001",
          "1e400",
          "99999999999999999999999999999",
          "-1e300",
          "1e7",
          "0.0000001",
          "NaN",
          "Infinity",
          "-Infinity",
          "0x10",
          "1_000",
          "+5",
          ".5",
          "1.",
          "Infinity1");

  // --- the fuzz ----------------------------------------------------------------------------------

  @Test
  void badInputIsAClear4xxThatReachesNoProviderAndLeavesTheBooksAlone() throws Exception {
    long seed = SEED;
    int seconds = Integer.getInteger("fuzz.seconds", 10);
    Random random = new Random(seed);
    long deadline = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
    Map<String, Integer> byKind = new TreeMap<>();
    Map<Integer, Integer> byStatus = new TreeMap<>();
    int cases = 0;
    String books = gw.usageText();
    long upstreamCalls = gw.sim.receivedCount();

    // Every fixed case once, then random mutations until the time is up.
    List<Case> fixed = fixedCases();
    for (int i = 0; i < fixed.size() || System.nanoTime() < deadline; i++) {
      Case c = i < fixed.size() ? fixed.get(i) : randomCase(random);
      int status = send(c);
      cases++;
      byKind.merge(c.what().replaceAll(" .*", ""), 1, Integer::sum);
      byStatus.merge(status, 1, Integer::sum);
      assertEquals(
          upstreamCalls,
          gw.sim.receivedCount(),
          c.what() + " reached the provider (seed " + seed + ")");
      if (cases % 25 == 0 || i < fixed.size()) {
        assertEquals(books, gw.usageText(), c.what() + " changed the books (seed " + seed + ")");
      }
    }
    assertEquals(books, gw.usageText(), "the books changed (seed " + seed + ")");
    System.out.printf(
        "BadInputFuzzTest: %d cases in %ds (seed %d; replay with -Dfuzz.seed=%d)%n  by kind %s%n  by status %s%n",
        cases, seconds, seed, seed, byKind, byStatus);
    assertTrue(cases > fixed.size(), "random cases ran too");
  }

  // --- what Pekko's HTTP parser refuses before any route runs
  // --------------------------------------

  /**
   * Requests the parser refuses ({@code pekko.http.server.parsing} limits and HTTP/1.1 syntax), as
   * raw bytes; the limits are Pekko's defaults (64 headers, values up to 8k, URIs up to 2k). {@code
   * TOKEN} is replaced by the gateway token: a value the parser chokes on must not reach the log.
   */
  static Stream<Arguments> unparsable() {
    String head = "Host: gateway\r\nx-api-key: " + TOKEN + "\r\n";
    StringBuilder manyHeaders = new StringBuilder();
    for (int i = 0; i < 100; i++) {
      manyHeaders.append("x-h").append(i).append(": v\r\n");
    }
    return Stream.of(
        Arguments.of(
            "a 64 KiB header value",
            431,
            "headers",
            "GET /usage HTTP/1.1\r\n"
                + head
                + "x-filler: TOKEN"
                + "a".repeat(64 * 1024)
                + "\r\n\r\n"),
        Arguments.of(
            "a 64 KiB header value on a provider route",
            431,
            "headers",
            "POST "
                + ANTHROPIC
                + " HTTP/1.1\r\n"
                + head
                + "content-type: application/json\r\ncontent-length: 2\r\nx-spend-brand: TOKEN"
                + "b".repeat(64 * 1024)
                + "\r\n\r\n{}"),
        Arguments.of(
            "100 headers",
            400,
            "limit of 64 headers",
            "GET /usage HTTP/1.1\r\n" + head + manyHeaders + "\r\n"),
        Arguments.of(
            "a 3,000-character URI",
            414,
            "URI",
            "GET /usage?brand=" + "b".repeat(3000) + " HTTP/1.1\r\n" + head + "\r\n"),
        Arguments.of(
            "a header line without a colon",
            400,
            "HTTP/1.1",
            "GET /usage HTTP/1.1\r\n" + head + "no colon TOKEN here\r\n\r\n"),
        Arguments.of(
            "an unknown HTTP version", 505, "HTTP", "GET /usage HTTP/3.7\r\n" + head + "\r\n"),
        Arguments.of(
            "an unknown method", 501, "method", "BREW /usage HTTP/1.1\r\n" + head + "\r\n"),
        // Not the parser's (Pekko checks max-content-length when the body is read), but as early:
        // the gateway API refuses a body over its own 64 KiB before reading a byte of it.
        Arguments.of(
            "a declared 40 MB body on the ledger API",
            413,
            "limit of 65536 bytes",
            "POST /ledger/reservations HTTP/1.1\r\n"
                + head
                + "content-type: application/json\r\ncontent-length: 40000000\r\n\r\n"),
        Arguments.of(
            "two content-type headers",
            400,
            "HTTP/1.1",
            "POST /ledger/reservations HTTP/1.1\r\n"
                + head
                + "content-type: application/json\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\n{}"));
  }

  @ParameterizedTest(name = "{0} is a {1} with a JSON error naming the {2}")
  @MethodSource("unparsable")
  void whatTheHttpParserRefusesIsAJsonErrorInTheGatewayShape(
      String what, int status, String named, String request) throws Exception {
    String books = gw.usageText();
    long upstreamCalls = gw.sim.receivedCount();

    RawHttp.Answer r = raw(request.replace("TOKEN", TOKEN));

    assertEquals(status, r.status(), what + " → " + r);
    assertTrue(r.header("content-type").startsWith("application/json"), r.toString());
    assertEquals("true", r.header("x-gateway-error"), r.toString());
    JsonNode error = TestGateway.JSON.readTree(r.body()).path("error");
    assertTrue(error.path("type").isTextual(), r.toString());
    assertTrue(error.path("message").asText().contains(named), r.toString());
    assertTrue(!r.body().contains(TOKEN), "the answer echoes nothing sent: " + r);
    assertEquals(upstreamCalls, gw.sim.receivedCount());
    assertEquals(books, gw.usageText());
    for (String line : gw.logs.allText()) {
      assertTrue(!line.contains(TOKEN), "a log line quotes the refused request: " + line);
    }
  }

  // --- the wrong method on a known path
  // ------------------------------------------------------------

  @ParameterizedTest(name = "{0} {1} is a 405 with Allow: {2} in the {3} shape")
  @CsvSource({
    "GET,    /anthropic/v1/messages,                 POST, anthropic",
    "GET,    /openai/v1/chat/completions,            POST, openai",
    "PUT,    /openai/v1/responses,                   POST, openai",
    "GET,    /openai/v1/audio/transcriptions,        POST, openai",
    "GET,    /v1/chat/completions,                   POST, openai",
    "GET,    /ledger/reservations,                   POST, gateway",
    "DELETE, /ledger/reservations/fuzz-open-1,       GET,  gateway",
    "GET,    /ledger/reservations/fuzz-open-1/settle, POST, gateway",
    "GET,    /ledger/reservations/fuzz-open-1/void,  POST, gateway",
    "POST,   /usage,                                 GET,  gateway",
    "POST,   /metrics,                               GET,  gateway",
    "POST,   /healthz,                               GET,  gateway",
    "DELETE, /readyz,                                GET,  gateway"
  })
  void aKnownPathAskedWithTheWrongMethodIsA405NamingTheAllowedOnes(
      String method, String path, String allow, String shape) throws Exception {
    String books = gw.usageText();
    long upstreamCalls = gw.sim.receivedCount();

    RawHttp.Answer r =
        raw(
            method
                + " "
                + path
                + " HTTP/1.1\r\nHost: gateway\r\nx-api-key: "
                + TOKEN
                + "\r\ncontent-length: 0\r\n\r\n");

    assertEquals(405, r.status(), method + " " + path + " → " + r);
    assertEquals(allow, r.header("allow"), r.toString());
    assertEquals("true", r.header("x-gateway-error"), r.toString());
    JsonNode body = TestGateway.JSON.readTree(r.body());
    JsonNode error = body.path("error");
    assertTrue(error.path("message").asText().contains(allow), r.toString());
    switch (shape) {
      case "anthropic" ->
          assertEquals("error", body.path("type").asText(), "Anthropic's envelope: " + r);
      case "openai" ->
          assertTrue(error.has("param") && error.has("code"), "OpenAI's error fields: " + r);
      default -> assertEquals("method_not_allowed", error.path("type").asText(), r.toString());
    }
    assertEquals(upstreamCalls, gw.sim.receivedCount());
    assertEquals(books, gw.usageText());
  }

  // --- bytes after the JSON body
  // ---------------------------------------------------------------------

  /** What may follow a valid body: a second value, a bare word, a stray bracket. */
  private static final List<String> TRAILERS =
      List.of(" {\"b\":2}", "xyz", "]", "{}", " \"x\"", "\n[1]");

  static Stream<Arguments> trailingBytes() {
    return JSON_TARGETS.stream()
        .flatMap(t -> TRAILERS.stream().map(trailer -> Arguments.of(t.path(), trailer)));
  }

  @ParameterizedTest(name = "{0} with <{1}> after its body is a 400")
  @MethodSource("trailingBytes")
  void anythingButWhitespaceAfterTheJsonBodyIsA400(String path, String trailer) throws Exception {
    Target target =
        JSON_TARGETS.stream().filter(t -> t.path().equals(path)).findFirst().orElseThrow();
    String books = gw.usageText();
    long upstreamCalls = gw.sim.receivedCount();

    int status =
        send(
            new Case(
                "trailing " + trailer,
                path,
                bytes(target.validBody() + trailer),
                "application/json",
                Map.of(),
                target.ledgerApi()));

    assertEquals(400, status, path + " with " + trailer);
    assertEquals(upstreamCalls, gw.sim.receivedCount(), "nothing reached the provider");
    assertEquals(books, gw.usageText(), "the books are as they were");
  }

  @Test
  void whitespaceAfterTheJsonBodyIsStillFine() throws Exception {
    String ws = " \r\n\t \n";
    Target chat = JSON_TARGETS.get(1);
    HttpResponse<String> call =
        gw.send(
            gw.post(chat.path(), brand)
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(chat.validBody() + ws))
                .build());
    assertEquals(200, call.statusCode(), call.body());
    String id = "fuzz-ws-" + Long.toHexString(System.nanoTime());
    HttpResponse<String> reserve =
        gw.send(
            ledgerPost(
                    "/ledger/reservations",
                    bytes(
                        "{\"id\":\""
                            + id
                            + "\",\"lane\":\"app\",\"brand\":\"fuzz-brand\",\"amountUsd\":0.01,\"brandDailyUsd\":5,\"brandMonthlyUsd\":50}"
                            + ws),
                    "application/json")
                .build());
    assertEquals(201, reserve.statusCode(), reserve.body());
    assertEquals(
        200,
        gw.send(ledgerPost("/ledger/reservations/" + id + "/void", bytes(""), null).build())
            .statusCode());
  }

  // --- broken body framing
  // -----------------------------------------------------------------------------

  /**
   * A chunked body whose second chunk size is not hex, and one whose chunk is longer than
   * announced.
   */
  private static final Map<String, String> BROKEN_CHUNKS =
      Map.of(
          "a chunk size that is not hex", "5\r\n{\"a\":\r\nZZ\r\n1}\r\n0\r\n\r\n",
          "a chunk longer than its size", "3\r\n{\"a\":1}\r\n0\r\n\r\n");

  static Stream<Arguments> brokenChunking() {
    List<String[]> routes =
        List.of(
            new String[] {ANTHROPIC, "application/json", "anthropic"},
            new String[] {CHAT, "application/json", "openai"},
            new String[] {RESPONSES, "application/json", "openai"},
            new String[] {TRANSCRIPTIONS, "multipart/form-data; boundary=fuzz-b", "openai"},
            new String[] {ROUTED, "application/json", "openai"},
            new String[] {"/ledger/reservations", "application/json", "gateway"},
            new String[] {
              "/ledger/reservations/" + OPEN_ID + "/settle", "application/json", "gateway"
            });
    return routes.stream()
        .flatMap(
            r ->
                BROKEN_CHUNKS.entrySet().stream()
                    .map(c -> Arguments.of(c.getKey(), r[0], r[1], r[2], c.getValue())));
  }

  @ParameterizedTest(name = "{0} on {1} is a 400 in the {3} shape")
  @MethodSource("brokenChunking")
  void brokenChunkedFramingIsA400NotA500(
      String what, String path, String contentType, String shape, String chunks) throws Exception {
    String books = gw.usageText();
    long upstreamCalls = gw.sim.receivedCount();
    StringBuilder head =
        new StringBuilder(
            "POST " + path + " HTTP/1.1\r\nHost: gateway\r\nx-api-key: " + TOKEN + "\r\n");
    brand.headerMap().forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
    head.append("content-type: ")
        .append(contentType)
        .append("\r\ntransfer-encoding: chunked\r\n\r\n");

    RawHttp.Answer r = raw(head + chunks);

    assertEquals(400, r.status(), what + " on " + path + " → " + r);
    assertEquals("true", r.header("x-gateway-error"), r.toString());
    JsonNode body = TestGateway.JSON.readTree(r.body());
    assertTrue(body.path("error").path("message").asText().contains("framing"), r.toString());
    if (shape.equals("anthropic")) {
      assertEquals("error", body.path("type").asText(), r.toString());
    }
    assertEquals(upstreamCalls, gw.sim.receivedCount(), "nothing reached the provider");
    assertEquals(books, gw.usageText(), "nothing reserved");
    for (String line : gw.logs.allText()) {
      assertFalse(
          line.contains("failed inside the gateway") || line.contains("Internal server error"),
          "a caller's broken body is no gateway failure: " + line);
    }
  }

  /** Writes {@code request} as is and reads the answer up to the end of its body. */
  private RawHttp.Answer raw(String request) throws Exception {
    return RawHttp.exchange(gw.base, request);
  }

  /** Sends one case; fails unless the answer is a clear 4xx. */
  private int send(Case c) throws Exception {
    HttpRequest.Builder b =
        c.ledgerApi()
            ? ledgerPost(c.path(), c.body(), c.contentType())
            : gw.post(c.path(), brand).POST(HttpRequest.BodyPublishers.ofByteArray(c.body()));
    if (!c.ledgerApi() && c.contentType() != null) {
      b.header("content-type", c.contentType());
    }
    c.headers().forEach(b::setHeader);
    HttpResponse<String> r;
    try {
      r = gw.send(b.build());
    } catch (IOException closed) {
      throw new AssertionError(
          c.what() + ": the connection failed instead of a 4xx: " + closed, closed);
    }
    String sent = new String(c.body(), 0, Math.min(300, c.body().length), StandardCharsets.UTF_8);
    String context = c.what() + " (" + sent + ") → " + r.statusCode() + " " + r.body();
    assertTrue(r.statusCode() >= 400 && r.statusCode() < 500, context);
    if (wrongType(c)) {
      assertEquals(415, r.statusCode(), "a body under a type its route does not read: " + context);
    } else {
      assertTrue(r.statusCode() != 415, "a body under its route's own type is read: " + context);
    }
    // Refusals by Pekko's HTTP parser (431 for an oversized header) come as JSON too
    // (JsonParsingErrorHandler).
    JsonNode body;
    try {
      body = TestGateway.JSON.readTree(r.body());
    } catch (IOException notJson) {
      throw new AssertionError("a JSON error body: " + context);
    }
    JsonNode error = body.path("error");
    assertTrue(
        error.isObject() && !error.path("message").asText("").isBlank(),
        "a JSON error with a message: " + context);
    assertEquals("true", r.headers().firstValue("x-gateway-error").orElse(null), context);
    if (c.ledgerApi() && r.statusCode() == 400) {
      assertTrue(error.path("field").isTextual(), "a ledger 400 names the field: " + context);
    }
    if (r.statusCode() == 415) {
      assertTrue(
          error.path("message").asText().contains("`content-type: " + expectedType(c.path())),
          "the 415 says what to send: " + context);
    }
    return r.statusCode();
  }

  /** The one media type {@code path} reads its body in. */
  private static String expectedType(String path) {
    return path.equals(TRANSCRIPTIONS) ? "multipart/form-data" : "application/json";
  }

  /**
   * A non-empty body whose content type (parameters aside; none at all included) is not its
   * route's.
   */
  private static boolean wrongType(Case c) {
    if (c.body().length == 0) {
      return false;
    }
    String sent = c.contentType() == null ? "" : c.contentType().split(";", 2)[0].strip();
    if (!c.path().equals(TRANSCRIPTIONS)) {
      return sent.toLowerCase(java.util.Locale.ROOT).startsWith("multipart/");
    }
    return !sent.equalsIgnoreCase(expectedType(c.path()));
  }

  private HttpRequest.Builder ledgerPost(String path, byte[] body, String contentType) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(gw.base + path))
            .timeout(Duration.ofSeconds(20))
            .header("x-api-key", TOKEN)
            .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    if (contentType != null) {
      b.header("content-type", contentType);
    }
    return b;
  }

  // --- cases -------------------------------------------------------------------------------------

  private List<Case> fixedCases() {
    List<Case> out = new ArrayList<>();
    for (Target t : JSON_TARGETS) {
      out.add(json(t, "empty body", ""));
      out.add(
          json(
              t,
              "nesting 10,000 levels deep",
              t.validBody()
                  .replaceFirst(
                      "\\{", "{\"deep\":" + "[".repeat(10_000) + "]".repeat(10_000) + ",")));
      out.add(
          json(
              t,
              "nesting 10,000 objects deep",
              t.validBody()
                  .replaceFirst(
                      "\\{",
                      "{\"deep\":" + "{\"a\":".repeat(10_000) + "1" + "}".repeat(10_000) + ",")));
      out.add(
          new Case(
              "form-body as application/x-www-form-urlencoded on " + t.path(),
              t.path(),
              "model=gpt-6.1-sol&max_tokens=10&id=x&amountUsd=1".getBytes(StandardCharsets.UTF_8),
              "application/x-www-form-urlencoded",
              Map.of(),
              t.ledgerApi()));
      out.add(
          new Case(
              "multipart-body on " + t.path(),
              t.path(),
              form("gpt-6.1-sol", 100, true, true),
              "multipart/form-data; boundary=" + BOUNDARY,
              Map.of(),
              t.ledgerApi()));
      for (String top : List.of("[]", "\"text\"", "42", "null", "[" + t.validBody() + "]")) {
        out.add(json(t, "top-level " + top.substring(0, Math.min(12, top.length())), top));
      }
      for (String field : t.requiredFields()) {
        out.add(json(t, "missing " + field, remove(t.validBody(), field)));
      }
      for (String field : t.numberFields()) {
        for (String bad : BAD_NUMBERS) {
          out.add(json(t, "number " + field + "=" + bad, replace(t.validBody(), field, bad)));
        }
      }
    }
    out.add(
        transcription(
            "truncated multipart", truncate(form("gpt-6-transcribe", 3000, true, true), 1500)));
    out.add(
        transcription(
            "multipart without its closing boundary",
            without(form("gpt-6-transcribe", 3000, true, true), ("--" + BOUNDARY + "--\r\n"))));
    out.add(transcription("multipart without a file", form("gpt-6-transcribe", 0, false, true)));
    out.add(transcription("multipart without a model", form(null, 300, true, true)));
    out.add(transcription("multipart with an unknown model", form("gpt-6.1-sol", 300, true, true)));
    out.add(
        transcription(
            "multipart with invalid UTF-8 in the model",
            concat(
                form("gpt-6-transcribe", 300, true, true),
                "gpt-6-transcribe",
                new byte[] {(byte) 0xC3, 0x28, (byte) 0xFF})));
    out.add(transcription("empty multipart body", new byte[0]));
    out.add(
        new Case(
            "JSON body on the transcription route",
            TRANSCRIPTIONS,
            "{\"model\":\"gpt-6-transcribe\",\"file\":\"AAAA\"}".getBytes(StandardCharsets.UTF_8),
            "application/json",
            Map.of(),
            false));
    out.add(
        new Case(
            "multipart with the wrong boundary",
            TRANSCRIPTIONS,
            form("gpt-6-transcribe", 300, true, true),
            "multipart/form-data; boundary=not-the-boundary",
            Map.of(),
            false));
    out.add(
        new Case(
            "multipart without a boundary parameter",
            TRANSCRIPTIONS,
            form("gpt-6-transcribe", 300, true, true),
            "multipart/form-data",
            Map.of(),
            false));
    for (String path : List.of(ANTHROPIC, CHAT, RESPONSES)) {
      Target t = JSON_TARGETS.stream().filter(x -> x.path().equals(path)).findFirst().orElseThrow();
      out.add(
          new Case(
              "oversized header (64 KiB) on " + path,
              path,
              bytes(t.validBody()),
              "application/json",
              Map.of("x-filler", "a".repeat(64 * 1024)),
              false));
      out.add(
          new Case(
              "oversized spend header (10 KiB brand) on " + path,
              path,
              bytes(t.validBody()),
              "application/json",
              Map.of("x-spend-brand", "b".repeat(10 * 1024)),
              false));
      out.add(
          new Case(
              "negative brand cap on " + path,
              path,
              bytes(t.validBody()),
              "application/json",
              Map.of("x-spend-brand-daily-usd", "-5"),
              false));
      out.add(
          new Case(
              "NaN brand cap on " + path,
              path,
              bytes(t.validBody()),
              "application/json",
              Map.of("x-spend-brand-monthly-usd", "NaN"),
              false));
      out.add(
          new Case(
              "huge brand cap on " + path,
              path,
              bytes(t.validBody()),
              "application/json",
              Map.of("x-spend-brand-daily-usd", "1e400"),
              false));
      out.add(
          new Case(
              "unknown lane on " + path,
              path,
              bytes(t.validBody()),
              "application/json",
              Map.of("x-spend-lane", "paid"),
              false));
    }
    out.add(
        new Case(
            "oversized header (64 KiB) on the ledger",
            "/ledger/reservations",
            bytes(JSON_TARGETS.get(3).validBody()),
            "application/json",
            Map.of("x-filler", "a".repeat(64 * 1024)),
            true));
    out.addAll(contentTypeCases());
    return out;
  }

  /** Routes that read JSON, each with a body it would accept (the routed call too). */
  private static final Map<String, String> VALID_JSON = validJson();

  private static Map<String, String> validJson() {
    Map<String, String> out = new TreeMap<>();
    for (Target t : JSON_TARGETS) {
      out.put(t.path(), t.validBody());
    }
    return out;
  }

  /**
   * Content types no JSON route reads: each is a 415 even for a body the route would accept — which
   * would otherwise reserve (ledger) or reach the provider.
   */
  private static final List<String> NOT_JSON =
      List.of(
          "multipart/form-data; boundary=b-1",
          "multipart/mixed; boundary=b-1",
          "Multipart/Form-Data; boundary=x");

  /**
   * Read as JSON: JSON under any parameters or case, and the defaults raw clients send JSON under
   * (null: no header at all). A body wrong for another reason is a 400, not a 415.
   */
  private static final List<String> STILL_JSON =
      Arrays.asList(
          "application/json; charset=utf-8",
          "application/json;charset=UTF-8",
          "APPLICATION/JSON",
          "Application/Json; foo=bar",
          null,
          "application/x-www-form-urlencoded",
          "text/plain",
          "text/plain; charset=utf-8",
          "application/octet-stream",
          "text/json",
          "application/problem+json",
          "application/xml");

  private List<Case> contentTypeCases() {
    List<Case> out = new ArrayList<>();
    VALID_JSON.forEach(
        (path, valid) -> {
          boolean ledger = path.startsWith("/ledger");
          for (String type : NOT_JSON) {
            out.add(
                new Case(
                    "content-type " + type + " with a valid body on " + path,
                    path,
                    bytes(valid),
                    type,
                    Map.of(),
                    ledger));
          }
          for (String type : STILL_JSON) {
            out.add(
                new Case(
                    "content-type " + type + " with a body missing its first field on " + path,
                    path,
                    bytes(remove(valid, valid.substring(2, valid.indexOf('"', 2)))),
                    type,
                    Map.of(),
                    ledger));
          }
        });
    byte[] form = form("gpt-6-transcribe", 300, true, true);
    for (String type :
        Arrays.asList(
            null,
            "application/json",
            "application/x-www-form-urlencoded",
            "text/plain",
            "application/octet-stream",
            "multipart/mixed; boundary=" + BOUNDARY)) {
      out.add(
          new Case(
              "content-type " + type + " with a valid form on " + TRANSCRIPTIONS,
              TRANSCRIPTIONS,
              form,
              type,
              Map.of(),
              false));
    }
    return out;
  }

  private Case randomCase(Random random) {
    if (random.nextInt(8) == 0) {
      byte[] form =
          form(
              random.nextBoolean() ? "gpt-6-transcribe" : "whisper-" + random.nextInt(9),
              1 + random.nextInt(4000),
              true,
              random.nextBoolean());
      return random.nextBoolean()
          // Cut anywhere before the closing delimiter: a cut inside "--boundary--\r\n" itself can
          // still leave a complete form, which is rightly accepted.
          ? transcription(
              "truncated multipart at random",
              truncate(form, random.nextInt(closingDelimiterAt(form))))
          : transcription("multipart with a flipped byte", flip(form, random));
    }
    Target t = JSON_TARGETS.get(random.nextInt(JSON_TARGETS.size()));
    String field = t.requiredFields().get(random.nextInt(t.requiredFields().size()));
    int kind = random.nextInt(7);
    return switch (kind) {
      case 0 -> {
        // An array field (messages, tools) given an array of strings has the right type for the
        // gateway's rules (count, tool kinds); what each element must hold is the provider's check.
        // A numeric string is a wrong type only where a number or a catalog name belongs ("800" is
        // a fine id).
        String valid = valueOf(t.validBody(), field);
        List<String> bad =
            BAD_VALUES.stream()
                .filter(v -> !(valid.startsWith("[") && v.startsWith("[\"")))
                .filter(
                    v ->
                        !(valid.startsWith("\"")
                            && v.equals("\"800\"")
                            && (field.equals("id") || field.equals("brand"))))
                .toList();
        yield json(
            t,
            "wrong-type " + field,
            replace(t.validBody(), field, bad.get(random.nextInt(bad.size()))));
      }
      case 1 -> {
        String n = t.numberFields().get(random.nextInt(t.numberFields().size()));
        yield json(
            t,
            "bad-number " + n,
            replace(t.validBody(), n, BAD_NUMBERS.get(random.nextInt(BAD_NUMBERS.size()))));
      }
      case 2 -> json(t, "duplicate-key " + field, duplicate(t.validBody(), field));
      case 3 ->
          new Case(
              "invalid-utf8 in " + field + " on " + t.path(),
              t.path(),
              invalidUtf8(t.validBody(), random),
              "application/json",
              Map.of(),
              t.ledgerApi());
      case 4 ->
          json(
              t,
              "truncated",
              t.validBody().substring(0, random.nextInt(t.validBody().length() - 1)));
      case 5 -> {
        // Beyond every parser's bound (the provider routes allow 128 levels, Jackson's default
        // 1,000).
        int depth = 1_001 + random.nextInt(9_000);
        yield json(
            t,
            "deep-nesting",
            t.validBody()
                .replaceFirst("\\{", "{\"deep\":" + "[".repeat(depth) + "]".repeat(depth) + ","));
      }
      default -> {
        byte[] garbage = new byte[random.nextInt(200)];
        random.nextBytes(garbage);
        yield new Case(
            "garbage bytes on " + t.path(),
            t.path(),
            garbage,
            random.nextBoolean() ? "application/json" : "application/octet-stream",
            Map.of(),
            t.ledgerApi());
      }
    };
  }

  // --- body surgery ------------------------------------------------------------------------------

  private static Case json(Target t, String what, String body) {
    return new Case(
        what + " on " + t.path(),
        t.path(),
        bytes(body),
        "application/json",
        Map.of(),
        t.ledgerApi());
  }

  private static Case transcription(String what, byte[] form) {
    return new Case(
        what + " on " + TRANSCRIPTIONS,
        TRANSCRIPTIONS,
        form,
        "multipart/form-data; boundary=" + BOUNDARY,
        Map.of(),
        false);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * The body with {@code "field":value} replaced by {@code "field":bad} (the value up to , or }).
   */
  private static String replace(String body, String field, String bad) {
    String out =
        body.replaceFirst(
            "\"" + field + "\":(\\[[^\\]]*\\]|\\{[^}]*\\}|\"[^\"]*\"|[^,}]+)",
            java.util.regex.Matcher.quoteReplacement("\"" + field + "\":" + bad));
    if (out.equals(body) && !bad.equals(valueOf(body, field))) {
      throw new IllegalStateException("no field " + field + " in " + body);
    }
    return out;
  }

  private static String valueOf(String body, String field) {
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile(
                "\"" + field + "\":(\\[[^\\]]*\\]|\\{[^}]*\\}|\"[^\"]*\"|[^,}]+)")
            .matcher(body);
    return m.find() ? m.group(1) : null;
  }

  private static String remove(String body, String field) {
    String out =
        body.replaceFirst(
            ",?\"" + field + "\":(\\[(\\{[^}]*\\},?)*\\]|\\{[^}]*\\}|\"[^\"]*\"|[^,}]+)", "");
    return out.startsWith("{,") ? "{" + out.substring(2) : out;
  }

  /** The field twice: its own value, then a different one (a second parser could read either). */
  private static String duplicate(String body, String field) {
    String value = valueOf(body, field);
    String other = value.startsWith("\"") ? "\"other\"" : value.startsWith("[") ? "[]" : "0.000001";
    return body.substring(0, body.length() - 1) + ",\"" + field + "\":" + other + "}";
  }

  /** Invalid UTF-8 bytes inside the first string value. */
  private static byte[] invalidUtf8(String body, Random random) {
    byte[][] bad = {
      {(byte) 0xC3, 0x28},
      {(byte) 0xFF},
      {(byte) 0xED, (byte) 0xA0, (byte) 0x80},
      {(byte) 0xF8, (byte) 0x88, (byte) 0x80, (byte) 0x80, (byte) 0x80},
      {(byte) 0xC0, (byte) 0xAF}
    };
    int at = body.indexOf(":\"") + 2;
    return concat(bytes(body), body.substring(0, at), bad[random.nextInt(bad.length)]);
  }

  /**
   * {@code whole} with {@code extra} inserted right after the first occurrence of {@code after}.
   */
  private static byte[] concat(byte[] whole, String after, byte[] extra) {
    String text = new String(whole, StandardCharsets.ISO_8859_1);
    int at = text.indexOf(after) + after.length();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(whole, 0, at);
    out.writeBytes(extra);
    out.write(whole, at, whole.length - at);
    return out.toByteArray();
  }

  private static byte[] truncate(byte[] b, int length) {
    return Arrays.copyOf(b, Math.max(0, length));
  }

  /** Where the form's closing delimiter ({@code \r\n--boundary--}) starts. */
  private static int closingDelimiterAt(byte[] form) {
    String text = new String(form, StandardCharsets.ISO_8859_1);
    int at = text.lastIndexOf("\r\n--" + BOUNDARY + "--");
    return at > 0 ? at : form.length;
  }

  private static byte[] without(byte[] b, String tail) {
    return truncate(b, b.length - tail.length());
  }

  /**
   * One bit flipped where it must break the form: in the first boundary (the model part becomes
   * preamble, so the model is missing) or in the {@code model} part's name (an unknown field).
   * Flipping a bit of the audio or the language would leave a valid form.
   */
  private static byte[] flip(byte[] b, Random random) {
    byte[] out = b.clone();
    String text = new String(b, StandardCharsets.ISO_8859_1);
    int at =
        random.nextBoolean()
            ? 2 + random.nextInt(BOUNDARY.length())
            : text.indexOf("name=\"model\"") + 6 + random.nextInt(5);
    out[at] = (byte) (out[at] ^ (1 << random.nextInt(7)));
    return out;
  }

  private static final String BOUNDARY = "fuzz-boundary-7";

  /**
   * A transcription form; {@code model} null leaves it out. Valid when model is vetted and the file
   * is there.
   */
  private static byte[] form(String model, int fileBytes, boolean withFile, boolean withLanguage) {
    StringBuilder s = new StringBuilder();
    if (model != null) {
      s.append("--")
          .append(BOUNDARY)
          .append("\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\n")
          .append(model)
          .append("\r\n");
    }
    if (withLanguage) {
      s.append("--")
          .append(BOUNDARY)
          .append("\r\nContent-Disposition: form-data; name=\"language\"\r\n\r\nen\r\n");
    }
    if (withFile) {
      s.append("--")
          .append(BOUNDARY)
          .append(
              "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.mp3\"\r\nContent-Type: audio/mpeg\r\n\r\n")
          .append("x".repeat(fileBytes))
          .append("\r\n");
    }
    s.append("--").append(BOUNDARY).append("--\r\n");
    return s.toString().getBytes(StandardCharsets.UTF_8);
  }
}
