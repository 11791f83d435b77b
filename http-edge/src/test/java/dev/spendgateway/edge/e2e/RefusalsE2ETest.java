package dev.spendgateway.edge.e2e;

import static dev.spendgateway.edge.e2e.E2eGateway.TOKEN;
import static dev.spendgateway.edge.e2e.E2eGateway.USAGE;
import static dev.spendgateway.edge.testkit.TestGateway.JSON;
import static dev.spendgateway.edge.testkit.TestGateway.TRANSCRIPTIONS;
import static dev.spendgateway.edge.testkit.TestGateway.cap;
import static dev.spendgateway.edge.testkit.TestGateway.money;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.anthropic.models.messages.MessageCreateParams;
import com.fasterxml.jackson.databind.JsonNode;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.WebSearchTool;
import dev.spendgateway.edge.testkit.GatewayPerClass;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import java.io.ByteArrayInputStream;
import java.math.BigDecimal;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Calls the gateway refuses itself — 401, 400, 402, 404, 413, 415 — seen through the official SDKs
 * (or plain HTTP where an SDK cannot send the request): the provider's error shape, {@code
 * x-gateway-error: true}, a message naming the rule, and nothing sent to the provider.
 */
class RefusalsE2ETest extends GatewayPerClass {
  @Override
  protected TestGateway startGateway() throws Exception {
    return E2eGateway.start("refusals");
  }

  /** What an SDK surfaced for a refused call, whichever SDK it was. */
  record Refusal(int status, String message, List<String> gatewayError) {
    static Refusal of(com.anthropic.errors.AnthropicServiceException e) {
      return new Refusal(e.statusCode(), e.getMessage(), e.headers().values("x-gateway-error"));
    }

    static Refusal of(com.openai.errors.OpenAIServiceException e) {
      return new Refusal(e.statusCode(), e.getMessage(), e.headers().values("x-gateway-error"));
    }
  }

  // --- 401 ---------------------------------------------------------------------------------------

  static Stream<Arguments> wrongTokens() {
    return Stream.of(
        Arguments.of(
            "the Anthropic SDK with a wrong x-api-key",
            (Function<TestGateway, Refusal>)
                gw ->
                    Refusal.of(
                        assertThrows(
                            com.anthropic.errors.UnauthorizedException.class,
                            () ->
                                gw.anthropicWithApiKey("not-the-token")
                                    .messages()
                                    .create(claude(Brand.fresh("a")).build())))),
        Arguments.of(
            "the Anthropic SDK with a wrong bearer token",
            (Function<TestGateway, Refusal>)
                gw ->
                    Refusal.of(
                        assertThrows(
                            com.anthropic.errors.UnauthorizedException.class,
                            () ->
                                gw.anthropicWithBearer("not-the-token")
                                    .messages()
                                    .create(claude(Brand.fresh("a")).build())))),
        Arguments.of(
            "the OpenAI SDK with a wrong bearer token",
            (Function<TestGateway, Refusal>)
                gw ->
                    Refusal.of(
                        assertThrows(
                            com.openai.errors.UnauthorizedException.class,
                            () ->
                                gw.openAi("not-the-token")
                                    .chat()
                                    .completions()
                                    .create(chat(Brand.fresh("a")).build())))),
        Arguments.of(
            "the OpenAI SDK sending the token with one character more",
            (Function<TestGateway, Refusal>)
                gw ->
                    Refusal.of(
                        assertThrows(
                            com.openai.errors.UnauthorizedException.class,
                            () ->
                                gw.openAi(TOKEN + "x")
                                    .chat()
                                    .completions()
                                    .create(chat(Brand.fresh("a")).build())))));
  }

  @ParameterizedTest(name = "{0} gets a 401 and reaches no provider")
  @MethodSource("wrongTokens")
  void aWrongTokenIsRefused(String who, Function<TestGateway, Refusal> call) {
    Refusal r = call.apply(gw);

    assertEquals(401, r.status());
    assertEquals(List.of("true"), r.gatewayError());
    assertTrue(r.message().contains("gateway token"), r.message());
    assertTrue(gw.sim.received().isEmpty());
  }

  @ParameterizedTest(name = "no token at all on {0} gets a 401")
  @MethodSource("pathsNeedingTheToken")
  void aMissingTokenIsRefused(String path, String method) throws Exception {
    HttpRequest.Builder b = gw.get(path);
    if (method.equals("POST")) {
      Brand.fresh("none").headers(b).POST(HttpRequest.BodyPublishers.ofString(claudeBody(1000)));
    }
    HttpResponse<String> r = gw.send(b.header("content-type", "application/json").build());

    assertEquals(401, r.statusCode(), r.body());
    assertEquals("true", r.headers().firstValue("x-gateway-error").orElse(null));
    assertTrue(gw.sim.received().isEmpty());
  }

