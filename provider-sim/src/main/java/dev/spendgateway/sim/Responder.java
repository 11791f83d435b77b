package dev.spendgateway.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.http.javadsl.coding.Coder;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.http.javadsl.model.StatusCode;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.pattern.Patterns;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * Turns a {@link Call} and the {@link Fault} chosen for it into an HTTP answer. Every path is
 * asynchronous: delays use the scheduler, streams are Pekko sources; nothing blocks a thread.
 */
final class Responder {
  private static final ContentType SSE = ContentTypes.create(MediaTypes.TEXT_EVENT_STREAM);

  /**
   * How long a cut stream waits before resetting, so the events before the cut reach the client.
   */
  private static final Duration CUT_GRACE = Duration.ofMillis(50);

  private final ClassicActorSystemProvider system;
  private final ObjectMapper mapper;
  private final OpenAiWire openAi;
  private final AnthropicWire anthropic;
  private final String replyText;

  private final OpenStreams streams;

  Responder(ClassicActorSystemProvider system, ObjectMapper mapper, String replyText) {
    this(system, mapper, replyText, new OpenStreams());
  }

  /**
   * @param streams counts the streamed answers this responder sends
   */
  Responder(
      ClassicActorSystemProvider system,
      ObjectMapper mapper,
      String replyText,
      OpenStreams streams) {
    this.streams = streams;
    this.system = system;
    this.replyText = replyText;
    this.mapper = mapper;
    this.openAi = new OpenAiWire(mapper);
    this.anthropic = new AnthropicWire(mapper);
  }

  /** Applies the latency, then the fault. */
  CompletionStage<HttpResponse> respond(Call call, Fault fault, SimState.Defaults defaults) {
    Duration delay = defaults.latency();
    if (fault instanceof Fault.Normal n) {
      delay = delay.plus(n.latency());
    } else if (fault instanceof Fault.SlowDrip d && !call.stream()) {
      // A JSON answer has no events to drip; the drip interval becomes a delay instead.
      delay = delay.plus(d.interval());
    } else if (fault instanceof Fault.StreamPause p && !call.stream()) {
      // A JSON answer has no events to pause between; the pause comes before the headers.
      delay = delay.plus(p.pause());
    }
    if (fault instanceof Fault.StreamHold h && !call.stream()) {
      // A JSON answer has nothing to hold between events; the hold comes before the headers.
      Duration before = delay;
      return untilReleased(h)
          .thenCompose(
              released -> Patterns.after(before, system, () -> render(call, fault, defaults)));
    }
    if (delay.isZero()) {
      return render(call, fault, defaults);
    }
    return Patterns.after(delay, system, () -> render(call, fault, defaults));
  }

  private CompletionStage<HttpResponse> render(Call call, Fault fault, SimState.Defaults defaults) {
    String requestId = requestId(call.route());
    if (fault instanceof Fault.ConnectionReset) {
      return reset(call);
    }
    if (fault instanceof Fault.Status s) {
      return done(statusResponse(call.route(), s, requestId));
    }
    if (fault instanceof Fault.InvalidJson) {
      return done(invalidJson(call.route(), requestId));
    }
    if (fault instanceof Fault.StreamError se && !call.stream()) {
      return done(statusResponse(call.route(), Fault.status(se.status()), requestId));
    }
    Usage usage =
        fault instanceof Fault.Normal n ? n.usage().orElse(defaults.usage()) : defaults.usage();
    HttpResponse answer =
        call.stream()
            ? streamAnswer(call, fault, usage, requestId)
            : jsonAnswer(call, fault, usage, requestId);
    // Pekko's gzip coder flushes after every chunk, so a compressed stream still streams.
    return done(fault instanceof Fault.Gzip ? Coder.Gzip.encodeMessage(answer) : answer);
  }

  // ---------------- normal answers and their stream faults ----------------

