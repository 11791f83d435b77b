package dev.spendgateway.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.core.JsonValue;
import com.anthropic.core.http.StreamResponse;
import com.anthropic.errors.AnthropicException;
import com.anthropic.errors.AnthropicIoException;
import com.anthropic.errors.AnthropicServiceException;
import com.anthropic.errors.BadRequestException;
import com.anthropic.errors.GatewayTimeoutException;
import com.anthropic.errors.InternalServerException;
import com.anthropic.errors.NotFoundException;
import com.anthropic.errors.PermissionDeniedException;
import com.anthropic.errors.RateLimitException;
import com.anthropic.errors.ServiceUnavailableException;
import com.anthropic.errors.UnauthorizedException;
import com.anthropic.errors.UnexpectedStatusCodeException;
import com.anthropic.helpers.MessageAccumulator;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.anthropic.models.messages.WebSearchTool20250305;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The simulator's Anthropic dialect, checked by the official Anthropic Java SDK. */
class AnthropicSdkTest extends SimulatorPerClass {
  private AnthropicClient client;

  @BeforeAll
  void startTheClient() {
    client =
        AnthropicOkHttpClient.builder()
            .baseUrl(sim.baseUrl())
            .apiKey("sk-ant-test")
            .maxRetries(0)
            .timeout(Duration.ofSeconds(10))
            .build();
  }

  @AfterAll
  void closeTheClient() {
    client.close();
  }

  @BeforeEach
  void reset() {
    sim.reset();
  }

  private static MessageCreateParams message() {
    return MessageCreateParams.builder()
        .model("claude-opus-5-5")
        .maxTokens(1024)
        .addUserMessage("Say hello")
        .build();
  }

  @Test
  void messageJsonCarriesTextModelAndUsage() {
    Message m = client.messages().create(message());

    assertEquals("claude-opus-5-5", m.model().asString());
    assertEquals(SimConfig.DEFAULT_REPLY, m.content().get(0).asText().text());
    assertEquals(25, m.usage().inputTokens());
    assertEquals(15, m.usage().outputTokens());
    assertEquals(0L, m.usage().cacheReadInputTokens().orElseThrow());
    assertEquals(0L, m.usage().cacheCreationInputTokens().orElseThrow());
    assertTrue(m.usage().serverToolUse().isEmpty());
    m.validate();
  }

  @Test
  void scriptedUsageIncludesCacheAndWebSearchCounts() {
    sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.usage(new Usage(10, 300, 2000, 500, 3)));
    MessageCreateParams withSearch =
        message().toBuilder().addTool(WebSearchTool20250305.builder().maxUses(5).build()).build();

    Message m = client.messages().create(withSearch);