  static Stream<Arguments> pathsNeedingTheToken() {
    return Stream.of(
        Arguments.of("/anthropic/v1/messages", "POST"),
        Arguments.of("/openai/v1/chat/completions", "POST"),
        Arguments.of("/openai/v1/responses", "POST"),
        Arguments.of("/openai/v1/audio/transcriptions", "POST"),
        Arguments.of("/usage", "GET"),
        Arguments.of("/ledger/reservations/r-1", "GET"));
  }

  @Test
  void theTokenWorksInBothHeaderStylesTheSdksUse() {
    Brand brand = Brand.fresh("styles");
    assertEquals(
        USAGE.outputTokens(),
        gw.anthropicWithApiKey(TOKEN)
            .messages()
            .create(claude(brand).build())
            .usage()
            .outputTokens());
    assertEquals(
        USAGE.outputTokens(),
        gw.anthropicWithBearer(TOKEN)
            .messages()
            .create(claude(brand).build())
            .usage()
            .outputTokens());
    assertEquals(
        USAGE.outputTokens(),
        gw.openAi(TOKEN)
            .chat()
            .completions()
            .create(chat(brand).build())
            .usage()
            .orElseThrow()
            .completionTokens());
    assertEquals(3, gw.sim.receivedCount());
  }

  // --- 400 ---------------------------------------------------------------------------------------

  static MessageCreateParams.Builder claude(Brand brand) {
    return SdkParams.claude(brand, 1000);
  }

  static ChatCompletionCreateParams.Builder chat(Brand brand) {
    return SdkParams.chat(brand, 1000);
  }

  /** A Responses call each refusal row changes into one the policy refuses. */
  static ResponseCreateParams.Builder webSearch(Brand brand) {
    return SdkParams.responses(brand, 1000);
  }

  private static Refusal anthropicRefusal(TestGateway gw, MessageCreateParams params) {
    return Refusal.of(
        assertThrows(
            com.anthropic.errors.BadRequestException.class,
            () -> gw.anthropic().messages().create(params)));
  }

  private static Refusal chatRefusal(TestGateway gw, ChatCompletionCreateParams params) {
    return Refusal.of(
        assertThrows(
            com.openai.errors.BadRequestException.class,
            () -> gw.openAi().chat().completions().create(params)));
  }

  private static Refusal responsesRefusal(TestGateway gw, ResponseCreateParams params) {
    return Refusal.of(
        assertThrows(
            com.openai.errors.BadRequestException.class,
            () -> gw.openAi().responses().create(params)));
  }

  private static Arguments claudeRow(
      String what, UnaryOperator<MessageCreateParams.Builder> change, String named) {
    return Arguments.of(
        what,
        (Function<TestGateway, Refusal>)
            gw -> anthropicRefusal(gw, change.apply(claude(Brand.fresh("bad"))).build()),
        named);
  }

  private static Arguments chatRow(
      String what, UnaryOperator<ChatCompletionCreateParams.Builder> change, String named) {
    return Arguments.of(
        what,
        (Function<TestGateway, Refusal>)
            gw -> chatRefusal(gw, change.apply(chat(Brand.fresh("bad"))).build()),
        named);
  }

  private static Arguments responsesRow(
      String what, UnaryOperator<ResponseCreateParams.Builder> change, String named) {
    return Arguments.of(
        what,
        (Function<TestGateway, Refusal>)
            gw -> responsesRefusal(gw, change.apply(webSearch(Brand.fresh("bad"))).build()),
        named);
  }

  private static com.anthropic.core.JsonValue anthropicJson(Object value) {
    return com.anthropic.core.JsonValue.from(value);
  }

  private static com.openai.core.JsonValue openAiJson(Object value) {
    return com.openai.core.JsonValue.from(value);
  }