  private HttpResponse jsonAnswer(Call call, Fault fault, Usage usage, String requestId) {
    if (fault instanceof Fault.MalformedSse) {
      return invalidJson(call.route(), requestId);
    }
    String text = replyText;
    JsonNode body =
        switch (call.route()) {
          case OPENAI_CHAT -> openAi.chatCompletion(call.model(), text, usage);
          case OPENAI_RESPONSES ->
              openAi.response(
                  OpenAiWire.ResponseIds.fresh(usage.webSearches()),
                  call.body(),
                  call.model(),
                  text,
                  usage);
          case OPENAI_TRANSCRIPTIONS -> openAi.transcription(text, usage);
          case ANTHROPIC_MESSAGES ->
              anthropic.message(
                  call.model(), text, usage, AnthropicWire.hasWebSearchTool(call.body()));
          // Media jobs are answered by MediaRoutes; only their error faults come here.
          case MEDIA_CREATE, MEDIA_RETRIEVE ->
              throw new IllegalStateException("media answers come from MediaRoutes");
        };
    if (fault instanceof Fault.UsageMissing
        && body instanceof com.fasterxml.jackson.databind.node.ObjectNode o) {
      o.remove("usage");
    }
    byte[] bytes = write(body);
    if (call.route() == SimRoute.OPENAI_TRANSCRIPTIONS
        && "text".equals(call.body().path("response_format").asText(""))) {
      bytes = (text + "\n").getBytes(StandardCharsets.UTF_8);
      return withRequestId(
          HttpResponse.create().withEntity(ContentTypes.TEXT_PLAIN_UTF8, bytes),
          call.route(),
          requestId);
    }
    if (fault instanceof Fault.StreamCut cut) {
      // A JSON body cut half way: sent chunked so no Content-Length promises the rest.
      List<ByteString> half = List.of(ByteString.fromArray(bytes, 0, bytes.length / 2));
      return withRequestId(
          HttpResponse.create()
              .withEntity(
                  HttpEntities.createChunked(
                      ContentTypes.APPLICATION_JSON, cutSource(call, half, cut.abort()))),
          call.route(),
          requestId);
    }
    return withRequestId(
        HttpResponse.create().withEntity(ContentTypes.APPLICATION_JSON, bytes),
        call.route(),
        requestId);
  }

  private HttpResponse streamAnswer(Call call, Fault fault, Usage usage, String requestId) {
    List<SseEvent> events = events(call, usage);
    Source<ByteString, NotUsed> body;
    if (fault instanceof Fault.StreamCut cut) {
      body =
          cutSource(
              call,
              toBytes(events.subList(0, Math.min(cut.afterEvents(), events.size()))),
              cut.abort());
    } else if (fault instanceof Fault.MalformedSse m) {
      List<ByteString> bytes = toBytes(events.subList(0, Math.min(m.afterEvents(), events.size())));
      bytes.add(malformedEvent(call.route()));
      body = Source.from(bytes);
    } else if (fault instanceof Fault.StreamError se) {
      List<ByteString> bytes =
          toBytes(events.subList(0, Math.min(se.afterEvents(), events.size())));
      bytes.add(errorEvent(call.route(), se.status(), requestId));
      body = Source.from(bytes);
    } else if (fault instanceof Fault.SlowDrip drip) {
      body = Source.from(toBytes(events)).throttle(1, drip.interval());
    } else if (fault instanceof Fault.StreamPause pause) {
      body = pausedSource(events, pause);
    } else if (fault instanceof Fault.StreamHold hold) {
      body = heldSource(events, hold);
    } else if (fault instanceof Fault.UsageMissing) {
      body = Source.from(toBytes(withoutFinalUsage(events)));
    } else {
      body = Source.from(toBytes(events));
    }
    HttpResponse response =
        HttpResponse.create()
            .withEntity(HttpEntities.createChunked(SSE, streams.counted(body)))
            .addHeader(RawHeader.create("cache-control", "no-cache"));
    return withRequestId(response, call.route(), requestId);
  }

