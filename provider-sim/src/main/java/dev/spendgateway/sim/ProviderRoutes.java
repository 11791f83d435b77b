package dev.spendgateway.sim;

import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.Multipart;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.util.ByteString;

/**
 * The provider endpoints: parse the call, record it, take its scripted fault, hand both to the
 * {@link Responder}. One small route per endpoint, all under {@code /v1}.
 */
final class ProviderRoutes extends AllDirectives {
  /** Upload cap: well above the gateway's 4 MiB JSON cap, big enough for test audio files. */
  static final long MAX_BODY_BYTES = 64L * 1024 * 1024;

  private static final int MAX_FORM_VALUE_CHARS = 1024;
  private static final Fault NORMAL = Fault.normal();

  private final SimState state;
  private final Responder responder;
  private final ObjectMapper mapper;
  private final Materializer materializer;
  private final MediaRoutes media;

  ProviderRoutes(
      SimState state, Responder responder, ObjectMapper mapper, ClassicActorSystemProvider system) {
    this.state = state;
    this.responder = responder;
    this.mapper = mapper;
    this.materializer = Materializer.matFromSystem(system);
    this.media = new MediaRoutes(this, state, responder, mapper);
  }

  Route route() {
    return pathPrefix(
        "v1",
        () ->
            concat(
                path(
                    segment("chat").slash("completions"), () -> jsonEndpoint(SimRoute.OPENAI_CHAT)),
                path("responses", () -> jsonEndpoint(SimRoute.OPENAI_RESPONSES)),
                path(
                    segment("audio").slash("transcriptions"),
                    () -> formEndpoint(SimRoute.OPENAI_TRANSCRIPTIONS)),
                path("messages", () -> jsonEndpoint(SimRoute.ANTHROPIC_MESSAGES)),
                media.route()));
  }

  private Route jsonEndpoint(SimRoute route) {
    return post(
        () ->
            withSizeLimit(
                MAX_BODY_BYTES,
                () ->
                    extractRequest(
                        request ->
                            entity(
                                Unmarshaller.entityToByteString(),
                                bytes -> completeWithFuture(onJson(route, request, bytes))))));
  }

  private Route formEndpoint(SimRoute route) {
    return post(
        () ->
            withSizeLimit(
                MAX_BODY_BYTES,
                () ->
                    extractRequest(
                        request -> {
                          if (!request.entity().getContentType().mediaType().isMultipart()) {
                            return complete(
                                responder.error(
                                    route, 400, "Content-Type must be multipart/form-data."));
                          }
                          return entity(
                              Unmarshaller.entityToMultipartFormData(),
                              form ->
                                  completeWithFuture(
                                      readForm(form)
                                          .thenCompose(parts -> onForm(route, request, parts))));
                        })));
  }

  // ---------------- JSON calls ----------------

  private CompletionStage<HttpResponse> onJson(
      SimRoute route, HttpRequest request, ByteString bytes) {
    Map<String, String> headers = headers(request);
    Optional<JsonNode> body = parse(bytes);
    if (!authorized(route, headers)) {
      record(
          route,
          headers,
          body,
          List.of(),
          Map.of(),
          Map.of(),
          "unauthorized",
          request.protocol().value());
      return done(responder.error(route, 401, null));
    }
    if (body.isEmpty() || !body.get().isObject()) {
      record(
          route,
          headers,
          body,
          List.of(),
          Map.of(),
          Map.of(),
          "invalidRequest",
          request.protocol().value());
      return done(responder.error(route, 400, "We could not parse the JSON body of your request."));
    }
    Fault fault = state.nextFault(route).orElse(NORMAL);
    record(
        route,
        headers,
        body,
        List.of(),
        Map.of(),
        Map.of(),
        fault.kind(),
        request.protocol().value());
    Call call =
        new Call(
            route, body.get(), body.get().path("stream").asBoolean(false), connection(request));
    return responder.respond(call, fault, state.defaults());
  }