  static Stream<Arguments> policyViolations() {
    Map<String, Object> function =
        Map.of(
            "type",
            "function",
            "function",
            Map.of("name", "run_sql", "parameters", Map.of("type", "object")));
    Map<String, Object> webSearchTool = Map.of("type", "web_search");
    return Stream.of(
        claudeRow(
            "an Anthropic call to a model outside the catalog",
            b -> b.model("claude-3-opus-20240229"),
            "model_allow_list"),
        claudeRow(
            "an Anthropic call offering the code execution tool",
            b ->
                b.putAdditionalBodyProperty(
                    "tools",
                    anthropicJson(
                        List.of(
                            Map.of("type", "code_execution_20250522", "name", "code_execution")))),
            "tools_web_search_only"),
        claudeRow(
            "an Anthropic call naming an MCP server",
            b ->
                b.putAdditionalBodyProperty(
                    "mcp_servers",
                    anthropicJson(
                        List.of(Map.of("type", "url", "url", "https://mcp.example", "name", "x")))),
            "forbidden_field"),
        claudeRow("an Anthropic call with 13 messages", b -> thirteenMessages(b), "messages_count"),
        claudeRow(
            "an Anthropic call asking for 64,001 output tokens",
            b -> b.maxTokens(64_001),
            "max_tokens_cap"),
        claudeRow(
            "an Anthropic call switching on the code execution beta",
            b -> b.putAdditionalHeader("anthropic-beta", "code-execution-2025-05-22"),
            "anthropic_beta"),
        claudeRow(
            "an Anthropic call without x-spend-lane",
            b -> b.removeAdditionalHeaders("x-spend-lane"),
            "x-spend-lane"),
        claudeRow(
            "an Anthropic call on the app lane without its daily cap",
            b -> b.removeAdditionalHeaders("x-spend-brand-daily-usd"),
            "x-spend-brand-daily-usd"),
        chatRow(
            "an OpenAI chat call to a model outside the catalog",
            b -> b.model("gpt-3.5-turbo"),
            "model_allow_list"),
        chatRow("an OpenAI chat call to a retired model", b -> b.model("gpt-4.1"), "model_retired"),
        chatRow(
            "an OpenAI chat call offering a function tool",
            b -> b.putAdditionalBodyProperty("tools", openAiJson(List.of(function))),
            "forbidden_field"),
        chatRow("an OpenAI chat call with 13 messages", b -> thirteenMessages(b), "messages_count"),
        chatRow(
            "an OpenAI chat call asking for 32,001 completion tokens",
            b -> b.maxCompletionTokens(32_001),
            "max_tokens_cap"),
        chatRow(
            "an OpenAI chat call asking for 32,001 legacy max_tokens",
            b -> b.maxCompletionTokens(com.openai.core.JsonMissing.of()).maxTokens(32_001),
            "max_tokens_cap"),
        chatRow(
            "an OpenAI chat call on the app lane without x-spend-brand",
            b -> b.removeAdditionalHeaders("x-spend-brand"),
            "x-spend-brand"),
        chatRow(
            "an OpenAI chat call with an unknown lane",
            b -> b.replaceAdditionalHeaders("x-spend-lane", "vip"),
            "x-spend-lane"),
        responsesRow("an OpenAI responses call with no tool", b -> b, "web_search_required"),
        responsesRow(
            "an OpenAI responses call offering a function tool",
            b ->
                b.putAdditionalBodyProperty(
                    "tools",
                    openAiJson(
                        List.of(
                            Map.of(
                                "type",
                                "function",
                                "name",
                                "run_sql",
                                "parameters",
                                Map.of("type", "object"))))),
            "tools_web_search_only"),
        responsesRow(
            "an OpenAI responses call offering web search and code interpreter together",
            b ->
                b.putAdditionalBodyProperty(
                    "tools",
                    openAiJson(
                        List.of(
                            webSearchTool,
                            Map.of(
                                "type", "code_interpreter", "container", Map.of("type", "auto"))))),
            "web_search_required"),
        responsesRow(
            "an OpenAI responses call allowing 9 searches",
            b ->
                b.addTool(WebSearchTool.builder().type(WebSearchTool.Type.WEB_SEARCH).build())
                    .maxToolCalls(9),
            "web_search_max_uses"));
  }

  private static MessageCreateParams.Builder thirteenMessages(MessageCreateParams.Builder b) {
    for (int i = 0; i < 6; i++) {
      b.addAssistantMessage("ok " + i).addUserMessage("again " + i);
    }
    return b;
  }

  private static ChatCompletionCreateParams.Builder thirteenMessages(
      ChatCompletionCreateParams.Builder b) {
    for (int i = 0; i < 12; i++) {
      b.addUserMessage("again " + i);
    }
    return b;
  }

