package dev.spendgateway.edge.router;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.HttpResponseFor;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import dev.spendgateway.edge.testkit.GatewayPerClass;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimConfig;
import dev.spendgateway.sim.SimRoute;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The official OpenAI Java SDK, unchanged but for its base URL, gets answers from either provider
 * through the router — JSON and streaming — and can tell them apart only by the headers.
 */
class RouterSdkTest extends GatewayPerClass {
  private OpenAIClient client;

  @Override
  protected TestGateway startGateway() throws Exception {
    return RouterGateway.start("router/router-test.conf", "RouterSdkTest");
  }

  @BeforeAll
  void startTheClient() {
    OpenAIOkHttpClient.Builder b =
        OpenAIOkHttpClient.builder()
            .baseUrl(gw.base + "/v1")
            .apiKey(RouterGateway.TOKEN)
            .maxRetries(0)
            .timeout(Duration.ofSeconds(30));
    RouterGateway.spendHeaders("unused")
        .forEach(
            (k, v) -> {
              if (!k.equals("authorization") && !k.equals("x-request-id")) {
                b.putHeader(k, v);
              }
            });
    client = b.build();
  }

  @AfterAll
  void closeTheClient() {
    client.close();
  }

  private static ChatCompletionCreateParams params() {
    return ChatCompletionCreateParams.builder()
        .model("fast-summary")
        .addSystemMessage("Be brief.")
        .addUserMessage("Say hello")
        .maxCompletionTokens(64L)
        .build();
  }

  /** What a caller can see in a JSON answer, apart from ids and timestamps. */
  private record JsonView(String model, String role, String text, String finish, boolean usage) {
    static JsonView of(ChatCompletion c) {
      var choice = c.choices().get(0);
      return new JsonView(
          c.model(),
          choice.message()._role().toString(),
          choice.message().content().orElse(""),
          choice.finishReason().toString(),
          c.usage()
              .map(
                  u ->
                      u.totalTokens() == u.promptTokens() + u.completionTokens()
                          && u.totalTokens() > 0)
              .orElse(false));
    }
  }

  private HttpResponseFor<ChatCompletion> json() {
    return client.chat().completions().withRawResponse().create(params());
  }

  @Test
  void jsonAnswersFromEitherProviderLookTheSame() {
    HttpResponseFor<ChatCompletion> fromOpenAi = json();
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.status(503));
    HttpResponseFor<ChatCompletion> fromClaude = json();

    assertEquals(List.of("openai"), fromOpenAi.headers().values("x-gateway-provider"));
    assertEquals(List.of("false"), fromOpenAi.headers().values("x-gateway-failover"));
    assertEquals(List.of("anthropic"), fromClaude.headers().values("x-gateway-provider"));
    assertEquals(List.of("true"), fromClaude.headers().values("x-gateway-failover"));

    JsonView openAi = JsonView.of(fromOpenAi.parse());
    JsonView claude = JsonView.of(fromClaude.parse());
    assertEquals(
        new JsonView("fast-summary", "assistant", SimConfig.DEFAULT_REPLY, "stop", true), openAi);
    assertEquals(openAi, claude);
    assertEquals(1, gw.sim.received(SimRoute.ANTHROPIC_MESSAGES).size());
  }

  /**
   * What a caller can see in a stream: every chunk's model, the text, the finish reason, the usage
   * chunk.
   */
  private record StreamView(
      List<String> models, String firstRole, String text, String finish, boolean usageChunkLast) {}

  private record Streamed(List<String> provider, List<String> failover, StreamView view) {}

  private Streamed stream(boolean askForUsage) {
    List<ChatCompletionChunk> chunks = new ArrayList<>();
    ChatCompletionCreateParams params =
        askForUsage
            ? params().toBuilder()
                .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build())
                .build()
            : params();
    HttpResponseFor<StreamResponse<ChatCompletionChunk>> raw =
        client.chat().completions().withRawResponse().createStreaming(params);
    try (StreamResponse<ChatCompletionChunk> s = raw.parse()) {
      s.stream().forEach(chunks::add);
    }
    StringBuilder text = new StringBuilder();
    String finish = null;
    for (ChatCompletionChunk c : chunks) {
      for (var choice : c.choices()) {
        choice.delta().content().ifPresent(text::append);
        if (choice.finishReason().isPresent()) {
          finish = choice.finishReason().get().toString();
        }
      }
    }
    ChatCompletionChunk last = chunks.get(chunks.size() - 1);
    StreamView view =
        new StreamView(
            chunks.stream().map(ChatCompletionChunk::model).distinct().toList(),
            chunks.get(0).choices().get(0).delta().role().map(Object::toString).orElse(null),
            text.toString(),
            finish,
            last.choices().isEmpty() && last.usage().map(u -> u.totalTokens() > 0).orElse(false));
    return new Streamed(
        raw.headers().values("x-gateway-provider"),
        raw.headers().values("x-gateway-failover"),
        view);
  }

  @ParameterizedTest(name = "caller asked for usage: {0}")
  @ValueSource(booleans = {true, false})
  void streamsFromEitherProviderLookTheSame(boolean askForUsage) {
    Streamed fromOpenAi = stream(askForUsage);
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.status(503));
    Streamed fromClaude = stream(askForUsage);

    assertEquals(List.of("openai"), fromOpenAi.provider());
    assertEquals(List.of("false"), fromOpenAi.failover());
    assertEquals(List.of("anthropic"), fromClaude.provider());
    assertEquals(List.of("true"), fromClaude.failover());
    // The usage-only chunk comes last for a caller that asked for it, and never otherwise.
    assertEquals(
        new StreamView(
            List.of("fast-summary"), "assistant", SimConfig.DEFAULT_REPLY, "stop", askForUsage),
        fromOpenAi.view());
    assertEquals(fromOpenAi.view(), fromClaude.view());
  }

  @Test
  void gatewayErrorsSurfaceAsTheSdksOwnExceptions() {
    BadRequestException e =
        assertThrows(
            BadRequestException.class,
            () ->
                client
                    .chat()
                    .completions()
                    .create(params().toBuilder().model("no-such-profile").build()));
    assertTrue(e.getMessage().contains("fast-summary"), e.getMessage());
    assertEquals(0, gw.sim.received().size());
  }
}
