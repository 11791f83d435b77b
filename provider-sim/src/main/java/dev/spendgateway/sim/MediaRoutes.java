package dev.spendgateway.sim;

import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * The media provider's job API (OpenAI's Videos API): submit under {@code POST /v1/videos}, poll,
 * download the content and delete under {@code /v1/videos/{id}}. Jobs live in {@link MediaJobs};
 * scripted {@code status} and {@code reset} faults apply per route like on the text endpoints.
 */
final class MediaRoutes extends AllDirectives {
  private static final int CHUNK_BYTES = 8 * 1024;
  private static final ContentType MP4 = ContentTypes.create(MediaTypes.VIDEO_MP4);
  private static final String DEFAULT_MODEL = "sora-2";
  private static final String DEFAULT_SECONDS = "4";
  private static final String DEFAULT_SIZE = "720x1280";

  private final ProviderRoutes calls;
  private final SimState state;
  private final Responder responder;
  private final ObjectMapper mapper;

  MediaRoutes(ProviderRoutes calls, SimState state, Responder responder, ObjectMapper mapper) {
    this.calls = calls;
    this.state = state;
    this.responder = responder;
    this.mapper = mapper;
  }

  /** Matched inside {@code /v1}. */
  Route route() {
    return pathPrefix(
        "videos",
        () ->
            concat(
                pathEnd(() -> post(this::submit)),
                path(
                    segment().slash("content"),
                    id -> get(() -> extractRequest(r -> completeWithFuture(content(r, id))))),
                path(
                    segment(),
                    id ->
                        concat(
                            get(() -> extractRequest(r -> completeWithFuture(poll(r, id)))),
                            delete(
                                () -> extractRequest(r -> completeWithFuture(remove(r, id))))))));
  }

  // ---------------- submit ----------------

  private Route submit() {
    return withSizeLimit(
        ProviderRoutes.MAX_BODY_BYTES,
        () ->
            extractRequest(
                request -> {
                  if (request.entity().getContentType().mediaType().isMultipart()) {
                    return entity(
                        Unmarshaller.entityToMultipartFormData(),
                        form ->
                            completeWithFuture(
                                calls.readForm(form).thenCompose(parts -> onForm(request, parts))));
                  }
                  return entity(
                      Unmarshaller.entityToByteString(),
                      bytes -> completeWithFuture(onJson(request, bytes)));
                }));
  }

  private CompletionStage<HttpResponse> onJson(HttpRequest request, ByteString bytes) {
    Optional<JsonNode> body;
    try {
      body = Optional.ofNullable(mapper.readTree(bytes.toArrayUnsafe())).filter(JsonNode::isObject);
    } catch (IOException e) {
      body = Optional.empty();
    }
    Map<String, String> headers = ProviderRoutes.headers(request);
    if (body.isEmpty()) {
      calls.record(
          SimRoute.MEDIA_CREATE,
          headers,
          body,
          List.of(),
          Map.of(),
          Map.of(),
          "invalidRequest",
          request.protocol().value());
      return done(
          responder.error(
              SimRoute.MEDIA_CREATE, 400, "We could not parse the JSON body of your request."));
    }
    return create(request, headers, body.get(), body, List.of(), Map.of(), Map.of());
  }

  private CompletionStage<HttpResponse> onForm(
      HttpRequest request, List<ProviderRoutes.Part> parts) {
    ObjectNode mirror = mapper.createObjectNode();
    List<String> names = new ArrayList<>();
    Map<String, String> values = new LinkedHashMap<>();
    Map<String, Long> files = new LinkedHashMap<>();
    for (ProviderRoutes.Part p : parts) {
      names.add(p.name());
      if (p.file()) {
        files.put(p.name(), p.size());
      } else {
        values.put(p.name(), p.value());
        mirror.put(p.name(), p.value());
      }
    }
    return create(
        request, ProviderRoutes.headers(request), mirror, Optional.empty(), names, values, files);
  }

  private CompletionStage<HttpResponse> create(
      HttpRequest request,
      Map<String, String> headers,
      JsonNode fields,
      Optional<JsonNode> body,
      List<String> names,
      Map<String, String> values,
      Map<String, Long> files) {
    SimRoute route = SimRoute.MEDIA_CREATE;
    if (!calls.authorized(route, headers)) {
      calls.record(
          route, headers, body, names, values, files, "unauthorized", request.protocol().value());
      return done(responder.error(route, 401, null));
    }
    Optional<Fault> fault = state.nextFault(route);
    Optional<MediaJobs.Submitted> submitted =
        fault.isPresent() && answersItself(fault.get())
            ? Optional.empty()
            : Optional.of(
                state
                    .media()
                    .submit(
                        account(headers),
                        text(fields, "model", DEFAULT_MODEL),
                        text(fields, "seconds", DEFAULT_SECONDS),
                        text(fields, "size", DEFAULT_SIZE)));
    String kind =
        fault
            .map(Fault::kind)
            .orElseGet(
                () ->
                    submitted.get() instanceof MediaJobs.Submitted.AccountFull
                        ? "accountLimit"
                        : "normal");
    calls.record(route, headers, body, names, values, files, kind, request.protocol().value());
    if (submitted.isEmpty()) {
      return scripted(route, request, fields, fault.get());
    }
    if (submitted.get() instanceof MediaJobs.Submitted.AccountFull full) {
      return done(
          responder
              .error(
                  route,
                  429,
                  "Too many concurrent video jobs: "
                      + full.unfinished()
                      + " are still running on this account.")
              .addHeader(
                  RawHeader.create("retry-after", Integer.toString(full.retryAfterSeconds()))));
    }
    MediaJobs.Job job = ((MediaJobs.Submitted.Created) submitted.get()).job();
    return done(json(MediaJobs.json(mapper, job, state.media().now())));
  }

