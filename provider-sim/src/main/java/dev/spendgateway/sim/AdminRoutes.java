package dev.spendgateway.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;
import org.apache.pekko.util.ByteString;

/**
 * The HTTP scripting API under {@code /_sim}, for a simulator in another process (load tests,
 * {@code bin/provider-sim}). Mirrors the Java API of {@link ProviderSimulator}.
 */
final class AdminRoutes extends AllDirectives {
  private final SimState state;
  private final ObjectMapper mapper;

  AdminRoutes(SimState state, ObjectMapper mapper) {
    this.state = state;
    this.mapper = mapper;
  }

  Route route() {
    return pathPrefix(
        "_sim",
        () ->
            concat(
                path(
                    "health",
                    () -> get(() -> complete(json(mapper.createObjectNode().put("status", "ok"))))),
                path("script", this::script),
                path("received", this::received),
                path("reset", () -> post(this::reset)),
                path("defaults", this::defaults),
                path("media", this::media),
                path("streams", () -> get(() -> complete(json(streams())))),
                path(
                    "release",
                    () ->
                        post(
                            () -> {
                              state.streams().releaseHeld();
                              return complete(json(streams()));
                            }))));
  }

  // ---------------- /_sim/streams ----------------

  /**
   * {@code {"open":N,"peak":N,"finished":N,"cut":N,"held":N}}: streamed answers now, at most,
   * ended, and waiting at a hold now.
   */
  private ObjectNode streams() {
    OpenStreams.Snapshot s = state.streams().snapshot();
    return mapper
        .createObjectNode()
        .put("open", s.open())
        .put("peak", s.peak())
        .put("finished", s.finished())
        .put("cut", s.cut())
        .put("held", s.held());
  }

  // ---------------- /_sim/script ----------------

  private Route script() {
    return concat(
        post(() -> jsonBody(this::addScript)),
        get(() -> complete(json(pending()))),
        delete(
            () -> {
              state.clearScripts();
              return complete(json(pending()));
            }));
  }

  /** {@code {"route":"openai.chat","faults":[{...},…]}} or {@code {"route":…,"fault":{…}}}. */
  private HttpResponse addScript(JsonNode body) {
    SimRoute route = SimRoute.parse(field(body, "route").asText());
    List<FaultJson.Step> steps = new ArrayList<>();
    if (body.has("faults")) {
      if (!body.get("faults").isArray()) {
        throw new FaultJson.BadScript("'faults' must be an array");
      }
      body.get("faults").forEach(f -> steps.add(FaultJson.step(f)));
    } else {
      steps.add(FaultJson.step(field(body, "fault")));
    }
    // Parse all first, then add, so a bad entry adds nothing.
    steps.forEach(s -> state.script(route, s.fault(), s.times()));
    return json(pending());
  }

  private ObjectNode pending() {
    ObjectNode out = mapper.createObjectNode();
    ObjectNode p = out.putObject("pending");
    for (SimRoute r : SimRoute.values()) {
      p.put(r.wireName(), state.pending(r));
    }
    return out;
  }

  // ---------------- /_sim/received ----------------

  private Route received() {
    return concat(
        get(
            () ->
                parameterOptional(
                    "route",
                    route ->
                        parameterOptional(
                            "limit",
                            limit -> {
                              Optional<SimRoute> filter = route.map(SimRoute::parse);
                              int max = limit.map(Integer::parseInt).orElse(Integer.MAX_VALUE);
                              List<ReceivedCall> calls = state.received();
                              ArrayNode array = mapper.createArrayNode();
                              List<ReceivedCall> matching = new ArrayList<>();
                              for (ReceivedCall c : calls) {
                                if (filter.isEmpty() || filter.get() == c.route()) {
                                  matching.add(c);
                                }
                              }
                              // The newest `limit` calls, still oldest first.
                              for (ReceivedCall c :
                                  matching.subList(
                                      Math.max(0, matching.size() - max), matching.size())) {
                                array.add(FaultJson.callJson(c));
                              }
                              ObjectNode out = mapper.createObjectNode();
                              out.put("total", state.recorder().total());
                              out.put("count", array.size());
                              out.set("calls", array);
                              return complete(json(out));
                            }))),
        delete(
            () -> {
              state.recorder().clear();
              return complete(json(mapper.createObjectNode().put("total", 0)));
            }));
  }

  // ---------------- /_sim/reset and /_sim/defaults ----------------

