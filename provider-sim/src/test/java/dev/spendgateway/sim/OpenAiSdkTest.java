package dev.spendgateway.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.errors.InternalServerException;
import com.openai.errors.OpenAIException;
import com.openai.errors.OpenAIIoException;
import com.openai.errors.OpenAIServiceException;
import com.openai.errors.RateLimitException;
import com.openai.errors.UnauthorizedException;
import com.openai.errors.UnexpectedStatusCodeException;
import com.openai.models.audio.transcriptions.Transcription;
import com.openai.models.audio.transcriptions.TranscriptionCreateParams;
import com.openai.models.audio.transcriptions.TranscriptionStreamEvent;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.completions.CompletionUsage;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseOutputItem;
import com.openai.models.responses.ResponseStreamEvent;
import com.openai.models.responses.WebSearchTool;
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

/** The simulator's OpenAI dialect, checked by the official OpenAI Java SDK. */
class OpenAiSdkTest extends SimulatorPerClass {
  private OpenAIClient client;

  @BeforeAll
  void startTheClient() {
    client =
        OpenAIOkHttpClient.builder()
            .baseUrl(sim.openAiBaseUrl())
            .apiKey("sk-test")
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

  private static ChatCompletionCreateParams chat() {
    return ChatCompletionCreateParams.builder()
        .model("gpt-6.1-sol")
        .addUserMessage("Say hello")
        .build();
  }

  private static ChatCompletionCreateParams streamingChat() {
    return chat().toBuilder()
        .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build())
        .build();
  }

  // ---------------- chat completions ----------------

  @Test
  void chatCompletionJsonCarriesTextModelAndUsage() {
    ChatCompletion completion = client.chat().completions().create(chat());

    assertEquals("gpt-6.1-sol", completion.model());
    assertEquals(
        SimConfig.DEFAULT_REPLY, completion.choices().get(0).message().content().orElseThrow());
    assertEquals(
        ChatCompletion.Choice.FinishReason.STOP, completion.choices().get(0).finishReason());
    CompletionUsage usage = completion.usage().orElseThrow();
    assertEquals(25, usage.promptTokens());
    assertEquals(15, usage.completionTokens());
    assertEquals(40, usage.totalTokens());
    completion.validate();
  }

  @Test
  void scriptedUsageCountsCachedTokensInsidePromptTokens() {
    sim.script(SimRoute.OPENAI_CHAT, Fault.usage(new Usage(100, 7, 40, 0, 0)));

    CompletionUsage usage = client.chat().completions().create(chat()).usage().orElseThrow();

    assertEquals(140, usage.promptTokens());
    assertEquals(40, usage.promptTokensDetails().orElseThrow().cachedTokens().orElseThrow());
    assertEquals(7, usage.completionTokens());
    assertEquals(147, usage.totalTokens());
    // The script is consumed: the next call is back to the defaults.
    assertEquals(
        25, client.chat().completions().create(chat()).usage().orElseThrow().promptTokens());
  }

  @Test
  void chatStreamSendsDeltasThenAFinalUsageChunk() {
    List<ChatCompletionChunk> chunks = new ArrayList<>();
    try (StreamResponse<ChatCompletionChunk> stream =
        client.chat().completions().createStreaming(streamingChat())) {
      stream.stream().forEach(chunks::add);
    }

    StringBuilder text = new StringBuilder();
    chunks.forEach(c -> c.choices().forEach(ch -> ch.delta().content().ifPresent(text::append)));
    assertEquals(SimConfig.DEFAULT_REPLY, text.toString());
    ChatCompletionChunk last = chunks.get(chunks.size() - 1);
    assertTrue(last.choices().isEmpty(), "usage chunk has empty choices");
    assertEquals(25, last.usage().orElseThrow().promptTokens());
    assertEquals(15, last.usage().orElseThrow().completionTokens());
    assertTrue(chunks.subList(0, chunks.size() - 1).stream().allMatch(c -> c.usage().isEmpty()));
  }

  @Test
  void chatStreamWithoutIncludeUsageHasNoUsageChunk() {
    List<ChatCompletionChunk> chunks = new ArrayList<>();
    try (StreamResponse<ChatCompletionChunk> stream =
        client.chat().completions().createStreaming(chat())) {
      stream.stream().forEach(chunks::add);
    }
    assertFalse(chunks.isEmpty());
    assertTrue(chunks.stream().allMatch(c -> c.usage().isEmpty()));
    assertFalse(chunks.get(chunks.size() - 1).choices().isEmpty());
  }

  // ---------------- responses (web search) ----------------

  private static ResponseCreateParams webSearch() {
    return ResponseCreateParams.builder()
        .model("gpt-6.1-sol")
        .input("latest pekko release")
        .addTool(WebSearchTool.builder().type(WebSearchTool.Type.WEB_SEARCH).build())
        .store(false)
        .build();
  }