  private List<SseEvent> events(Call call, Usage usage) {
    String text = replyText;
    return switch (call.route()) {
      case OPENAI_CHAT -> openAi.chatChunks(call.model(), text, usage, call.includeUsage());
      case OPENAI_RESPONSES ->
          openAi.responseEvents(
              OpenAiWire.ResponseIds.fresh(usage.webSearches()),
              call.body(),
              call.model(),
              text,
              usage);
      case OPENAI_TRANSCRIPTIONS -> openAi.transcriptionEvents(text, usage);
      case ANTHROPIC_MESSAGES ->
          anthropic.messageEvents(
              call.model(), text, usage, AnthropicWire.hasWebSearchTool(call.body()));
      case MEDIA_CREATE, MEDIA_RETRIEVE ->
          throw new IllegalStateException("media answers come from MediaRoutes");
    };
  }

  /**
   * The given bytes, then either a clean end ({@code abort=false}) or, after a short grace so those
   * bytes are on the wire, a connection abort.
   */
  private Source<ByteString, NotUsed> cutSource(Call call, List<ByteString> bytes, boolean abort) {
    Source<ByteString, NotUsed> head = Source.from(bytes);
    if (!abort) {
      return head;
    }
    Source<ByteString, NotUsed> tail =
        call.connection()
            .<Source<ByteString, NotUsed>>map(
                ctl ->
                    Source.lazySource(
                            () -> {
                              Patterns.after(
                                  CUT_GRACE,
                                  system,
                                  () -> {
                                    ctl.abort();
                                    return CompletableFuture.completedFuture(NotUsed.getInstance());
                                  });
                              return Source.<ByteString>never();
                            })
                        .mapMaterializedValue(m -> NotUsed.getInstance()))
            // Without a connection hook, failing the entity makes Pekko HTTP abort the connection.
            .orElseGet(
                () ->
                    Source.<ByteString>failed(new IOException("provider-sim: stream cut"))
                        .initialDelay(CUT_GRACE));
    return head.concat(tail);
  }

  private static ByteString malformedEvent(SimRoute route) {
    String text =
        switch (route) {
          case ANTHROPIC_MESSAGES ->
              "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\n\n";
          case OPENAI_RESPONSES ->
              "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\n\n";
          default ->
              "data: {\"id\":\"chatcmpl-malformed\",\"object\":\"chat.completion.chunk\",\"choices\":[{\n\n";
        };
    return ByteString.fromString(text);
  }

  /**
   * The provider's in-stream error: Anthropic's {@code event: error}, OpenAI's {@code data:
   * {"error":…}}.
   */
  private ByteString errorEvent(SimRoute route, int status, String requestId) {
    String json =
        new String(write(errorBody(route, status, null, requestId)), StandardCharsets.UTF_8);
    SseEvent event =
        switch (route) {
          case ANTHROPIC_MESSAGES -> SseEvent.named("error", json);
          case OPENAI_RESPONSES -> SseEvent.named("error", responsesError(status));
          default -> SseEvent.data(json);
        };
    return event.toBytes();
  }

  /**
   * The Responses API streams errors as a flat {@code {"type":"error","code","message","param"}}.
   */
  private String responsesError(int status) {
    JsonNode err = OpenAiWire.error(status, null).get("error");
    com.fasterxml.jackson.databind.node.ObjectNode e = mapper.createObjectNode();
    e.put("type", "error");
    e.set("code", err.get("code"));
    e.set("message", err.get("message"));
    e.set("param", err.get("param"));
    e.put("sequence_number", 0);
    return e.toString();
  }

  private static List<ByteString> toBytes(List<SseEvent> events) {
    List<ByteString> out = new ArrayList<>(events.size() + 1);
    for (SseEvent e : events) {
      out.add(e.toBytes());
    }
    return out;
  }

  // ---------------- error-ish answers ----------------