  @ParameterizedTest(name = "{0} is a 400 naming {2}, and nothing reaches the provider")
  @MethodSource("policyViolations")
  void aPolicyViolationIsRefusedBeforeTheProvider(
      String what, Function<TestGateway, Refusal> call, String named) {
    Refusal r = call.apply(gw);

    assertEquals(400, r.status());
    assertTrue(r.message().contains(named), "message should name " + named + ": " + r.message());
    assertEquals(List.of("true"), r.gatewayError());
    assertTrue(gw.sim.received().isEmpty(), "reached the provider: " + gw.sim.received());
  }

  // --- 415 ---------------------------------------------------------------------------------------

  /** A body each route would accept: under the wrong content type it must still be refused. */
  private static String validBody(String path) {
    return switch (path) {
      case "/anthropic/v1/messages" -> claudeBody(100);
      case "/openai/v1/responses" ->
          "{\"model\":\"gpt-6.1-sol\",\"max_output_tokens\":100,\"tools\":[{\"type\":\"web_search\"}],\"input\":\"hi\"}";
      case "/v1/chat/completions" ->
          "{\"model\":\"fast-summary\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
      case TRANSCRIPTIONS ->
          "--b-1\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\ngpt-6-transcribe\r\n"
              + "--b-1\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.mp3\"\r\nContent-Type: audio/mpeg\r\n\r\n"
              + "x".repeat(300)
              + "\r\n--b-1--\r\n";
      default ->
          "{\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    };
  }

  @ParameterizedTest(name = "{0} under content-type [{1}] is a 415 in the {2} shape naming [{3}]")
  @CsvSource(
      delimiter = '|',
      nullValues = "none",
      textBlock =
          """
      /anthropic/v1/messages          | multipart/form-data; boundary=b   | Anthropic | application/json
      /anthropic/v1/messages          | multipart/mixed; boundary=b       | Anthropic | application/json
      /openai/v1/chat/completions     | multipart/form-data; boundary=b   | OpenAI    | application/json
      /openai/v1/responses            | multipart/form-data; boundary=b   | OpenAI    | application/json
      /v1/chat/completions            | multipart/form-data; boundary=b   | OpenAI    | application/json
      /openai/v1/audio/transcriptions | application/json                  | OpenAI    | multipart/form-data
      /openai/v1/audio/transcriptions | none                              | OpenAI    | multipart/form-data
      """)
  void aBodyUnderAnotherContentTypeIsRefusedBeforeTheLedgerAndTheProvider(
      String path, String contentType, String shape, String wanted) throws Exception {
    Brand brand = Brand.fresh("ctype");
    HttpRequest.Builder b =
        HttpRequest.newBuilder(java.net.URI.create(gw.base + path))
            .timeout(Duration.ofSeconds(20))
            .header("authorization", "Bearer " + TOKEN)
            .header("x-request-id", "ctype-" + brand.id())
            .POST(HttpRequest.BodyPublishers.ofString(validBody(path)));
    brand.headers(b);
    if (contentType != null) {
      b.header("content-type", contentType);
    }

    HttpResponse<String> r = gw.send(b.build());

    assertEquals(415, r.statusCode(), r.body());
    assertEquals("true", r.headers().firstValue("x-gateway-error").orElse(null));
    assertEquals("ctype-" + brand.id(), r.headers().firstValue("x-request-id").orElse(null));
    JsonNode body = JSON.readTree(r.body());
    JsonNode error = body.path("error");
    assertEquals("invalid_request_error", error.path("type").asText(), r.body());
    assertTrue(error.path("message").asText().contains("`content-type: " + wanted), r.body());
    if (shape.equals("Anthropic")) {
      assertEquals("error", body.path("type").asText(), r.body());
    } else {
      assertEquals("content-type", error.path("param").asText(), r.body());
    }
    assertTrue(gw.sim.received().isEmpty(), "reached the provider: " + gw.sim.received());
    JsonNode usage = gw.usage(brand.id());
    assertEquals(0, usage.path("openReservations").asInt(), usage.toString());
    for (JsonNode row : usage.path("caps")) {
      if (brand.id().equals(row.path("subject").asText())) {
        assertEquals(
            0,
            money(row, "spentUsd").add(money(row, "reservedUsd")).signum(),
            "nothing reserved: " + row);
      }
    }
    JsonNode line =
        gw.awaitAccessLine(l -> ("ctype-" + brand.id()).equals(l.path("request_id").asText()));
    assertEquals(415, line.path("status").asInt(), line.toString());
    assertEquals("unsupported_media_type", line.path("error").asText(), line.toString());
  }

  /** JSON as curl -d (a form type), fetch (text/plain) and clients that set nothing send it. */
  @ParameterizedTest(name = "content-type [{0}] is read as JSON")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      application/json
      application/json; charset=utf-8
      application/json;charset=UTF-8
      Application/JSON
      application/x-www-form-urlencoded
      text/plain;charset=UTF-8
      application/octet-stream
      """)
  void jsonUnderAnyParametersOrCaseOrARawClientsDefaultTypeIsRead(String contentType)
      throws Exception {
    HttpResponse<String> r =
        gw.send(
            gw.postJson("/anthropic/v1/messages", claudeBody(100), Brand.fresh("json"))
                .setHeader("content-type", contentType)
                .build());

    assertEquals(200, r.statusCode(), r.body());
    assertEquals(1, gw.sim.receivedCount());
  }

  @ParameterizedTest(name = "{0} comes before the content type: {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      a wrong token          | 401
      a missing x-spend-lane | 400
      """)
  void theTokenAndTheSpendHeadersAreCheckedFirst(String what, int status) throws Exception {
    HttpRequest.Builder b =
        gw.postJson(
                "/openai/v1/chat/completions",
                validBody("/openai/v1/chat/completions"),
                Brand.fresh("order"))
            .setHeader("content-type", "text/plain");
    if (status == 401) {
      b.setHeader("authorization", "Bearer not-the-token");
    } else {
      b.setHeader("x-spend-lane", "");
    }

    HttpResponse<String> r = gw.send(b.build());

    assertEquals(status, r.statusCode(), r.body());
    assertTrue(gw.sim.received().isEmpty());
  }