  @Test
  void responsesJsonHasAWebSearchCallAndAMessage() {
    sim.script(SimRoute.OPENAI_RESPONSES, Fault.usage(new Usage(300, 120, 0, 0, 2)));

    Response response = client.responses().create(webSearch());

    List<ResponseOutputItem> output = response.output();
    assertEquals(3, output.size());
    assertTrue(output.get(0).isWebSearchCall());
    assertTrue(output.get(1).isWebSearchCall());
    assertTrue(output.get(2).isMessage());
    assertEquals(
        SimConfig.DEFAULT_REPLY, output.get(2).asMessage().content().get(0).asOutputText().text());
    assertEquals(300, response.usage().orElseThrow().inputTokens());
    assertEquals(120, response.usage().orElseThrow().outputTokens());
    assertEquals(420, response.usage().orElseThrow().totalTokens());
    response.validate();
  }

  @Test
  void responsesStreamEndsWithCompletedResponseCarryingUsage() {
    List<ResponseStreamEvent> events = new ArrayList<>();
    try (StreamResponse<ResponseStreamEvent> stream =
        client.responses().createStreaming(webSearch())) {
      stream.stream().forEach(events::add);
    }

    assertTrue(events.get(0).isCreated());
    assertTrue(events.stream().anyMatch(ResponseStreamEvent::isWebSearchCallSearching));
    StringBuilder text = new StringBuilder();
    events.stream()
        .filter(ResponseStreamEvent::isOutputTextDelta)
        .forEach(e -> text.append(e.asOutputTextDelta().delta()));
    assertEquals(SimConfig.DEFAULT_REPLY, text.toString());
    ResponseStreamEvent last = events.get(events.size() - 1);
    assertTrue(last.isCompleted());
    Response done = last.asCompleted().response();
    assertEquals(25, done.usage().orElseThrow().inputTokens());
    assertEquals(15, done.usage().orElseThrow().outputTokens());
    assertTrue(done.output().get(0).isWebSearchCall());
  }

  // ---------------- transcriptions ----------------

  private static TranscriptionCreateParams transcription() {
    return TranscriptionCreateParams.builder()
        .file(new byte[3000])
        .model("gpt-4o-transcribe")
        .language("en")
        .build();
  }

  @Test
  void transcriptionReturnsTextAndRecordsFormFields() {
    Transcription t = client.audio().transcriptions().create(transcription()).asTranscription();

    assertEquals(SimConfig.DEFAULT_REPLY, t.text());
    // Per-minute billing shape: the configured input tokens read as seconds of audio.
    assertEquals(25.0, t.usage().orElseThrow().asDuration().seconds());
    ReceivedCall call = sim.lastReceived(SimRoute.OPENAI_TRANSCRIPTIONS).orElseThrow();
    assertTrue(
        call.formFields().containsAll(List.of("file", "model", "language")),
        call.formFields().toString());
    assertEquals(3000L, call.fileSizes().get("file"));
    assertEquals("gpt-4o-transcribe", call.formValues().get("model"));
    assertTrue(call.body().isEmpty());
  }

  @Test
  void transcriptionStreamEndsWithDoneEvent() {
    List<TranscriptionStreamEvent> events = new ArrayList<>();
    try (StreamResponse<TranscriptionStreamEvent> stream =
        client.audio().transcriptions().createStreaming(transcription())) {
      stream.stream().forEach(events::add);
    }
    StringBuilder text = new StringBuilder();
    events.stream()
        .filter(TranscriptionStreamEvent::isTranscriptTextDelta)
        .forEach(e -> text.append(e.asTranscriptTextDelta().delta()));
    assertEquals(SimConfig.DEFAULT_REPLY, text.toString());
    assertTrue(events.get(events.size() - 1).isTranscriptTextDone());
    assertEquals(
        "true",
        sim.lastReceived(SimRoute.OPENAI_TRANSCRIPTIONS).orElseThrow().formValues().get("stream"));
  }

  // ---------------- faults ----------------

  static Stream<Arguments> statusFaults() {
    return Stream.of(
        Arguments.of(400, BadRequestException.class),
        Arguments.of(401, UnauthorizedException.class),
        Arguments.of(410, UnexpectedStatusCodeException.class),
        Arguments.of(429, RateLimitException.class),
        Arguments.of(500, InternalServerException.class),
        Arguments.of(502, InternalServerException.class),
        Arguments.of(503, InternalServerException.class),
        Arguments.of(504, InternalServerException.class));
  }

  @ParameterizedTest(name = "status {0} surfaces as {1}")
  @MethodSource("statusFaults")
  void statusFaultsSurfaceAsTheMatchingSdkError(
      int status, Class<? extends OpenAIServiceException> expected) {
    sim.script(SimRoute.OPENAI_CHAT, Fault.status(status));

    OpenAIServiceException e =
        assertThrows(
            OpenAIServiceException.class, () -> client.chat().completions().create(chat()));

    assertInstanceOf(expected, e);
    assertEquals(status, e.statusCode());
    assertTrue(e.type().isPresent(), "error body parsed: " + e.body());
    assertTrue(e.headers().values("x-request-id").get(0).startsWith("req_"));
  }