  private HttpResponse statusResponse(SimRoute route, Fault.Status s, String requestId) {
    ContentType contentType = ContentTypes.APPLICATION_JSON;
    List<HttpHeader> headers = new ArrayList<>();
    for (Map.Entry<String, String> h : s.headers().entrySet()) {
      // Pekko models Content-Type on the entity, never as a raw header.
      if (h.getKey().equalsIgnoreCase("content-type")) {
        contentType = ContentTypes.parse(h.getValue());
      } else {
        headers.add(RawHeader.create(h.getKey(), h.getValue()));
      }
    }
    byte[] body =
        s.body()
            .map(b -> b.getBytes(StandardCharsets.UTF_8))
            .orElseGet(() -> write(errorBody(route, s.status(), null, requestId)));
    if (s.body().isPresent()
        && !looksLikeJson(s.body().get())
        && contentType == ContentTypes.APPLICATION_JSON) {
      contentType = ContentTypes.TEXT_PLAIN_UTF8;
    }
    HttpResponse response =
        HttpResponse.create()
            .withStatus(statusCode(s.status()))
            .withEntity(contentType, body)
            .addHeaders(headers);
    boolean ownRequestId =
        s.headers().keySet().stream().anyMatch(k -> k.equalsIgnoreCase(requestIdHeader(route)));
    return ownRequestId ? response : withRequestId(response, route, requestId);
  }

  private HttpResponse invalidJson(SimRoute route, String requestId) {
    byte[] body =
        "{\"id\":\"sim-invalid\",\"object\":\"chat.completion\",\"choices\":[{\"message\":"
            .getBytes(StandardCharsets.UTF_8);
    return withRequestId(
        HttpResponse.create().withEntity(ContentTypes.APPLICATION_JSON, body), route, requestId);
  }

  private CompletionStage<HttpResponse> reset(Call call) {
    if (call.connection().isPresent()) {
      call.connection().get().abort();
      // The connection is gone; this answer is never rendered.
      return new CompletableFuture<>();
    }
    // Served without a connection hook (e.g. a route test): a failing entity is the closest thing.
    return done(
        HttpResponse.create()
            .withEntity(
                HttpEntities.createChunked(
                    ContentTypes.APPLICATION_JSON,
                    Source.failed(new IOException("provider-sim: connection reset")))));
  }

  /** The provider-shaped error body for a status. */
  static JsonNode errorBody(SimRoute route, int status, String message, String requestId) {
    return route.provider() == SimRoute.Provider.ANTHROPIC
        ? AnthropicWire.error(status, message, requestId)
        : OpenAiWire.error(status, message);
  }

  /** A provider-shaped error answer, used for requests the simulator itself refuses. */
  HttpResponse error(SimRoute route, int status, String message) {
    String requestId = requestId(route);
    return withRequestId(
        HttpResponse.create()
            .withStatus(statusCode(status))
            .withEntity(
                ContentTypes.APPLICATION_JSON, write(errorBody(route, status, message, requestId))),
        route,
        requestId);
  }

  // ---------------- helpers ----------------

  /** Pekko knows the IANA codes only; provider codes like Anthropic's 529 are registered ad hoc. */
  static StatusCode statusCode(int status) {
    return StatusCodes.lookup(status)
        .orElseGet(
            () ->
                StatusCodes.custom(
                    status, status == 529 ? "Overloaded" : "Status " + status, "", false, true));
  }

  private static boolean looksLikeJson(String body) {
    String t = body.stripLeading();
    return t.startsWith("{") || t.startsWith("[");
  }

  private static String requestId(SimRoute route) {
    return route.provider() == SimRoute.Provider.ANTHROPIC
        ? AnthropicWire.requestId()
        : OpenAiWire.requestId();
  }

  private static String requestIdHeader(SimRoute route) {
    return route.provider() == SimRoute.Provider.ANTHROPIC
        ? AnthropicWire.REQUEST_ID_HEADER
        : OpenAiWire.REQUEST_ID_HEADER;
  }

