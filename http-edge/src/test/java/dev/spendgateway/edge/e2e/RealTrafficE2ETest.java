package dev.spendgateway.edge.e2e;

import static dev.spendgateway.edge.e2e.E2eGateway.USAGE;
import static dev.spendgateway.edge.testkit.TestGateway.cap;
import static dev.spendgateway.edge.testkit.TestGateway.money;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.GatewayPerClass;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimConfig;
import dev.spendgateway.sim.SimRoute;
import java.math.BigDecimal;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What real provider traffic does to a caller, end to end over real HTTP: the usage-only chunk the
 * gateway asks OpenAI for reaches only callers that asked for it themselves (the usual {@code
 * chunk.choices[0]} loop breaks on it), an answer whose final usage never comes keeps its worst
 * case, and a long silence inside a stream does not cut it.
 */
class RealTrafficE2ETest extends GatewayPerClass {
  private static final String CHAT = "/openai/v1/chat/completions";
  private static final String MESSAGES = "/anthropic/v1/messages";
  private static final String ROUTER = "/v1/chat/completions";
  private static final String INCLUDE_USAGE = ",\"stream_options\":{\"include_usage\":true}";

  @Override
  protected TestGateway startGateway() throws Exception {
    return E2eGateway.start("real-traffic");
  }

  /**
   * A streamed answer as the caller read it: status, the provider header and every data payload.
   */
  private record Sse(int status, String provider, List<String> data) {
    List<JsonNode> chunks() {
      List<JsonNode> out = new ArrayList<>();
      for (String d : data.subList(0, data.size() - 1)) {
        out.add(read(d));
      }
      return out;
    }

    boolean hasUsageOnlyChunk() {
      return chunks().stream()
          .anyMatch(c -> c.path("choices").isArray() && c.path("choices").isEmpty());
    }

    /** What {@code for chunk in stream: chunk.choices[0].delta.content} would print. */
    String textThroughChoicesZero() {
      StringBuilder text = new StringBuilder();
      for (JsonNode c : chunks()) {
        assertTrue(c.path("choices").has(0), "a chunk without choices[0]: " + c);
        text.append(c.path("choices").get(0).path("delta").path("content").asText(""));
      }
      return text.toString();
    }
  }

  private static JsonNode read(String json) {
    try {
      return TestGateway.JSON.readTree(json);
    } catch (Exception e) {
      throw new AssertionError("not JSON: " + json, e);
    }
  }

  private Sse stream(String path, String body, Brand brand, String requestId) throws Exception {
    HttpResponse<String> r =
        gw.send(gw.postJson(path, body, brand).header("x-request-id", requestId).build());
    List<String> data = new ArrayList<>();
    for (String line : r.body().split("\n")) {
      if (line.startsWith("data: ")) {
        data.add(line.substring(6));
      }
    }
    return new Sse(r.statusCode(), r.headers().firstValue("x-gateway-provider").orElse(null), data);
  }

  private static String chatBody(String model, String extra) {
    return "{\"model\":\""
        + model
        + "\",\"max_completion_tokens\":900,\"stream\":true"
        + extra
        + ",\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story.\"}]}";
  }

  private static String messagesBody() {
    return "{\"model\":\"claude-opus-5-5\",\"max_tokens\":1000,\"stream\":true,"
        + "\"messages\":[{\"role\":\"user\",\"content\":\"Tell me a story.\"}]}";
  }

  private static String requestId(String prefix) {
    return prefix + "-" + System.nanoTime();
  }

  private void assertSpent(Brand brand, BigDecimal expectedUsd) throws Exception {
    JsonNode usage = gw.awaitSettled(brand.id());
    BigDecimal spent = money(cap(usage, "brand_daily"), "spentUsd");
    assertTrue(
        Costs.same(expectedUsd, spent),
        "spent " + spent + ", expected " + expectedUsd + ": " + usage);
  }

  // --- the usage-only chunk, pass-through -----------------------------------------------------

