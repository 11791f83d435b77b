package dev.spendgateway.edge.e2e;

import static dev.spendgateway.edge.e2e.E2eGateway.ANTHROPIC_KEY;
import static dev.spendgateway.edge.e2e.E2eGateway.OPENAI_KEY;
import static dev.spendgateway.edge.e2e.E2eGateway.TOKEN;
import static dev.spendgateway.edge.e2e.E2eGateway.USAGE;
import static dev.spendgateway.edge.testkit.TestGateway.ANTHROPIC;
import static dev.spendgateway.edge.testkit.TestGateway.CHAT;
import static dev.spendgateway.edge.testkit.TestGateway.RESPONSES;
import static dev.spendgateway.edge.testkit.TestGateway.TRANSCRIPTIONS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.models.audio.AudioResponseFormat;
import com.openai.models.audio.transcriptions.TranscriptionCreateParams;
import dev.spendgateway.edge.testkit.GatewayPerClass;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.ReceivedCall;
import dev.spendgateway.sim.SimRoute;
import java.math.BigDecimal;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What crosses the gateway and what never does: the rewritten bodies and forms the simulator
 * records, the credentials swapped on the way out, the headers kept home, the secrets and prompts
 * kept out of every log line and response, and one access log line per call.
 */
class UpstreamHygieneE2ETest extends GatewayPerClass {
  @Override
  protected TestGateway startGateway() throws Exception {
    return E2eGateway.start("hygiene");
  }

  private static String claudeBody(String prompt, boolean stream) {
    return "{\"model\":\"claude-opus-5-5\",\"max_tokens\":800,\"stream\":"
        + stream
        + ",\"messages\":[{\"role\":\"user\",\"content\":\""
        + prompt
        + "\"}]}";
  }

  private static String chatBody(String prompt, String extra) {
    return "{\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":800"
        + extra
        + ",\"messages\":[{\"role\":\"user\",\"content\":\""
        + prompt
        + "\"}]}";
  }

  private static String webSearchBody(String prompt, String extra) {
    return "{\"model\":\"gpt-6.1-sol\",\"max_output_tokens\":800,\"tools\":[{\"type\":\"web_search\"}]"
        + extra
        + ",\"input\":\""
        + prompt
        + "\"}";
  }

  private ReceivedCall only(SimRoute route) {
    List<ReceivedCall> calls = gw.sim.received(route);
    assertEquals(1, calls.size(), "calls on " + route + ": " + calls);
    return calls.get(0);
  }

  private HttpResponse<String> post(String path, String body, Brand brand) throws Exception {
    return gw.send(gw.postJson(path, body, brand).build());
  }

  // --- 6. what the provider receives --------------------------------------------------------

  static Stream<Arguments> openAiBodies() {
    return Stream.of(
        Arguments.of(
            "a chat call that says nothing about store",
            CHAT,
            SimRoute.OPENAI_CHAT,
            chatBody("hi", "")),
        Arguments.of(
            "a chat call asking for store:true",
            CHAT,
            SimRoute.OPENAI_CHAT,
            chatBody("hi", ",\"store\":true")),
        Arguments.of(
            "a streamed chat call", CHAT, SimRoute.OPENAI_CHAT, chatBody("hi", ",\"stream\":true")),
        Arguments.of(
            "a web search call asking for store:true",
            RESPONSES,
            SimRoute.OPENAI_RESPONSES,
            webSearchBody("hi", ",\"store\":true")));
  }

  @ParameterizedTest(name = "{0} reaches the provider with store:false")
  @MethodSource("openAiBodies")
  void everyOpenAiBodyReachesTheProviderWithStoreFalse(
      String what, String path, SimRoute route, String body) throws Exception {
    assertEquals(200, post(path, body, Brand.fresh("store")).statusCode());

    JsonNode sent = only(route).body().orElseThrow();
    assertTrue(sent.path("store").isBoolean() && !sent.path("store").asBoolean(), sent.toString());
  }