    assertEquals(10, m.usage().inputTokens());
    assertEquals(300, m.usage().outputTokens());
    assertEquals(2000L, m.usage().cacheReadInputTokens().orElseThrow());
    assertEquals(500L, m.usage().cacheCreationInputTokens().orElseThrow());
    assertEquals(3, m.usage().serverToolUse().orElseThrow().webSearchRequests());
  }

  @Test
  void streamFollowsTheEventSequenceAndAccumulatesUsage() {
    sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.usage(new Usage(40, 9, 5, 6, 0)));
    MessageAccumulator acc = MessageAccumulator.create();
    List<String> types = new ArrayList<>();
    try (StreamResponse<RawMessageStreamEvent> stream =
        client.messages().createStreaming(message())) {
      stream.stream()
          .forEach(
              e -> {
                acc.accumulate(e);
                types.add(type(e));
              });
    }

    assertEquals("message_start", types.get(0));
    assertEquals("content_block_start", types.get(1));
    assertEquals("content_block_delta", types.get(2));
    assertEquals(
        List.of("content_block_stop", "message_delta", "message_stop"),
        types.subList(types.size() - 3, types.size()));
    Message m = acc.message();
    assertEquals(SimConfig.DEFAULT_REPLY, m.content().get(0).asText().text());
    assertEquals(40, m.usage().inputTokens());
    assertEquals(9, m.usage().outputTokens());
    assertEquals(5L, m.usage().cacheReadInputTokens().orElseThrow());
    assertEquals(6L, m.usage().cacheCreationInputTokens().orElseThrow());
  }

  /** The SDK drops {@code ping}; the rest map one to one onto the wire events. */
  private static String type(RawMessageStreamEvent e) {
    if (e.isMessageStart()) return "message_start";
    if (e.isContentBlockStart()) return "content_block_start";
    if (e.isContentBlockDelta()) return "content_block_delta";
    if (e.isContentBlockStop()) return "content_block_stop";
    if (e.isMessageDelta()) return "message_delta";
    if (e.isMessageStop()) return "message_stop";
    return "other";
  }

  // ---------------- faults ----------------

  static Stream<Arguments> statusFaults() {
    return Stream.of(
        Arguments.of(400, BadRequestException.class, "invalid_request_error"),
        Arguments.of(401, UnauthorizedException.class, "authentication_error"),
        Arguments.of(403, PermissionDeniedException.class, "permission_error"),
        Arguments.of(404, NotFoundException.class, "not_found_error"),
        Arguments.of(410, UnexpectedStatusCodeException.class, "invalid_request_error"),
        Arguments.of(429, RateLimitException.class, "rate_limit_error"),
        Arguments.of(500, InternalServerException.class, "api_error"),
        Arguments.of(502, InternalServerException.class, "api_error"),
        Arguments.of(503, ServiceUnavailableException.class, "api_error"),
        Arguments.of(504, GatewayTimeoutException.class, "timeout_error"),
        Arguments.of(529, InternalServerException.class, "overloaded_error"));
  }

  @ParameterizedTest(name = "status {0} surfaces as {1}")
  @MethodSource("statusFaults")
  void statusFaultsSurfaceAsTheMatchingSdkError(
      int status, Class<? extends AnthropicServiceException> expected, String errorType) {
    sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.status(status));

    AnthropicServiceException e =
        assertThrows(AnthropicServiceException.class, () -> client.messages().create(message()));

    assertInstanceOf(expected, e);
    assertEquals(status, e.statusCode());
    assertEquals(errorType, field(field(e.body(), "error"), "type").asStringOrThrow());
    assertTrue(e.headers().values("request-id").get(0).startsWith("req_"));
  }

  @SuppressWarnings("unchecked")
  private static JsonValue field(JsonValue object, String name) {
    Map<String, JsonValue> map = (Map<String, JsonValue>) object.asObject().orElseThrow();
    return map.get(name);
  }

  @Test
  void rateLimitCarriesRetryAfter() {
    sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.rateLimited(7));

    RateLimitException e =
        assertThrows(RateLimitException.class, () -> client.messages().create(message()));

    assertEquals(List.of("7"), e.headers().values("retry-after"));
  }

  @Test
  void creditBalanceTooLowIsABadRequestWithThatMessage() {
    sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.creditBalanceTooLow());

    BadRequestException e =
        assertThrows(BadRequestException.class, () -> client.messages().create(message()));

    assertTrue(
        e.getMessage().contains("Your credit balance is too low to access the Anthropic API"),
        e.getMessage());
  }

  @Test
  void stickyFaultAppliesForItsCountThenDefaultsReturn() {
    sim.scriptTimes(SimRoute.ANTHROPIC_MESSAGES, Fault.overloaded(), 2);

    assertEquals(
        529,
        assertThrows(InternalServerException.class, () -> client.messages().create(message()))
            .statusCode());
    assertEquals(
        529,
        assertThrows(InternalServerException.class, () -> client.messages().create(message()))
            .statusCode());
    assertEquals(25, client.messages().create(message()).usage().inputTokens());
  }

  @Test
  void customStatusHeadersAndBodyPassThrough() {
    sim.script(
        SimRoute.ANTHROPIC_MESSAGES,
        Fault.status(500, Map.of("request-id", "req_fixed", "x-extra", "1"), "upstream exploded"));

    InternalServerException e =
        assertThrows(InternalServerException.class, () -> client.messages().create(message()));

    assertEquals(List.of("req_fixed"), e.headers().values("request-id"));
    assertEquals(List.of("1"), e.headers().values("x-extra"));
  }

  @Test
  void connectionResetSurfacesAsIoError() {
    // Two resets: OkHttp retries a failed pooled connection once on its own.
    sim.scriptTimes(SimRoute.ANTHROPIC_MESSAGES, Fault.connectionReset(), 2);

    assertThrows(AnthropicIoException.class, () -> client.messages().create(message()));
    sim.clearScripts();
    assertEquals(25, client.messages().create(message()).usage().inputTokens());
  }

  @Test
  void aStreamWithoutFinalUsageStillReadsToMessageStop() {
    sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.usageMissing());
    List<RawMessageStreamEvent> got = new ArrayList<>();
    try (StreamResponse<RawMessageStreamEvent> stream =
        client.messages().createStreaming(message())) {
      stream.stream().forEach(got::add);
    }
    assertTrue(got.get(got.size() - 1).isMessageStop());
    assertTrue(
        got.stream()
            .filter(RawMessageStreamEvent::isMessageDelta)
            .allMatch(e -> e.asMessageDelta()._usage().isMissing()),
        "message_delta has no usage");
  }

  @Test
  void streamCutStopsBeforeMessageStop() {
    sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.streamCut(4));
    List<RawMessageStreamEvent> got = new ArrayList<>();

    assertThrows(
        AnthropicException.class,
        () -> {
          try (StreamResponse<RawMessageStreamEvent> stream =
              client.messages().createStreaming(message())) {
            stream.stream().forEach(got::add);
          }
        });
    // message_start, content_block_start, (ping dropped by the SDK), one delta.
    assertEquals(3, got.size());
    assertTrue(got.stream().noneMatch(RawMessageStreamEvent::isMessageStop));
  }

  @Test
  void malformedSseFailsTheStream() {
    sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.malformedSse(3));

    assertThrows(
        AnthropicException.class,
        () -> {
          try (StreamResponse<RawMessageStreamEvent> stream =
              client.messages().createStreaming(message())) {
            stream.stream().forEach(e -> {});
          }
        });
  }

  @Test
  void inStreamOverloadedErrorSurfacesAsAServiceError() {
    sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.streamError(3, 529));
    List<RawMessageStreamEvent> got = new ArrayList<>();

    AnthropicException e =
        assertThrows(
            AnthropicException.class,
            () -> {
              try (StreamResponse<RawMessageStreamEvent> stream =
                  client.messages().createStreaming(message())) {
                stream.stream().forEach(got::add);
              }
            });
    assertTrue(e.getMessage().contains("overloaded_error"), e.getMessage());
    assertEquals(2, got.size());
  }

  @Test
  void invalidJsonWith200FailsToParse() {
    sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.invalidJson());

    assertThrows(AnthropicException.class, () -> client.messages().create(message()));
  }

  @Test
  void latencyDelaysTheAnswer() {
    sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.delayed(Duration.ofMillis(300)));
    long start = System.nanoTime();
    client.messages().create(message());
    assertTrue((System.nanoTime() - start) / 1_000_000 >= 280);
  }

  @Test
  void recordsWhatReachedTheProvider() {
    client.messages().create(message());

    ReceivedCall call = sim.lastReceived(SimRoute.ANTHROPIC_MESSAGES).orElseThrow();
    // SDK 3.14 sends its key as a bearer token; older ones used x-api-key. Either reaches us.
    String key =
        call.header("X-Api-Key")
            .orElseGet(
                () -> call.header("authorization").orElseThrow().substring("Bearer ".length()));
    assertEquals("sk-ant-test", key);
    assertTrue(call.header("anthropic-version").isPresent());
    assertEquals("claude-opus-5-5", call.body().orElseThrow().get("model").asText());
    assertEquals(1024, call.body().orElseThrow().get("max_tokens").asInt());
    assertEquals("normal", call.fault());
  }
}
