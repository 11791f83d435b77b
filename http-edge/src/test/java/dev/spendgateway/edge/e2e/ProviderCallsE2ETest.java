package dev.spendgateway.edge.e2e;

import static dev.spendgateway.edge.e2e.E2eGateway.USAGE;
import static dev.spendgateway.edge.testkit.TestGateway.cap;
import static dev.spendgateway.edge.testkit.TestGateway.money;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.anthropic.core.http.StreamResponse;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.openai.models.audio.AudioResponseFormat;
import com.openai.models.audio.transcriptions.TranscriptionCreateParams;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseStreamEvent;
import com.openai.models.responses.WebSearchTool;
import dev.spendgateway.edge.testkit.GatewayPerClass;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimConfig;
import dev.spendgateway.sim.SimRoute;
import dev.spendgateway.sim.Usage;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Calls that reach the provider, end to end through real HTTP: the official SDKs get the
 * simulator's answer, and {@code /usage} shows exactly what the answer cost — or, when the answer
 * was an error, cut, or abandoned, what the settlement rules ({@code Settlement}) say it costs.
 */
class ProviderCallsE2ETest extends GatewayPerClass {
  @Override
  protected TestGateway startGateway() throws Exception {
    return E2eGateway.start("calls");
  }

  // --- 1. JSON and streaming, settled at the exact cost ---------------------------------------

  /** One successful call through an SDK, made on behalf of {@code brand}. */
  interface SdkCall {
    void run(TestGateway gw, Brand brand);
  }

  static Stream<Arguments> successfulCalls() {
    Usage searches = USAGE.withWebSearches(2);
    BigDecimal twoSearches = new BigDecimal("0.02");
    return Stream.of(
        Arguments.of(
            "an Anthropic message answered as JSON",
            (SdkCall) ProviderCallsE2ETest::anthropicJson,
            Costs.anthropic(Costs.CLAUDE_OPUS, USAGE),
            null),
        Arguments.of(
            "an Anthropic message streamed as SSE",
            (SdkCall) ProviderCallsE2ETest::anthropicStream,
            Costs.anthropic(Costs.CLAUDE_OPUS, USAGE),
            null),
        Arguments.of(
            "an OpenAI chat completion answered as JSON",
            (SdkCall) ProviderCallsE2ETest::chatJson,
            Costs.openAi(Costs.GPT_SOL, USAGE),
            null),
        Arguments.of(
            "an OpenAI chat completion streamed without asking for usage",
            (SdkCall) ProviderCallsE2ETest::chatStream,
            Costs.openAi(Costs.GPT_SOL, USAGE),
            null),
        Arguments.of(
            "an OpenAI web search answered as JSON",
            (SdkCall) ProviderCallsE2ETest::responsesJson,
            Costs.openAi(Costs.GPT_SOL, searches).add(twoSearches),
            searches),
        Arguments.of(
            "an OpenAI web search streamed as SSE",
            (SdkCall) ProviderCallsE2ETest::responsesStream,
            Costs.openAi(Costs.GPT_SOL, searches).add(twoSearches),
            searches),
        Arguments.of(
            "an OpenAI transcription of three seconds of audio",
            (SdkCall) ProviderCallsE2ETest::transcription,
            Costs.roundUp(
                new BigDecimal("0.006")
                    .multiply(BigDecimal.valueOf(3))
                    .divide(BigDecimal.valueOf(60))),
            THREE_SECONDS_OF_AUDIO));
  }

  @ParameterizedTest(name = "{0} costs exactly ${2} in /usage")
  @MethodSource("successfulCalls")
  void aSuccessfulCallIsSettledAtItsExactCost(
      String call, SdkCall sdkCall, BigDecimal expectedUsd, Usage scripted) throws Exception {
    Brand brand = Brand.fresh("exact");
    BigDecimal globalBefore = money(cap(gw.awaitSettled(brand.id()), "global_daily"), "spentUsd");
    if (scripted != null) {
      gw.sim.setDefaultUsage(scripted);
    }

    sdkCall.run(gw, brand);

    JsonNode usage = gw.awaitSettled(brand.id());
    for (String capName : List.of("brand_daily", "brand_monthly")) {
      JsonNode row = cap(usage, capName);
      assertEquals(brand.id(), row.get("subject").asText());
      assertTrue(
          Costs.same(expectedUsd, money(row, "spentUsd")),
          capName + " spent, expected " + expectedUsd + ": " + row);
      assertTrue(Costs.same(BigDecimal.ZERO, money(row, "reservedUsd")), capName + ": " + row);
    }
    BigDecimal globalAfter = money(cap(usage, "global_daily"), "spentUsd");
    assertTrue(
        Costs.same(expectedUsd, globalAfter.subtract(globalBefore)),
        "global_daily grew by " + globalAfter.subtract(globalBefore));
    assertEquals(0, usage.get("openReservations").asInt());
    assertEquals(1, gw.sim.receivedCount(), "exactly one upstream call");
  }