  @Test
  void aStreamedChatCallIsSentAskingForItsUsage() throws Exception {
    assertEquals(
        200, post(CHAT, chatBody("hi", ",\"stream\":true"), Brand.fresh("incl")).statusCode());

    JsonNode sent = only(SimRoute.OPENAI_CHAT).body().orElseThrow();
    assertTrue(sent.path("stream_options").path("include_usage").asBoolean(false), sent.toString());
  }

  @Test
  void aStreamedChatCallThatDeclinedUsageIsStillSentAskingForIt() throws Exception {
    String body = chatBody("hi", ",\"stream\":true,\"stream_options\":{\"include_usage\":false}");
    HttpResponse<String> r = post(CHAT, body, Brand.fresh("incl"));

    if (r.statusCode() == 200) {
      JsonNode sent = only(SimRoute.OPENAI_CHAT).body().orElseThrow();
      assertTrue(
          sent.path("stream_options").path("include_usage").asBoolean(false), sent.toString());
    } else {
      // Refusing is as safe as overriding: an unmetered stream never starts.
      assertEquals(400, r.statusCode(), r.body());
      assertTrue(gw.sim.received().isEmpty());
    }
  }

  @Test
  void aWebSearchCallWithoutALimitIsSentCappedAtEightSearches() throws Exception {
    assertEquals(200, post(RESPONSES, webSearchBody("hi", ""), Brand.fresh("cap8")).statusCode());

    assertEquals(
        8, only(SimRoute.OPENAI_RESPONSES).body().orElseThrow().path("max_tool_calls").asInt());
  }

  private static TranscriptionCreateParams.Builder transcription(Brand brand) {
    TranscriptionCreateParams.Builder b =
        TranscriptionCreateParams.builder()
            .file(new byte[4000])
            .model("gpt-6-transcribe")
            .language("en")
            .prompt("names: Pekko")
            .responseFormat(AudioResponseFormat.JSON);
    brand.headerMap().forEach(b::putAdditionalHeader);
    return b;
  }

  @Test
  void theTranscriptionFormReachingTheProviderHoldsOnlyTheFiveVettedFields() {
    var answer =
        gw.openAi().audio().transcriptions().create(transcription(Brand.fresh("stt")).build());

    assertFalse(answer.asTranscription().text().isEmpty());
    ReceivedCall call = only(SimRoute.OPENAI_TRANSCRIPTIONS);
    assertEquals(
        Set.of("file", "model", "language", "prompt", "response_format"),
        Set.copyOf(call.formFields()));
    assertEquals(5, call.formFields().size(), "each field once: " + call.formFields());
    assertEquals(4000L, call.fileSizes().get("file"));
    assertEquals("gpt-6-transcribe", call.formValues().get("model"));
    assertEquals("names: Pekko", call.formValues().get("prompt"));
  }

  @Test
  void aTranscriptionFormWithAnyOtherFieldIsRefusedNotTrimmed() {
    var e =
        assertThrows(
            com.openai.errors.BadRequestException.class,
            () ->
                gw.openAi()
                    .audio()
                    .transcriptions()
                    .create(transcription(Brand.fresh("stt")).temperature(0.2).build()));

    assertTrue(e.getMessage().contains("transcription_fields"), e.getMessage());
    assertTrue(e.getMessage().contains("temperature"), e.getMessage());
    assertTrue(gw.sim.received().isEmpty());
  }

  // --- 7. credentials and headers -----------------------------------------------------------

  static Stream<Arguments> keySwaps() {
    return Stream.of(
        Arguments.of(
            "Anthropic",
            ANTHROPIC,
            SimRoute.ANTHROPIC_MESSAGES,
            claudeBody("hi", false),
            "x-api-key",
            ANTHROPIC_KEY),
        Arguments.of(
            "OpenAI chat",
            CHAT,
            SimRoute.OPENAI_CHAT,
            chatBody("hi", ""),
            "authorization",
            "Bearer " + OPENAI_KEY),
        Arguments.of(
            "OpenAI web search",
            RESPONSES,
            SimRoute.OPENAI_RESPONSES,
            webSearchBody("hi", ""),
            "authorization",
            "Bearer " + OPENAI_KEY));
  }