  private Optional<JsonNode> parse(ByteString bytes) {
    try {
      return Optional.ofNullable(mapper.readTree(bytes.toArrayUnsafe()));
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  // ---------------- multipart calls ----------------

  /** One multipart field as received: files by size only, other fields by (truncated) value. */
  record Part(String name, boolean file, long size, String value) {}

  CompletionStage<List<Part>> readForm(Multipart.FormData form) {
    // Parts of one form must be consumed in order; mapAsync(1) does exactly that.
    return form.getParts().mapAsync(1, this::readPart).runWith(Sink.seq(), materializer);
  }

  private CompletionStage<Part> readPart(Multipart.FormData.BodyPart part) {
    if (isFile(part)) {
      return part.getEntity()
          .getDataBytes()
          .runFold(0L, (size, chunk) -> size + chunk.size(), materializer)
          .thenApply(size -> new Part(part.getName(), true, size, null));
    }
    return part.toStrict(10_000, materializer)
        .thenApply(
            strict -> {
              String value = strict.getEntity().getData().utf8String();
              return new Part(part.getName(), false, value.length(), value);
            });
  }

  /**
   * A part is a file when it has a filename, is named {@code file} (some clients send the audio
   * without a filename) or is not text; files are only measured, never buffered.
   */
  private static boolean isFile(Multipart.FormData.BodyPart part) {
    return part.getFilename().isPresent()
        || part.getName().equals("file")
        || !part.getEntity().getContentType().mediaType().isText();
  }

  private CompletionStage<HttpResponse> onForm(
      SimRoute route, HttpRequest request, List<Part> parts) {
    Map<String, String> headers = headers(request);
    List<String> names = new ArrayList<>();
    Map<String, String> values = new LinkedHashMap<>();
    Map<String, Long> files = new LinkedHashMap<>();
    ObjectNode mirror = mapper.createObjectNode();
    for (Part p : parts) {
      names.add(p.name());
      if (p.file()) {
        files.put(p.name(), p.size());
      } else {
        values.put(p.name(), truncate(p.value()));
        mirror.put(p.name(), p.value());
      }
    }
    if (!authorized(route, headers)) {
      record(
          route,
          headers,
          Optional.empty(),
          names,
          values,
          files,
          "unauthorized",
          request.protocol().value());
      return done(responder.error(route, 401, null));
    }
    Fault fault = state.nextFault(route).orElse(NORMAL);
    record(
        route,
        headers,
        Optional.empty(),
        names,
        values,
        files,
        fault.kind(),
        request.protocol().value());
    if (!files.containsKey("file")) {
      return done(responder.error(route, 400, "Missing required parameter: 'file'."));
    }
    Call call =
        new Call(route, mirror, "true".equalsIgnoreCase(values.get("stream")), connection(request));
    return responder.respond(call, fault, state.defaults());
  }

  private static String truncate(String v) {
    return v.length() <= MAX_FORM_VALUE_CHARS ? v : v.substring(0, MAX_FORM_VALUE_CHARS);
  }

  // ---------------- shared ----------------

  boolean authorized(SimRoute route, Map<String, String> headers) {
    Optional<String> expected = state.config().expectedApiKey();
    if (expected.isEmpty()) {
      return true;
    }
    Optional<String> bearer =
        Optional.ofNullable(headers.get("authorization"))
            .filter(a -> a.regionMatches(true, 0, "Bearer ", 0, 7))
            .map(a -> a.substring(7));
    // Anthropic takes x-api-key, and a bearer token (which its Java SDK 3.x sends); OpenAI only
    // bearer.
    if (route.provider() == SimRoute.Provider.ANTHROPIC && headers.containsKey("x-api-key")) {
      return expected.get().equals(headers.get("x-api-key"));
    }
    return bearer.map(expected.get()::equals).orElse(false);
  }

  void record(
      SimRoute route,
      Map<String, String> headers,
      Optional<JsonNode> body,
      List<String> formFields,
      Map<String, String> formValues,
      Map<String, Long> fileSizes,
      String fault,
      String protocol) {
    CallRecorder recorder = state.recorder();
    long seq = recorder.nextSeq();
    recorder.record(
        new ReceivedCall(
            seq,
            System.currentTimeMillis(),
            route,
            headers,
            body,
            formFields,
            formValues,
            fileSizes,
            fault,
            protocol));
  }

  static Map<String, String> headers(HttpRequest request) {
    Map<String, String> out = new LinkedHashMap<>();
    for (HttpHeader h : request.getHeaders()) {
      String name = h.lowercaseName();
      // Timeout-Access is Pekko's synthetic header, never sent by the client.
      if (name.equals("timeout-access")) {
        continue;
      }
      out.merge(name, h.value(), (a, b) -> a + ", " + b);
    }
    // Pekko keeps Content-Type on the entity, not in the header list.
    out.put("content-type", request.entity().getContentType().toString().toLowerCase(Locale.ROOT));
    return out;
  }

  static Optional<ConnectionControl> connection(HttpRequest request) {
    return request.getAttribute(ConnectionControl.KEY);
  }

  private static CompletionStage<HttpResponse> done(HttpResponse r) {
    return CompletableFuture.completedFuture(r);
  }
}