  @Test
  void aProviderCallMovesTheUpstreamAndOverheadSeriesOnMetrics() throws Exception {
    Brand brand = Brand.fresh("metrics");
    double before =
        metric(
            "gateway_upstream_responses_total{model=\"claude-opus-5-5\",profile=\"\",provider=\"anthropic\",status=\"200\"}");
    anthropicJson(gw, brand);
    gw.awaitSettled(brand.id());
    assertEquals(
        before + 1,
        metric(
            "gateway_upstream_responses_total{model=\"claude-opus-5-5\",profile=\"\",provider=\"anthropic\",status=\"200\"}"));
    assertTrue(metric("gateway_overhead_seconds_count{route=\"/anthropic/v1/messages\"}") >= 1);
    assertTrue(
        metric(
                "gateway_upstream_ttfb_seconds_count{model=\"claude-opus-5-5\",profile=\"\",provider=\"anthropic\"}")
            >= 1);
  }

  /** One sample of the Prometheus text at /metrics; 0 when the series is not there yet. */
  private double metric(String series) throws Exception {
    HttpResponse<String> r =
        gw.send(gw.get("/metrics").header("x-api-key", E2eGateway.TOKEN).build());
    assertEquals(200, r.statusCode());
    return r.body()
        .lines()
        .filter(l -> l.startsWith(series + " "))
        .mapToDouble(l -> Double.parseDouble(l.substring(series.length() + 1).trim()))
        .findFirst()
        .orElse(0);
  }

  static MessageCreateParams.Builder claude(Brand brand) {
    return SdkParams.claude(brand, 1024);
  }

  static ChatCompletionCreateParams.Builder chat(Brand brand) {
    return SdkParams.chat(brand, 2000);
  }

  static ResponseCreateParams.Builder webSearch(Brand brand) {
    return SdkParams.responses(brand, 2000)
        .addTool(WebSearchTool.builder().type(WebSearchTool.Type.WEB_SEARCH).build());
  }

  /** The simulator reports transcription usage as {"type":"duration","seconds": inputTokens}. */
  private static final Usage THREE_SECONDS_OF_AUDIO = new Usage(3, 0, 0, 0, 0);

  private static void transcription(TestGateway gw, Brand brand) {
    TranscriptionCreateParams.Builder b =
        TranscriptionCreateParams.builder()
            .file(new byte[48_000])
            .model("gpt-6-transcribe")
            .responseFormat(AudioResponseFormat.JSON);
    brand.headerMap().forEach(b::putAdditionalHeader);
    var answer = gw.openAi().audio().transcriptions().create(b.build());
    assertTrue(answer.isTranscription());
  }

  private static void anthropicJson(TestGateway gw, Brand brand) {
    var message = gw.anthropic().messages().create(claude(brand).build());
    assertEquals(SimConfig.DEFAULT_REPLY, message.content().get(0).asText().text());
    assertEquals(USAGE.outputTokens(), message.usage().outputTokens());
  }

  private static void anthropicStream(TestGateway gw, Brand brand) {
    List<RawMessageStreamEvent> events = new ArrayList<>();
    try (StreamResponse<RawMessageStreamEvent> s =
        gw.anthropic().messages().createStreaming(claude(brand).build())) {
      s.stream().forEach(events::add);
    }
    assertTrue(events.get(events.size() - 1).isMessageStop(), "the stream reached message_stop");
  }

  private static void chatJson(TestGateway gw, Brand brand) {
    var completion = gw.openAi().chat().completions().create(chat(brand).build());
    assertEquals(
        SimConfig.DEFAULT_REPLY, completion.choices().get(0).message().content().orElseThrow());
  }