  @ParameterizedTest(name = "{0} gets our key in {4}, and never the gateway token")
  @MethodSource("keySwaps")
  void theProviderGetsItsKeyAndNeverTheGatewayToken(
      String provider, String path, SimRoute route, String body, String header, String expected)
      throws Exception {
    // The caller presents the token both ways at once; neither may travel on.
    HttpRequest request =
        gw.postJson(path, body, Brand.fresh("keys")).header("x-api-key", TOKEN).build();
    assertEquals(200, gw.send(request).statusCode());

    ReceivedCall call = only(route);
    assertEquals(expected, call.header(header).orElse(null), call.headers().toString());
    assertEquals(
        1,
        call.headers().keySet().stream()
            .filter(h -> h.equals("x-api-key") || h.equals("authorization"))
            .count(),
        "exactly one credential header: " + call.headers());
    assertFalse(call.headers().toString().contains(TOKEN), call.headers().toString());
  }

  @Test
  void cookiesForwardingAndSpendHeadersStayHome() throws Exception {
    Brand brand = Brand.fresh("home");
    for (String path : List.of(ANTHROPIC, CHAT)) {
      String body = path.equals(ANTHROPIC) ? claudeBody("hi", false) : chatBody("hi", "");
      HttpRequest request =
          gw.postJson(path, body, brand)
              .header("cookie", "session=abc123")
              .header("x-forwarded-for", "10.1.2.3")
              .header("forwarded", "for=10.1.2.3")
              .header("x-request-id", "home-" + System.nanoTime())
              .header("openai-organization", "org-someone-else")
              .header("idempotency-key", "idem-1")
              .header("x-conversation-id", "conv-1")
              .header("proxy-authorization", "Basic Zm9vOmJhcg==")
              .build();
      assertEquals(200, gw.send(request).statusCode());
    }

    List<ReceivedCall> calls = gw.sim.received();
    assertEquals(2, calls.size());
    for (ReceivedCall call : calls) {
      for (String name : call.headers().keySet()) {
        assertFalse(
            name.startsWith("x-spend-")
                || name.startsWith("x-forwarded")
                || name.startsWith("proxy-"),
            name + " forwarded to " + call.route());
        assertFalse(
            Set.of(
                    "cookie",
                    "forwarded",
                    "x-request-id",
                    "openai-organization",
                    "idempotency-key",
                    "x-conversation-id")
                .contains(name),
            name + " forwarded to " + call.route());
      }
      assertFalse(
          call.headers().values().stream()
              .anyMatch(
                  v -> v.contains("abc123") || v.contains("10.1.2.3") || v.contains(brand.id())),
          call.headers().toString());
    }
  }

  static Stream<Arguments> unvettedHeaders() {
    return Stream.of(
        Arguments.of(
            "x-stainless-authorization",
            "Bearer " + TOKEN,
            "a credential dressed as SDK telemetry"),
        Arguments.of("x-stainless-foo", "bar", "SDK telemetry nobody vetted"),
        Arguments.of("openai-beta", "assistants=v2", "switches on OpenAI's stateful beta APIs"));
  }