  // --- 402: a brand cap under a burst of parallel calls ----------------------------------------

  private static String claudeBody(int maxTokens) {
    return "{\"model\":\"claude-opus-5-5\",\"max_tokens\":"
        + maxTokens
        + ",\"messages\":[{\"role\":\"user\",\"content\":\"Summarise the quarter.\"}]}";
  }

  @Test
  void fiftyParallelCallsAgainstABrandCapThatFitsSevenWorstCasesLetExactlySevenThrough()
      throws Exception {
    String body = claudeBody(1000);
    BigDecimal worstCase =
        Costs.worstCase(Costs.CLAUDE_OPUS, body.getBytes(StandardCharsets.UTF_8).length, 1000);
    int fits = 7;
    // Seven worst cases and a bit, never an eighth.
    BigDecimal dailyCap =
        worstCase
            .multiply(BigDecimal.valueOf(fits))
            .add(worstCase.divide(BigDecimal.valueOf(2)).setScale(6, java.math.RoundingMode.DOWN));
    Brand brand = Brand.fresh("burst").withDaily(dailyCap.toPlainString());
    // Every answer takes a while, so no settlement frees headroom before all fifty have reserved.
    gw.sim.scriptForever(SimRoute.ANTHROPIC_MESSAGES, Fault.delayed(Duration.ofMillis(1500)));

    AtomicBoolean done = new AtomicBoolean();
    List<JsonNode> samples = new ArrayList<>();
    Thread watcher = new Thread(() -> sampleUsage(brand, done, samples));
    watcher.start();
    List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      calls.add(
          gw.http.sendAsync(
              gw.postJson("/anthropic/v1/messages", body, brand).build(),
              HttpResponse.BodyHandlers.ofString()));
    }
    CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).join();
    JsonNode settled = gw.awaitSettled(brand.id());
    done.set(true);
    watcher.join();

    List<HttpResponse<String>> answers = calls.stream().map(CompletableFuture::join).toList();
    assertEquals(
        fits, answers.stream().filter(r -> r.statusCode() == 200).count(), statuses(answers));
    for (HttpResponse<String> refused :
        answers.stream().filter(r -> r.statusCode() != 200).toList()) {
      assertEquals(402, refused.statusCode(), refused.body());
      assertEquals("true", refused.headers().firstValue("x-gateway-error").orElse(null));
      JsonNode error = JSON.readTree(refused.body()).get("error");
      assertEquals("budget_exceeded", error.get("type").asText());
      assertEquals("brand_daily", error.get("cap").asText());
      assertTrue(error.get("message").asText().contains("brand_daily"), error.toString());
    }
    assertEquals(
        fits,
        gw.sim.received(SimRoute.ANTHROPIC_MESSAGES).size(),
        "refused calls never reach the provider");
    assertTrue(
        samples.stream().filter(u -> u.toString().contains(brand.id())).count() > 3,
        "the cap was watched during the burst");
    for (JsonNode sample : samples) {
      if (!sample.toString().contains(brand.id())) {
        continue; // before the first reservation the brand has no row: nothing held
      }
      JsonNode daily = cap(sample, "brand_daily");
      BigDecimal held = money(daily, "spentUsd").add(money(daily, "reservedUsd"));
      assertTrue(held.compareTo(dailyCap) <= 0, "spent + reserved over the cap: " + daily);
    }
    BigDecimal expectedSpent =
        Costs.anthropic(Costs.CLAUDE_OPUS, USAGE).multiply(BigDecimal.valueOf(fits));
    assertTrue(
        Costs.same(expectedSpent, money(cap(settled, "brand_daily"), "spentUsd")),
        settled.toString());

    // The SDK surfaces the next refusal as Anthropic's 402, naming the cap.
    gw.sim.clearScripts();
    Brand spent = new Brand(brand.id(), "0.000001", brand.monthlyUsd());
    var e =
        assertThrows(
            com.anthropic.errors.PaymentRequiredException.class,
            () -> gw.anthropic().messages().create(claude(spent).build()));
    assertTrue(e.getMessage().contains("brand_daily"), e.getMessage());
  }

  private void sampleUsage(Brand brand, AtomicBoolean done, List<JsonNode> samples) {
    while (!done.get()) {
      try {
        JsonNode usage = gw.usage(brand.id());
        synchronized (samples) {
          samples.add(usage);
        }
        Thread.sleep(20); // time is the point: the sampling pace while the calls run
      } catch (Exception e) {
        return;
      }
    }
  }

  private static String statuses(List<HttpResponse<String>> answers) {
    return Arrays.toString(answers.stream().mapToInt(HttpResponse::statusCode).toArray());
  }

  // --- 404 and 413 ---------------------------------------------------------------------------

  static Stream<Arguments> unknownPaths() {
    return Stream.of(
        Arguments.of("/openai/v1/embeddings", "error.message"),
        Arguments.of("/anthropic/v1/complete", "error.message"),
        Arguments.of("/v1/models", "error.message"),
        Arguments.of("/anthropic/v1/messages/batches", "error.message"));
  }

  @ParameterizedTest(name = "{0} is a 404 made by the gateway")
  @MethodSource("unknownPaths")
  void anUnknownPathIsA404(String path, String ignored) throws Exception {
    HttpResponse<String> r = gw.send(gw.postJson(path, claudeBody(10), Brand.fresh("nf")).build());

    assertEquals(404, r.statusCode(), r.body());
    assertEquals("true", r.headers().firstValue("x-gateway-error").orElse(null));
    assertTrue(JSON.readTree(r.body()).path("error").path("message").isTextual(), r.body());
    assertTrue(gw.sim.received().isEmpty());
  }

  @ParameterizedTest(name = "a body one byte over 4 MiB sent {0} is a 413 in Anthropic's shape")
  @MethodSource("oversizedBodies")
  void aBodyOver4MiBIsA413(String how, Function<byte[], HttpRequest.BodyPublisher> publisher)
      throws Exception {
    byte[] body = new byte[4 * 1024 * 1024 + 1];
    Arrays.fill(body, (byte) ' ');
    byte[] start = claudeBody(10).getBytes(StandardCharsets.UTF_8);
    System.arraycopy(start, 0, body, 0, start.length);
    HttpRequest.Builder b =
        gw.postJson("/anthropic/v1/messages", "", Brand.fresh("big")).POST(publisher.apply(body));

    HttpResponse<String> r = gw.send(b.build());

    assertEquals(413, r.statusCode(), r.body());
    assertEquals("true", r.headers().firstValue("x-gateway-error").orElse(null));
    assertEquals(
        "request_too_large", JSON.readTree(r.body()).path("error").path("type").asText(), r.body());
    assertTrue(gw.sim.received().isEmpty());
  }

  static Stream<Arguments> oversizedBodies() {
    return Stream.of(
        Arguments.of(
            "with a content-length",
            (Function<byte[], HttpRequest.BodyPublisher>) HttpRequest.BodyPublishers::ofByteArray),
        Arguments.of(
            "chunked, without a length",
            (Function<byte[], HttpRequest.BodyPublisher>)
                bytes ->
                    HttpRequest.BodyPublishers.ofInputStream(
                        () -> new ByteArrayInputStream(bytes))));
  }
}