  private static void chatStream(TestGateway gw, Brand brand) {
    StringBuilder text = new StringBuilder();
    try (com.openai.core.http.StreamResponse<ChatCompletionChunk> s =
        gw.openAi().chat().completions().createStreaming(chat(brand).build())) {
      s.stream()
          .forEach(c -> c.choices().forEach(ch -> ch.delta().content().ifPresent(text::append)));
    }
    assertEquals(SimConfig.DEFAULT_REPLY, text.toString());
  }

  private static void responsesJson(TestGateway gw, Brand brand) {
    var response = gw.openAi().responses().create(webSearch(brand).build());
    assertTrue(response.output().get(0).isWebSearchCall());
  }

  private static void responsesStream(TestGateway gw, Brand brand) {
    List<ResponseStreamEvent> events = new ArrayList<>();
    try (com.openai.core.http.StreamResponse<ResponseStreamEvent> s =
        gw.openAi().responses().createStreaming(webSearch(brand).build())) {
      s.stream().forEach(events::add);
    }
    assertTrue(events.get(events.size() - 1).isCompleted());
  }

  // --- 3. a provider 429 passes through and costs nothing -------------------------------------

  static Stream<Arguments> rateLimited() {
    return Stream.of(
        Arguments.of("Anthropic", SimRoute.ANTHROPIC_MESSAGES),
        Arguments.of("OpenAI", SimRoute.OPENAI_CHAT));
  }

  @ParameterizedTest(name = "a 429 from {0} reaches the SDK with its retry-after and settles at $0")
  @MethodSource("rateLimited")
  void aProviderRateLimitPassesThroughAndCostsNothing(String provider, SimRoute route)
      throws Exception {
    Brand brand = Brand.fresh("ratelimit");
    gw.sim.script(route, Fault.rateLimited(7));

    List<String> retryAfter;
    List<String> gatewayError;
    if (route == SimRoute.ANTHROPIC_MESSAGES) {
      var e =
          assertThrows(
              com.anthropic.errors.RateLimitException.class,
              () -> gw.anthropic().messages().create(claude(brand).build()));
      retryAfter = e.headers().values("retry-after");
      gatewayError = e.headers().values("x-gateway-error");
      assertTrue(
          e.headers().values("request-id").get(0).startsWith("req_"),
          "the provider's request id is passed back");
    } else {
      var e =
          assertThrows(
              com.openai.errors.RateLimitException.class,
              () -> gw.openAi().chat().completions().create(chat(brand).build()));
      retryAfter = e.headers().values("retry-after");
      gatewayError = e.headers().values("x-gateway-error");
      assertEquals(
          "rate_limit_exceeded", e.code().orElseThrow(), "the provider's body is passed through");
    }

    assertEquals(List.of("7"), retryAfter);
    assertTrue(gatewayError.isEmpty(), "an upstream error is not marked as the gateway's");
    JsonNode usage = gw.awaitSettled(brand.id());
    assertTrue(
        Costs.same(BigDecimal.ZERO, money(cap(usage, "brand_daily"), "spentUsd")),
        usage.toString());
    assertTrue(
        Costs.same(BigDecimal.ZERO, money(cap(usage, "brand_daily"), "reservedUsd")),
        usage.toString());
  }

  // --- 4. a cut stream keeps the worst case -----------------------------------------------------

  static Stream<Arguments> cutStreams() {
    return Stream.of(
        Arguments.of(
            "an Anthropic stream",
            SimRoute.ANTHROPIC_MESSAGES,
            "/anthropic/v1/messages",
            "{\"model\":\"claude-opus-5-5\",\"max_tokens\":1000,\"stream\":true,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"Count to three.\"}]}",
            Costs.CLAUDE_OPUS,
            1000),
        Arguments.of(
            "an OpenAI chat stream",
            SimRoute.OPENAI_CHAT,
            "/openai/v1/chat/completions",
            "{\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":900,\"stream\":true,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"Count to three.\"}]}",
            Costs.GPT_SOL,
            900));
  }