  @ParameterizedTest(name = "{0}: {1} stays home ({2})")
  @MethodSource("unvettedHeaders")
  void callerHeadersOffTheAllowListStayHome(String name, String value, String why)
      throws Exception {
    for (String path : List.of(ANTHROPIC, CHAT)) {
      String body = path.equals(ANTHROPIC) ? claudeBody("hi", false) : chatBody("hi", "");
      HttpRequest request =
          gw.postJson(path, body, Brand.fresh("allow"))
              .header(name, value)
              .header("x-stainless-lang", "java")
              .build();
      assertEquals(200, gw.send(request).statusCode(), path);
    }
    List<ReceivedCall> calls = gw.sim.received();
    assertEquals(2, calls.size());
    for (ReceivedCall call : calls) {
      assertTrue(
          call.header(name).isEmpty(), name + " reached " + call.route() + ": " + call.headers());
      // The allow-list is live: a vetted telemetry header on the same call does arrive.
      assertEquals("java", call.header("x-stainless-lang").orElse(null), call.headers().toString());
    }
  }

  @Test
  void theProviderIsAskedForAnUncompressedAnswerWhateverTheCallerAccepts() throws Exception {
    for (String path : List.of(ANTHROPIC, CHAT)) {
      String body = path.equals(ANTHROPIC) ? claudeBody("hi", false) : chatBody("hi", "");
      HttpRequest request =
          gw.postJson(path, body, Brand.fresh("enc")).header("accept-encoding", "gzip, br").build();
      assertEquals(200, gw.send(request).statusCode(), path);
    }
    for (ReceivedCall call : gw.sim.received()) {
      assertEquals(
          "identity",
          call.header("accept-encoding").orElse(null),
          call.route() + ": " + call.headers());
    }
  }

  static Stream<Arguments> betaHeaders() {
    return Stream.of(
        Arguments.of(
            "one header", List.of("code-execution-2025-08-25"), "code-execution-2025-08-25"),
        Arguments.of(
            "an allowed header, then a second one",
            List.of("prompt-caching-2024-07-31", "code-execution-2025-08-25"),
            "code-execution-2025-08-25"),
        Arguments.of(
            "a second header with a list",
            List.of(
                "prompt-caching-2024-07-31",
                "interleaved-thinking-2025-05-14, mcp-client-2025-04-04"),
            "mcp-client-2025-04-04"));
  }

  @ParameterizedTest(name = "a refused beta in {0} is a 400 naming anthropic-beta")
  @MethodSource("betaHeaders")
  void everyAnthropicBetaHeaderIsVetted(String what, List<String> headers, String refused)
      throws Exception {
    HttpRequest.Builder b = gw.postJson(ANTHROPIC, claudeBody("hi", false), Brand.fresh("beta"));
    headers.forEach(value -> b.header("anthropic-beta", value));
    HttpResponse<String> r = gw.send(b.build());

    assertEquals(400, r.statusCode(), r.body());
    assertTrue(r.body().contains("anthropic-beta value '" + refused + "'"), r.body());
    assertTrue(gw.sim.received().isEmpty(), "nothing reached the provider");
  }

  static Stream<Arguments> compressedAnswers() {
    return Stream.of(
        Arguments.of("an Anthropic JSON answer", ANTHROPIC, claudeBody("hi", false), false),
        Arguments.of("an Anthropic stream", ANTHROPIC, claudeBody("hi", true), true),
        Arguments.of("an OpenAI chat JSON answer", CHAT, chatBody("hi", ""), false),
        Arguments.of("an OpenAI chat stream", CHAT, chatBody("hi", ",\"stream\":true"), true));
  }