  private Route reset() {
    state.reset();
    return complete(json(mapper.createObjectNode().put("status", "reset")));
  }

  private Route defaults() {
    return concat(
        get(() -> complete(json(defaultsJson()))),
        post(
            () ->
                jsonBody(
                    body -> {
                      SimState.Defaults d = state.defaults();
                      Usage usage =
                          body.has("usage")
                              ? FaultJson.usage(body.get("usage"), d.usage())
                              : d.usage();
                      Duration latency =
                          body.has("latencyMs")
                              ? Duration.ofMillis(body.get("latencyMs").asLong())
                              : d.latency();
                      if (latency.isNegative()) {
                        throw new FaultJson.BadScript("'latencyMs' must be >= 0");
                      }
                      state.setDefaults(new SimState.Defaults(usage, latency));
                      return json(defaultsJson());
                    })));
  }

  private ObjectNode defaultsJson() {
    SimState.Defaults d = state.defaults();
    ObjectNode out = mapper.createObjectNode();
    out.set("usage", FaultJson.usageJson(d.usage()));
    out.put("latencyMs", d.latency().toMillis());
    return out;
  }

  // ---------------- /_sim/media ----------------

  /**
   * {@code GET} the media job settings and counters; {@code POST} {@code {"queueMs","runMs",
   * "fail","maxConcurrent","contentBytes","retryAfter"}} (each optional) to change how the next
   * jobs behave.
   */
  private Route media() {
    return concat(
        get(() -> complete(json(mediaJson()))),
        post(
            () ->
                jsonBody(
                    body -> {
                      MediaJobs.Settings s = state.media().settings();
                      state
                          .media()
                          .settings(
                              new MediaJobs.Settings(
                                  body.has("queueMs")
                                      ? Duration.ofMillis(body.get("queueMs").asLong())
                                      : s.queueFor(),
                                  body.has("runMs")
                                      ? Duration.ofMillis(body.get("runMs").asLong())
                                      : s.runFor(),
                                  body.has("fail") ? body.get("fail").asBoolean() : s.fail(),
                                  body.has("maxConcurrent")
                                      ? body.get("maxConcurrent").asInt()
                                      : s.maxConcurrent(),
                                  body.has("contentBytes")
                                      ? body.get("contentBytes").asLong()
                                      : s.contentBytes(),
                                  body.has("retryAfter")
                                      ? body.get("retryAfter").asInt()
                                      : s.retryAfterSeconds()));
                      return json(mediaJson());
                    })));
  }

  private ObjectNode mediaJson() {
    MediaJobs.Settings s = state.media().settings();
    ObjectNode out = mapper.createObjectNode();
    out.put("queueMs", s.queueFor().toMillis());
    out.put("runMs", s.runFor().toMillis());
    out.put("fail", s.fail());
    out.put("maxConcurrent", s.maxConcurrent());
    out.put("contentBytes", s.contentBytes());
    out.put("retryAfter", s.retryAfterSeconds());
    out.put("created", state.media().created());
    out.put("refused", state.media().refused());
    return out;
  }

  // ---------------- helpers ----------------

  /** Parses the body as JSON and maps script errors to a 400 naming the field. */
  private Route jsonBody(java.util.function.Function<JsonNode, HttpResponse> handler) {
    return entity(
        Unmarshaller.entityToByteString(),
        (ByteString bytes) -> {
          try {
            JsonNode body = mapper.readTree(bytes.toArrayUnsafe());
            if (body == null || !body.isObject()) {
              return complete(badRequest("body must be a JSON object"));
            }
            return complete(handler.apply(body));
          } catch (IOException e) {
            return complete(badRequest("body is not valid JSON"));
          } catch (FaultJson.BadScript | IllegalArgumentException e) {
            return complete(badRequest(e.getMessage()));
          }
        });
  }

  private static JsonNode field(JsonNode body, String name) {
    JsonNode v = body.get(name);
    if (v == null || v.isNull()) {
      throw new FaultJson.BadScript("'" + name + "' is required");
    }
    return v;
  }

  private HttpResponse badRequest(String message) {
    ObjectNode out = mapper.createObjectNode();
    out.put("error", message);
    return json(out).withStatus(StatusCodes.BAD_REQUEST);
  }

  private HttpResponse json(JsonNode node) {
    try {
      return HttpResponse.create()
          .withEntity(ContentTypes.APPLICATION_JSON, mapper.writeValueAsBytes(node));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