  @ParameterizedTest(
      name = "{0} cut after three events keeps its worst case, logged as usage_missing")
  @MethodSource("cutStreams")
  void aCutStreamKeepsTheWorstCase(
      String what, SimRoute route, String path, String body, Costs.Price price, long maxTokens)
      throws Exception {
    Brand brand = Brand.fresh("cut");
    String requestId = "cut-" + System.nanoTime();
    gw.sim.script(route, Fault.streamCut(3));

    try {
      HttpResponse<String> r =
          gw.send(gw.postJson(path, body, brand).header("x-request-id", requestId).build());
      assertEquals(200, r.statusCode(), "the stream had started: " + r.body());
    } catch (java.io.IOException expected) {
      // The gateway closes the connection mid-body: the client sees the cut too.
    }

    BigDecimal worstCase =
        Costs.worstCase(price, body.getBytes(StandardCharsets.UTF_8).length, maxTokens);
    JsonNode usage = gw.awaitSettled(brand.id());
    assertTrue(
        Costs.same(worstCase, money(cap(usage, "brand_daily"), "spentUsd")),
        "spent should be the worst case " + worstCase + ": " + usage);
    JsonNode line = gw.awaitAccessLine(l -> requestId.equals(l.path("request_id").asText()));
    assertTrue(line.path("error").asText().startsWith("usage_missing"), line.toString());
    assertTrue(
        Costs.same(worstCase, new BigDecimal(line.path("settled_usd").asText())), line.toString());
  }

  // --- 5. a client that leaves mid-stream still pays the real usage ---------------------------

  static Stream<Arguments> abandonedStreams() {
    return Stream.of(
        Arguments.of(
            "an Anthropic stream",
            SimRoute.ANTHROPIC_MESSAGES,
            "/anthropic/v1/messages",
            "{\"model\":\"claude-opus-5-5\",\"max_tokens\":1000,\"stream\":true,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story.\"}]}",
            Costs.anthropic(Costs.CLAUDE_OPUS, USAGE)),
        Arguments.of(
            "an OpenAI chat stream",
            SimRoute.OPENAI_CHAT,
            "/openai/v1/chat/completions",
            "{\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":900,\"stream\":true,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story.\"}]}",
            Costs.openAi(Costs.GPT_SOL, USAGE)));
  }

  @ParameterizedTest(
      name = "{0} whose client disconnects after the first event is settled at the real usage")
  @MethodSource("abandonedStreams")
  void aClientThatLeavesMidStreamStillGetsTheRealUsageSettled(
      String what, SimRoute route, String path, String body, BigDecimal actualUsd)
      throws Exception {
    Brand brand = Brand.fresh("gone");
    gw.sim.script(route, Fault.slowDrip(Duration.ofMillis(150)));

    try (Socket socket =
        new Socket(
            "127.0.0.1", Integer.parseInt(gw.base.substring(gw.base.lastIndexOf(':') + 1)))) {
      socket.setSoTimeout(10_000);
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      StringBuilder head =
          new StringBuilder("POST " + path + " HTTP/1.1\r\nhost: 127.0.0.1\r\n")
              .append("authorization: Bearer ")
              .append(E2eGateway.TOKEN)
              .append("\r\n")
              .append("content-type: application/json\r\ncontent-length: ")
              .append(bytes.length)
              .append("\r\n");
      brand.headerMap().forEach((k, v) -> head.append(k).append(": ").append(v).append("\r\n"));
      head.append("\r\n");
      OutputStream out = socket.getOutputStream();
      out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
      out.write(bytes);
      out.flush();
      BufferedReader in =
          new BufferedReader(
              new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
      String statusLine = in.readLine();
      assertTrue(statusLine.contains(" 200 "), statusLine);
      String line;
      while ((line = in.readLine()) != null && !line.startsWith("data:")) {
        // headers, chunk sizes, event names: read on to the first event's data
      }
      assertTrue(line != null, "one event arrived before the client left");
      JsonNode mid = gw.usage(brand.id());
      assertFalse(
          Costs.same(BigDecimal.ZERO, money(cap(mid, "brand_daily"), "reservedUsd")),
          "the stream is still running when the client leaves: " + mid);
    }

    JsonNode usage = gw.awaitSettled(brand.id());
    assertTrue(
        Costs.same(actualUsd, money(cap(usage, "brand_daily"), "spentUsd")),
        "spent should be the real cost " + actualUsd + ", not the worst case: " + usage);
  }

  @Test
  void theSimulatorBillsWhatTheTestsAssume() {
    // Guards the expected values above: they assume the simulator's default usage is USAGE.
    assertEquals(USAGE, gw.sim.defaultUsage());
  }
}