  @ParameterizedTest(
      name = "{0} gzipped by the provider reaches the caller readable and is billed its usage")
  @MethodSource("compressedAnswers")
  void aCompressedAnswerIsDecodedForTheCallerAndTheUsageTap(
      String what, String path, String body, boolean stream) throws Exception {
    boolean anthropic = path.equals(ANTHROPIC);
    gw.sim.script(anthropic ? SimRoute.ANTHROPIC_MESSAGES : SimRoute.OPENAI_CHAT, Fault.gzip());
    String requestId = "gzip-" + System.nanoTime();
    Brand brand = Brand.fresh("gzip");
    HttpResponse<String> r =
        gw.send(gw.postJson(path, body, brand).header("x-request-id", requestId).build());

    assertEquals(200, r.statusCode(), r.body());
    assertTrue(
        r.headers().firstValue("content-encoding").isEmpty(),
        "decoded, so no encoding is claimed: " + r.headers().map());
    if (stream) {
      assertTrue(r.body().contains(anthropic ? "event: message_stop" : "data: [DONE]"), r.body());
    } else {
      JsonNode answer = TestGateway.JSON.readTree(r.body());
      assertEquals(
          anthropic ? "message" : "chat.completion",
          answer.path(anthropic ? "type" : "object").asText(),
          r.body());
    }
    assertEquals(
        "gzip", only(anthropic ? SimRoute.ANTHROPIC_MESSAGES : SimRoute.OPENAI_CHAT).fault());
    gw.awaitSettled(brand.id());
    JsonNode line = gw.awaitAccessLine(l -> requestId.equals(l.path("request_id").asText()));
    BigDecimal billed =
        anthropic ? Costs.anthropic(Costs.CLAUDE_OPUS, USAGE) : Costs.openAi(Costs.GPT_SOL, USAGE);
    assertTrue(
        Costs.same(billed, new BigDecimal(line.path("settled_usd").asText())),
        "settled from the decoded usage: " + line);
  }

  @Test
  void anAnswerInAnEncodingTheGatewayCannotDecodeIsRefusedAndKeepsItsWorstCase() throws Exception {
    // A 200 labelled brotli: the gateway has no decoder, so it must neither pass the bytes on with
    // the label stripped nor guess; the answer is unreadable and the reservation keeps its worst
    // case.
    String answer =
        "{\"id\":\"msg_br\",\"type\":\"message\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}";
    gw.sim.script(
        SimRoute.ANTHROPIC_MESSAGES, Fault.status(200, Map.of("content-encoding", "br"), answer));
    String requestId = "br-" + System.nanoTime();
    Brand brand = Brand.fresh("br");
    HttpResponse<String> r =
        gw.send(
            gw.postJson(ANTHROPIC, claudeBody("hi", false), brand)
                .header("x-request-id", requestId)
                .build());

    assertEquals(502, r.statusCode(), r.body());
    assertTrue(r.headers().firstValue("content-encoding").isEmpty(), r.headers().map().toString());
    gw.awaitSettled(brand.id());
    JsonNode line = gw.awaitAccessLine(l -> requestId.equals(l.path("request_id").asText()));
    BigDecimal worstCase =
        Costs.worstCase(
            Costs.CLAUDE_OPUS,
            claudeBody("hi", false).getBytes(StandardCharsets.UTF_8).length,
            800);
    assertTrue(
        Costs.same(worstCase, new BigDecimal(line.path("settled_usd").asText())), line.toString());
  }