  @Test
  void aPassThroughChatStreamWithoutIncludeUsageGetsNoUsageChunkAndIsSettledExactly()
      throws Exception {
    Brand brand = Brand.fresh("nousage");
    Sse sse = stream(CHAT, chatBody("gpt-6.1-sol", ""), brand, requestId("nousage"));

    assertEquals(200, sse.status());
    assertFalse(
        sse.hasUsageOnlyChunk(), "a caller that did not ask got the usage chunk: " + sse.data());
    assertEquals(SimConfig.DEFAULT_REPLY, sse.textThroughChoicesZero());
    assertEquals("[DONE]", sse.data().get(sse.data().size() - 1));
    JsonNode sent = gw.sim.lastReceived(SimRoute.OPENAI_CHAT).orElseThrow().body().orElseThrow();
    assertTrue(
        sent.path("stream_options").path("include_usage").asBoolean(),
        "the gateway still asked: " + sent);
    assertSpent(brand, Costs.openAi(Costs.GPT_SOL, USAGE));
  }

  @Test
  void aPassThroughChatStreamWithIncludeUsageGetsTheUsageChunk() throws Exception {
    Brand brand = Brand.fresh("usage");
    Sse sse = stream(CHAT, chatBody("gpt-6.1-sol", INCLUDE_USAGE), brand, requestId("usage"));

    JsonNode last = sse.chunks().get(sse.chunks().size() - 1);
    assertEquals(0, last.path("choices").size(), last.toString());
    assertEquals(USAGE.outputTokens(), last.path("usage").path("completion_tokens").asLong());
    assertEquals("[DONE]", sse.data().get(sse.data().size() - 1));
    assertSpent(brand, Costs.openAi(Costs.GPT_SOL, USAGE));
  }

  // --- the usage-only chunk, failover router ----------------------------------------------------

  @ParameterizedTest(name = "asked for usage: {0}")
  @ValueSource(booleans = {false, true})
  void theRouterForwardsOpenAisUsageChunkOnlyWhenAsked(boolean asked) throws Exception {
    Brand brand = Brand.fresh("routed");
    Sse sse =
        stream(
            ROUTER, chatBody("long-draft", asked ? INCLUDE_USAGE : ""), brand, requestId("routed"));

    assertEquals("openai", sse.provider());
    assertEquals(asked, sse.hasUsageOnlyChunk(), sse.data().toString());
    assertEquals("[DONE]", sse.data().get(sse.data().size() - 1));
    if (!asked) {
      assertEquals(SimConfig.DEFAULT_REPLY, sse.textThroughChoicesZero());
    }
    assertSpent(brand, Costs.openAi(Costs.GPT_SOL, USAGE));
  }

  @ParameterizedTest(name = "asked for usage: {0}")
  @ValueSource(booleans = {false, true})
  void aStreamFailedOverToClaudeCarriesAUsageChunkOnlyWhenAsked(boolean asked) throws Exception {
    Brand brand = Brand.fresh("claude");
    gw.sim.scriptForever(SimRoute.OPENAI_CHAT, Fault.status(401));
    Sse sse =
        stream(
            ROUTER, chatBody("long-draft", asked ? INCLUDE_USAGE : ""), brand, requestId("claude"));

    assertEquals("anthropic", sse.provider());
    assertEquals(asked, sse.hasUsageOnlyChunk(), sse.data().toString());
    assertEquals("[DONE]", sse.data().get(sse.data().size() - 1));
    if (asked) {
      JsonNode last = sse.chunks().get(sse.chunks().size() - 1);
      assertEquals(USAGE.inputTokens(), last.path("usage").path("prompt_tokens").asLong());
    } else {
      assertEquals(SimConfig.DEFAULT_REPLY, sse.textThroughChoicesZero());
    }
    assertSpent(brand, Costs.anthropic(Costs.CLAUDE_OPUS, USAGE));
  }

  // --- an answer whose final usage never comes ------------------------------------------------