  // ---------------- poll, content, delete ----------------

  private CompletionStage<HttpResponse> poll(HttpRequest request, String id) {
    return withJob(request, id, (job, now) -> done(json(MediaJobs.json(mapper, job, now))));
  }

  private CompletionStage<HttpResponse> content(HttpRequest request, String id) {
    return withJob(
        request,
        id,
        (job, now) -> {
          if (!job.statusAt(now).equals("completed")) {
            return done(
                responder.error(
                    SimRoute.MEDIA_RETRIEVE,
                    400,
                    "Video is not ready: its status is " + job.statusAt(now) + "."));
          }
          return done(
              HttpResponse.create()
                  .withEntity(
                      HttpEntities.create(MP4, job.contentBytes(), bytes(job.contentBytes()))));
        });
  }

  private CompletionStage<HttpResponse> remove(HttpRequest request, String id) {
    return withJob(
        request,
        id,
        (job, now) -> {
          state.media().delete(job.account(), job.id());
          ObjectNode out = mapper.createObjectNode();
          out.put("id", job.id());
          out.put("object", "video.deleted");
          out.put("deleted", true);
          return done(json(out));
        });
  }

  private interface JobAnswer {
    CompletionStage<HttpResponse> apply(MediaJobs.Job job, Instant now);
  }

  private CompletionStage<HttpResponse> withJob(HttpRequest request, String id, JobAnswer answer) {
    SimRoute route = SimRoute.MEDIA_RETRIEVE;
    Map<String, String> headers = ProviderRoutes.headers(request);
    if (!calls.authorized(route, headers)) {
      calls.record(
          route,
          headers,
          Optional.empty(),
          List.of(),
          Map.of(),
          Map.of(),
          "unauthorized",
          request.protocol().value());
      return done(responder.error(route, 401, null));
    }
    Optional<Fault> fault = state.nextFault(route).filter(MediaRoutes::answersItself);
    calls.record(
        route,
        headers,
        Optional.empty(),
        List.of(),
        Map.of(),
        Map.of(),
        fault.map(Fault::kind).orElse("normal"),
        request.protocol().value());
    if (fault.isPresent()) {
      return scripted(route, request, Call.emptyBody(), fault.get());
    }
    Optional<MediaJobs.Job> job = state.media().find(account(headers), id);
    if (job.isEmpty()) {
      return done(responder.error(route, 404, "Video with id '" + id + "' not found."));
    }
    return answer.apply(job.get(), state.media().now());
  }

  // ---------------- helpers ----------------

  /** Faults that replace the answer (an error status, a reset); others leave the job API as is. */
  private static boolean answersItself(Fault f) {
    return f instanceof Fault.Status || f instanceof Fault.ConnectionReset;
  }

  private CompletionStage<HttpResponse> scripted(
      SimRoute route, HttpRequest request, JsonNode fields, Fault fault) {
    return responder.respond(
        new Call(route, fields, false, ProviderRoutes.connection(request)),
        fault,
        state.defaults());
  }

  /** The account is the API key, as with the real provider; no key is one shared account. */
  private static String account(Map<String, String> headers) {
    String auth = headers.getOrDefault("authorization", "");
    return auth.regionMatches(true, 0, "Bearer ", 0, 7) ? auth.substring(7) : "";
  }

  /** A field as the provider echoes it: {@code seconds} may come as {@code 8} or {@code "8"}. */
  private static String text(JsonNode fields, String name, String fallback) {
    JsonNode v = fields.path(name);
    return v.isValueNode() && !v.asText().isEmpty() ? v.asText() : fallback;
  }

  /** Deterministic content in chunks, so a large video is never held whole. */
  private static Source<ByteString, ?> bytes(long total) {
    byte[] chunk = new byte[CHUNK_BYTES];
    for (int i = 0; i < chunk.length; i++) {
      chunk[i] = (byte) i;
    }
    ByteString full = ByteString.fromArray(chunk);
    long whole = total / CHUNK_BYTES;
    int rest = (int) (total % CHUNK_BYTES);
    Source<ByteString, ?> body = Source.repeat(full).take(whole);
    return rest == 0 ? body : body.concat(Source.single(full.take(rest)));
  }

  private HttpResponse json(JsonNode node) {
    try {
      return HttpResponse.create()
          .withEntity(ContentTypes.APPLICATION_JSON, mapper.writeValueAsBytes(node));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static CompletionStage<HttpResponse> done(HttpResponse r) {
    return CompletableFuture.completedFuture(r);
  }
}