  @Test
  void aMarkedPromptAndEverySecretStayOutOfLogsAndResponses() throws Exception {
    String marker = "MARKER-" + Long.toHexString(System.nanoTime()) + "-PROMPT";
    Brand brand = Brand.fresh("marker");
    List<HttpResponse<String>> answers = new ArrayList<>();
    answers.add(post(ANTHROPIC, claudeBody(marker, false), brand));
    answers.add(post(ANTHROPIC, claudeBody(marker, true), brand));
    answers.add(post(CHAT, chatBody(marker, ""), brand));
    answers.add(post(CHAT, chatBody(marker, ",\"stream\":true"), brand));
    answers.add(post(RESPONSES, webSearchBody(marker, ""), brand));
    answers.add(post(RESPONSES, webSearchBody(marker, ",\"stream\":true"), brand));
    answers.add(gw.send(transcriptionWithPrompt(brand, marker)));
    // Refused calls must not echo the prompt either: a forbidden field, broken JSON, an upstream
    // error, a cut stream.
    answers.add(
        post(
            CHAT,
            chatBody(
                marker,
                ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"" + marker + "\"}}]"),
            brand));
    answers.add(
        post(
            ANTHROPIC,
            "{\"model\":\"claude-opus-5-5\",\"max_tokens\":10,\"messages\":[{\"content\":\""
                + marker,
            brand));
    // A prompt pasted into the model field is refused; the access log must not keep it either.
    answers.add(
        post(
            ANTHROPIC,
            "{\"model\":\"please summarise "
                + marker
                + "\",\"max_tokens\":10,\"messages\":[{\"role\":\"user\",\"content\":\""
                + marker
                + "\"}]}",
            brand));
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.status(500));
    answers.add(post(CHAT, chatBody(marker, ""), brand));
    gw.sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.streamCut(2));
    try {
      answers.add(post(ANTHROPIC, claudeBody(marker, true), brand));
    } catch (java.io.IOException cut) {
      // the cut reaches the caller too
    }
    gw.awaitSettled(brand.id());
    assertTrue(
        gw.sim.received().stream()
            .anyMatch(c -> c.body().map(b -> b.toString().contains(marker)).orElse(false)),
        "the prompt did reach the provider (the marker is live)");

    List<String> secrets = List.of(marker, TOKEN, OPENAI_KEY, ANTHROPIC_KEY);
    List<String> log = gw.logs.allText();
    assertFalse(log.isEmpty());
    for (String secret : secrets) {
      for (String line : log) {
        assertFalse(line.contains(secret), "log line leaks " + secret + ": " + line);
      }
      for (HttpResponse<String> answer : answers) {
        assertFalse(
            answer.headers().map().toString().contains(secret),
            "response headers leak " + secret + ": " + answer.headers().map());
      }
    }
    for (String secret : List.of(TOKEN, OPENAI_KEY, ANTHROPIC_KEY)) {
      for (HttpResponse<String> answer : answers) {
        assertFalse(answer.body().contains(secret), "response body leaks " + secret);
      }
    }
  }

  private HttpRequest transcriptionWithPrompt(Brand brand, String prompt) {
    String boundary = "e2e-boundary-42";
    String form =
        "--"
            + boundary
            + "\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\ngpt-6-transcribe\r\n"
            + "--"
            + boundary
            + "\r\nContent-Disposition: form-data; name=\"prompt\"\r\n\r\n"
            + prompt
            + "\r\n"
            + "--"
            + boundary
            + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.mp3\"\r\n"
            + "Content-Type: audio/mpeg\r\n\r\n"
            + "x".repeat(2000)
            + "\r\n"
            + "--"
            + boundary
            + "--\r\n";
    return gw.postJson(TRANSCRIPTIONS, "", brand)
        .header("content-type", "multipart/form-data; boundary=" + boundary)
        .POST(HttpRequest.BodyPublishers.ofString(form, StandardCharsets.UTF_8))
        .build();
  }

  // --- 8. one access log line per call -----------------------------------------------------

  private static final Set<String> ACCESS_FIELDS =
      Set.of(
          "time",
          "request_id",
          "route",
          "provider",
          "lane",
          "brand",
          "model",
          "status",
          "reserved_usd",
          "settled_usd",
          "duration_ms",
          "error",
          "failover",
          "profile",
          "data_class");

  /** A call sent with its own x-request-id, and what its access line must say. */
  record Logged(String what, int status, String route) {}

  @Test
  void everyCallWritesExactlyOneAccessLineWithTheSpecFields() throws Exception {
    Brand brand = Brand.fresh("log");
    Map<String, Logged> sent = new java.util.LinkedHashMap<>();
    String ok = send(sent, "a JSON success", ANTHROPIC, claudeBody("hi", false), brand, 200);
    send(sent, "a streamed success", CHAT, chatBody("hi", ",\"stream\":true"), brand, 200);
    send(sent, "a policy refusal", CHAT, chatBody("hi", ",\"tools\":[]"), brand, 400);
    send(
        sent,
        "a budget refusal",
        ANTHROPIC,
        claudeBody("hi", false),
        brand.withDaily("0.000001"),
        402);
    gw.sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.rateLimited(3));
    send(sent, "an upstream 429", ANTHROPIC, claudeBody("hi", false), brand, 429);
    send(
        sent,
        "a missing spend header",
        RESPONSES,
        webSearchBody("hi", ""),
        new Brand(brand.id(), "", "50"),
        400);
    send(sent, "a wrong token", CHAT, chatBody("hi", ""), brand, 401);
    send(sent, "an unknown provider path", "/openai/v1/embeddings", chatBody("hi", ""), brand, 404);
    gw.awaitSettled(brand.id());
    for (String requestId : sent.keySet()) {
      gw.awaitAccessLines(requestId, 1);
    }
    gw.awaitAccessLogCaughtUp(); // a second line of any call (a bug) is in the log by now

    for (Map.Entry<String, Logged> call : sent.entrySet()) {
      List<JsonNode> written =
          gw.logs.accessLines().stream()
              .filter(l -> call.getKey().equals(l.path("request_id").asText()))
              .toList();
      assertEquals(1, written.size(), call.getValue().what() + " wrote " + written);
      JsonNode line = written.get(0);
      Set<String> fields = new java.util.HashSet<>();
      line.fieldNames().forEachRemaining(fields::add);
      assertEquals(ACCESS_FIELDS, fields, call.getValue().what());
      assertEquals(
          call.getValue().status(),
          line.get("status").asInt(),
          call.getValue().what() + ": " + line);
      assertEquals(
          call.getValue().route(),
          line.get("route").asText(),
          call.getValue().what() + ": " + line);
      assertTrue(line.get("duration_ms").asLong() >= 0);
      if (call.getValue().status() != 200) {
        assertTrue(
            line.get("error").isTextual(),
            call.getValue().what() + " names its error class: " + line);
      }
    }
    JsonNode success = gw.awaitAccessLine(l -> ok.equals(l.path("request_id").asText()));
    assertEquals("anthropic", success.get("provider").asText());
    assertEquals("app", success.get("lane").asText());
    assertEquals(brand.id(), success.get("brand").asText());
    assertEquals("claude-opus-5-5", success.get("model").asText());
    assertTrue(success.get("error").isNull(), success.toString());
    assertFalse(success.get("failover").asBoolean());
    BigDecimal worstCase =
        Costs.worstCase(
            Costs.CLAUDE_OPUS,
            claudeBody("hi", false).getBytes(StandardCharsets.UTF_8).length,
            800);
    assertTrue(
        Costs.same(worstCase, new BigDecimal(success.get("reserved_usd").asText())),
        success.toString());
    assertTrue(
        Costs.same(
            Costs.anthropic(Costs.CLAUDE_OPUS, USAGE),
            new BigDecimal(success.get("settled_usd").asText())),
        success.toString());
  }

  private String send(
      Map<String, Logged> sent, String what, String path, String body, Brand brand, int status)
      throws Exception {
    String requestId = "log-" + sent.size() + "-" + System.nanoTime();
    HttpRequest.Builder b = gw.postJson(path, body, brand).header("x-request-id", requestId);
    if (status == 401) {
      b.setHeader("authorization", "Bearer wrong-token");
    }
    HttpResponse<String> r = gw.send(b.build());
    assertEquals(status, r.statusCode(), what + ": " + r.body());
    // Refused before a route matched (401, 404): the line names the provider prefix, not caller
    // text.
    String route = status == 401 || status == 404 ? "/" + path.split("/")[1] + "/*" : path;
    sent.put(requestId, new Logged(what, status, route));
    // Exactly the caller's id comes back; an OpenAI request id travels as x-upstream-request-id.
    assertEquals(
        List.of(requestId),
        r.headers().allValues("x-request-id"),
        what + " echoes its request id once");
    return requestId;
  }
}