  @Test
  void anAnthropicStreamWhoseMessageDeltaHasNoUsageKeepsTheWorstCase() throws Exception {
    Brand brand = Brand.fresh("nodelta");
    String id = requestId("nodelta");
    gw.sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.usageMissing());

    Sse sse = stream(MESSAGES, messagesBody(), brand, id);

    assertEquals(200, sse.status());
    assertEquals(
        "message_stop",
        read(sse.data().get(sse.data().size() - 1)).path("type").asText(),
        "delivered whole");
    BigDecimal worstCase =
        Costs.worstCase(
            Costs.CLAUDE_OPUS, messagesBody().getBytes(StandardCharsets.UTF_8).length, 1000);
    assertSpent(brand, worstCase);
    JsonNode line = gw.awaitAccessLine(l -> id.equals(l.path("request_id").asText()));
    assertTrue(line.path("error").asText().startsWith("usage_missing"), line.toString());
  }

  @Test
  void aRoutedClaudeStreamWithoutFinalUsageKeepsTheWorstCaseLoggedAsUsageMissing()
      throws Exception {
    Brand brand = Brand.fresh("routed-nodelta");
    String id = requestId("routed-nodelta");
    gw.sim.scriptForever(SimRoute.OPENAI_CHAT, Fault.status(401));
    gw.sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.usageMissing());

    Sse sse = stream(ROUTER, chatBody("long-draft", INCLUDE_USAGE), brand, id);

    assertEquals("anthropic", sse.provider());
    assertEquals("[DONE]", sse.data().get(sse.data().size() - 1));
    assertFalse(sse.hasUsageOnlyChunk(), "no usage is invented: " + sse.data());
    // The OpenAI attempt's line comes first; the Anthropic one once its stream has been settled.
    JsonNode line =
        gw.awaitAccessLine(
            l ->
                id.equals(l.path("request_id").asText())
                    && "anthropic".equals(l.path("provider").asText()));
    assertTrue(line.path("error").asText().startsWith("usage_missing"), line.toString());
    assertEquals(
        line.path("reserved_usd").asText(), line.path("settled_usd").asText(), line.toString());
  }

  // --- a long silence inside a stream -----------------------------------------------------------

  @Test
  void aPauseInsideAStreamShorterThanEveryTimeoutCompletesWhole() throws Exception {
    Brand brand = Brand.fresh("pause");
    // After message_start, content_block_start, ping and the first text delta.
    gw.sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.streamPause(4, Duration.ofMillis(1500)));

    long start = System.nanoTime();
    Sse sse = stream(MESSAGES, messagesBody(), brand, requestId("pause"));
    long tookMs = (System.nanoTime() - start) / 1_000_000;

    assertEquals(200, sse.status());
    assertTrue(tookMs >= 1400, "the pause happened: " + tookMs + " ms");
    StringBuilder text = new StringBuilder();
    for (String d : sse.data()) {
      text.append(read(d).path("delta").path("text").asText(""));
    }
    assertEquals(SimConfig.DEFAULT_REPLY, text.toString());
    assertEquals("message_stop", read(sse.data().get(sse.data().size() - 1)).path("type").asText());
    assertSpent(brand, Costs.anthropic(Costs.CLAUDE_OPUS, USAGE));
  }

  @Test
  void aPauseInsideARoutedStreamCompletesWhole() throws Exception {
    Brand brand = Brand.fresh("routed-pause");
    // The role chunk and the first word, then silence.
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.streamPause(2, Duration.ofMillis(1500)));

    Sse sse = stream(ROUTER, chatBody("long-draft", ""), brand, requestId("routed-pause"));

    assertEquals("openai", sse.provider());
    assertEquals(SimConfig.DEFAULT_REPLY, sse.textThroughChoicesZero());
    assertEquals("[DONE]", sse.data().get(sse.data().size() - 1));
    assertEquals(1, gw.sim.received(SimRoute.OPENAI_CHAT).size(), "not retried");
    assertSpent(brand, Costs.openAi(Costs.GPT_SOL, USAGE));
  }
}