  private static HttpResponse withRequestId(HttpResponse r, SimRoute route, String requestId) {
    return r.addHeader(RawHeader.create(requestIdHeader(route), requestId));
  }

  private byte[] write(JsonNode node) {
    try {
      return mapper.writeValueAsBytes(node);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static CompletionStage<HttpResponse> done(HttpResponse r) {
    return CompletableFuture.completedFuture(r);
  }

  // ---------------- long pauses and unreported usage ----------------

  /**
   * The first events, then silence for the pause, then the rest. The tail is materialized only once
   * the head is sent, so the pause starts after the last event before it, not when the answer
   * starts.
   */
  private static Source<ByteString, NotUsed> pausedSource(
      List<SseEvent> events, Fault.StreamPause pause) {
    int split = Math.min(pause.afterEvents(), events.size());
    Source<ByteString, NotUsed> head = Source.from(toBytes(events.subList(0, split)));
    List<ByteString> rest = toBytes(events.subList(split, events.size()));
    return head.concatLazy(
        Source.lazySource(() -> Source.from(rest).initialDelay(pause.pause()))
            .mapMaterializedValue(m -> NotUsed.getInstance()));
  }

  /**
   * The first events, then silence until the held streams are released (or the hold's maximum
   * passes), then the rest. Like {@link #pausedSource}, the wait starts only once the head is sent.
   */
  private Source<ByteString, NotUsed> heldSource(List<SseEvent> events, Fault.StreamHold hold) {
    int split = Math.min(hold.afterEvents(), events.size());
    Source<ByteString, NotUsed> head = Source.from(toBytes(events.subList(0, split)));
    List<ByteString> rest = toBytes(events.subList(split, events.size()));
    return head.concatLazy(
        Source.lazySource(
                () -> Source.completionStage(untilReleased(hold)).mapConcat(released -> rest))
            .mapMaterializedValue(m -> NotUsed.getInstance()));
  }

  /** Completes on the next release, or after the hold's maximum, whichever comes first. */
  private CompletionStage<org.apache.pekko.Done> untilReleased(Fault.StreamHold hold) {
    CompletionStage<org.apache.pekko.Done> timeout =
        Patterns.after(
            hold.maxHold(),
            system,
            () ->
                java.util.concurrent.CompletableFuture.completedFuture(
                    org.apache.pekko.Done.getInstance()));
    return streams.hold(timeout);
  }

  /**
   * The same events with the provider's final usage report taken out: Anthropic's {@code
   * message_delta} loses {@code usage} (the {@code message_start} counts stay, as they are sent
   * before generation), the chat usage chunk is dropped, the Responses API's {@code
   * response.completed} says {@code usage: null}, the transcription's {@code done} has none.
   */
  private List<SseEvent> withoutFinalUsage(List<SseEvent> events) {
    List<SseEvent> out = new ArrayList<>(events.size());
    for (SseEvent e : events) {
      JsonNode data;
      try {
        data = mapper.readTree(e.data());
      } catch (IOException notJson) {
        out.add(e); // [DONE]
        continue;
      }
      if (!(data instanceof com.fasterxml.jackson.databind.node.ObjectNode o)) {
        out.add(e);
        continue;
      }
      String type = o.path("type").asText("");
      if (o.path("choices").isArray()
          && o.path("choices").isEmpty()
          && o.path("usage").isObject()) {
        continue;
      }
      if (type.equals("message_delta") || type.equals("transcript.text.done")) {
        o.remove("usage");
      } else if (o.path("response").path("usage").isObject()) {
        ((com.fasterxml.jackson.databind.node.ObjectNode) o.get("response")).putNull("usage");
      } else {
        out.add(e);
        continue;
      }
      out.add(new SseEvent(e.event(), new String(write(o), StandardCharsets.UTF_8)));
    }
    return out;
  }
}