  @Test
  void rateLimitCarriesRetryAfterAndCustomBody() {
    String body =
        "{\"error\":{\"message\":\"You exceeded your current quota\",\"type\":\"insufficient_quota\",\"param\":null,\"code\":\"insufficient_quota\"}}";
    sim.script(SimRoute.OPENAI_CHAT, Fault.status(429, Map.of("retry-after", "2"), body));

    RateLimitException e =
        assertThrows(RateLimitException.class, () -> client.chat().completions().create(chat()));

    assertEquals(List.of("2"), e.headers().values("retry-after"));
    assertEquals("insufficient_quota", e.code().orElseThrow());
  }

  @Test
  void connectionResetSurfacesAsIoError() {
    // OkHttp silently retries once when a pooled connection fails (it takes it for a stale one),
    // so the reset is scripted for two calls; the retry runs on a fresh connection and surfaces.
    sim.scriptTimes(SimRoute.OPENAI_CHAT, Fault.connectionReset(), 2);

    assertThrows(OpenAIIoException.class, () -> client.chat().completions().create(chat()));
    sim.clearScripts();
    // The next call is served normally on a fresh connection.
    assertEquals(
        25, client.chat().completions().create(chat()).usage().orElseThrow().promptTokens());
  }

  @Test
  void streamCutDeliversTheFirstEventsThenFails() {
    sim.script(SimRoute.OPENAI_CHAT, Fault.streamCut(2));
    List<ChatCompletionChunk> got = new ArrayList<>();

    assertThrows(
        OpenAIException.class,
        () -> {
          try (StreamResponse<ChatCompletionChunk> stream =
              client.chat().completions().createStreaming(streamingChat())) {
            stream.stream().forEach(got::add);
          }
        });
    assertEquals(2, got.size());
  }

  @Test
  void truncatedStreamEndsCleanlyWithoutTheUsageChunk() {
    sim.script(SimRoute.OPENAI_CHAT, Fault.streamTruncated(3));
    List<ChatCompletionChunk> got = new ArrayList<>();
    try (StreamResponse<ChatCompletionChunk> stream =
        client.chat().completions().createStreaming(streamingChat())) {
      stream.stream().forEach(got::add);
    }
    assertEquals(3, got.size());
    assertTrue(got.stream().allMatch(c -> c.usage().isEmpty()));
  }

  @Test
  void malformedSseFailsTheStream() {
    sim.script(SimRoute.OPENAI_CHAT, Fault.malformedSse(1));
    List<ChatCompletionChunk> got = new ArrayList<>();

    assertThrows(
        OpenAIException.class,
        () -> {
          try (StreamResponse<ChatCompletionChunk> stream =
              client.chat().completions().createStreaming(streamingChat())) {
            stream.stream().forEach(got::add);
          }
        });
    assertEquals(1, got.size());
  }

  @Test
  void inStreamErrorSurfacesAsAnSdkError() {
    sim.script(SimRoute.OPENAI_CHAT, Fault.streamError(2, 500));
    List<ChatCompletionChunk> got = new ArrayList<>();

    assertThrows(
        OpenAIException.class,
        () -> {
          try (StreamResponse<ChatCompletionChunk> stream =
              client.chat().completions().createStreaming(streamingChat())) {
            stream.stream().forEach(got::add);
          }
        });
    assertEquals(2, got.size());
  }

  @Test
  void responsesInStreamErrorArrivesAsAnErrorEvent() {
    sim.script(SimRoute.OPENAI_RESPONSES, Fault.streamError(3, 500));
    List<ResponseStreamEvent> events = new ArrayList<>();
    try (StreamResponse<ResponseStreamEvent> stream =
        client.responses().createStreaming(webSearch())) {
      stream.stream().forEach(events::add);
    }
    // The Responses stream reports errors as a typed event, which the SDK hands over as such.
    assertEquals(4, events.size());
    ResponseStreamEvent last = events.get(3);
    assertTrue(last.isError());
    assertTrue(last.asError().message().contains("server had an error"));
    assertTrue(events.stream().noneMatch(ResponseStreamEvent::isCompleted));
  }

  @Test
  void invalidJsonWith200FailsToParse() {
    sim.script(SimRoute.OPENAI_CHAT, Fault.invalidJson());

    assertThrows(OpenAIException.class, () -> client.chat().completions().create(chat()));
  }

  @Test
  void slowDripSpacesTheEvents() {
    sim.script(SimRoute.OPENAI_CHAT, Fault.slowDrip(Duration.ofMillis(60)));
    long start = System.nanoTime();
    int count = 0;
    try (StreamResponse<ChatCompletionChunk> stream =
        client.chat().completions().createStreaming(streamingChat())) {
      count = (int) stream.stream().count();
    }
    long elapsedMs = (System.nanoTime() - start) / 1_000_000;
    // 9 events incl. [DONE], 60 ms apart: at least ~8 intervals.
    assertEquals(8, count);
    assertTrue(elapsedMs >= 7 * 60, "took " + elapsedMs + " ms");
  }
}
