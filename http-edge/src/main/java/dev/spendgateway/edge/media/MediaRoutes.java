package dev.spendgateway.edge.media;

import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.edge.auth.GatewayAuth;
import dev.spendgateway.edge.call.CallPipeline;
import dev.spendgateway.edge.call.CallServices;
import dev.spendgateway.edge.call.ProviderGuards;
import dev.spendgateway.edge.call.SpendHeaders;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.log.AccessLog;
import dev.spendgateway.edge.log.AccessRecord;
import dev.spendgateway.policy.request.MediaRules;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.util.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The media job routes under {@code /media/v1/videos}: submit (on the call pipeline, see {@link
 * MediaSubmit}), poll, download and delete. Off (not matched, so the gateway's 404) while no media
 * provider is configured. Only job ids the gateway made are served ({@link MediaJobIds}); a poll
 * that sees its job ended settles the job's reservation.
 */
public final class MediaRoutes extends AllDirectives {
  private static final Logger log = LoggerFactory.getLogger(MediaRoutes.class);
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final Shape SHAPE = Shape.OPENAI;

  private final Parts parts;
  private final GatewayAuth auth;
  private final CallServices services;
  private final Route route;

  /** What the media routes, the submit and the poller share. */
  static final class Parts {
    private final MediaSettings settings;
    private final MediaRules rules;
    private final MediaUpstream upstream;
    private final MediaJobIds ids;
    private final MediaSettlement settlement;
    private final MediaListener listener;

    Parts(
        MediaSettings settings,
        MediaRules rules,
        MediaUpstream upstream,
        MediaJobIds ids,
        MediaSettlement settlement,
        MediaListener listener) {
      this.settings = settings;
      this.rules = rules;
      this.upstream = upstream;
      this.ids = ids;
      this.settlement = settlement;
      this.listener = listener;
    }

    MediaListener listener() {
      return listener;
    }

    MediaSettings settings() {
      return settings;
    }

    MediaRules rules() {
      return rules;
    }

    MediaUpstream upstream() {
      return upstream;
    }

    MediaSettlement settlement() {
      return settlement;
    }

    Optional<JsonNode> json(ByteString bytes) {
      try {
        JsonNode node = MAPPER.readTree(bytes.toArrayUnsafe());
        return node != null && node.isObject() ? Optional.of(node) : Optional.empty();
      } catch (IOException e) {
        return Optional.empty();
      }
    }

    /** The provider's job, its id replaced by the gateway's. */
    HttpResponse jobAnswer(int status, ObjectNode job, String providerId, String reservationId) {
      job.put("id", ids.gatewayId(providerId, reservationId));
      return HttpResponse.create()
          .withStatus(status)
          .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, job.toString()));
    }

    /** A provider answer that is not a job (an error): status, body and retry-after as sent. */
    HttpResponse passThrough(MediaUpstream.Answer answer) {
      HttpResponse r =
          HttpResponse.create()
              .withStatus(GatewayErrors.status(answer.status()))
              .withEntity(
                  HttpEntities.create(ContentTypes.APPLICATION_JSON, answer.body().toArray()));
      return answer
          .retryAfter()
          .map(v -> r.addHeader(RawHeader.create("retry-after", v)))
          .orElse(r);
    }

    /** Polls the job and answers it as a GET does (settling it if it ended). */
    CompletionStage<HttpResponse> answerJob(String providerId, String reservationId) {
      return upstream
          .retrieve(providerId)
          .thenCompose(
              answer -> {
                Optional<JsonNode> job = answer.ok() ? json(answer.body()) : Optional.empty();
                if (job.isEmpty()) {
                  return CompletableFuture.completedFuture(passThrough(answer));
                }
                return settlement
                    .seen(reservationId, job.get())
                    .handle((done, failure) -> done)
                    .thenApply(
                        done ->
                            jobAnswer(
                                answer.status(),
                                (ObjectNode) job.get(),
                                providerId,
                                reservationId));
              });
    }
  }

  public MediaRoutes(
      ClassicActorSystemProvider system,
      MediaSettings settings,
      MediaRules rules,
      CallServices services,
      GatewayAuth auth,
      ProviderGuards guards) {
    this(system, settings, rules, services, auth, guards, MediaListener.NONE);
  }

  /** As above, telling {@code listener} (the gateway's meters) of closes and 429s. */
  public MediaRoutes(
      ClassicActorSystemProvider system,
      MediaSettings settings,
      MediaRules rules,
      CallServices services,
      GatewayAuth auth,
      ProviderGuards guards,
      MediaListener listener) {
    this.services = services;
    this.auth = auth;
    this.parts =
        new Parts(
            settings,
            rules,
            new MediaUpstream(system, settings),
            new MediaJobIds(settings.apiKey()),
            new MediaSettlement(services.ledger(), rules.catalog(), listener),
            listener);
    CallPipeline<MediaSubmit.Prepared> submit =
        new CallPipeline<>(new MediaSubmit(parts, services), services, guards, System::nanoTime);
    this.route = settings.enabled() ? build(submit) : reject();
  }

  /** The poller that settles jobs nobody asks about again. */
  public MediaPoller poller(org.apache.pekko.actor.typed.ActorSystem<?> system) {
    return new MediaPoller(system, parts, services.ledger());
  }

  public Route route() {
    return route;
  }

  private Route build(CallPipeline<MediaSubmit.Prepared> submit) {
    Route jobs =
        concat(
            pathEnd(() -> post(() -> extractRequest(r -> completeWithFuture(submit.run(r))))),
            path(
                segment().slash("content"),
                id -> get(() -> extractRequest(r -> completeWithFuture(content(r, id))))),
            path(
                segment(),
                id ->
                    concat(
                        get(() -> extractRequest(r -> completeWithFuture(poll(r, id)))),
                        delete(() -> extractRequest(r -> completeWithFuture(remove(r, id)))))),
            extractRequest(r -> complete(answered(r, notFound("No such route on this gateway.")))));
    return pathPrefix(
        "media",
        () ->
            pathPrefix(
                "v1",
                () ->
                    pathPrefix(
                        "videos",
                        () ->
                            auth.authorized(
                                extractRequest(
                                    r -> complete(answered(r, GatewayErrors.unauthorized(SHAPE)))),
                                jobs))));
  }

  private CompletionStage<HttpResponse> poll(HttpRequest request, String id) {
    return withJob(request, id, ref -> parts.answerJob(ref.providerId(), ref.reservationId()));
  }

  private CompletionStage<HttpResponse> remove(HttpRequest request, String id) {
    return withJob(
        request,
        id,
        ref ->
            parts
                .upstream()
                .delete(ref.providerId())
                .thenApply(
                    answer -> {
                      Optional<JsonNode> body =
                          answer.ok() ? parts.json(answer.body()) : Optional.empty();
                      return body.isPresent()
                          ? parts.jobAnswer(
                              answer.status(),
                              (ObjectNode) body.get(),
                              ref.providerId(),
                              ref.reservationId())
                          : parts.passThrough(answer);
                    }));
  }

  /**
   * The video's bytes as the provider sends them, streamed through: never held whole, and a caller
   * that hangs up cancels the download from the provider.
   */
  private CompletionStage<HttpResponse> content(HttpRequest request, String id) {
    return withJob(
        request,
        id,
        ref ->
            parts
                .upstream()
                .content(ref.providerId())
                .thenApply(
                    upstream -> {
                      HttpResponse out =
                          HttpResponse.create()
                              .withStatus(upstream.status())
                              .withEntity(upstream.entity());
                      Optional<HttpHeader> retry = upstream.getHeader("retry-after");
                      return retry.isPresent() ? out.addHeader(retry.get()) : out;
                    }));
  }

  private interface JobCall {
    CompletionStage<HttpResponse> apply(MediaJobIds.JobRef ref);
  }

  /** A job route: 404 unless the gateway made the id; the provider failing is a 502. */
  private CompletionStage<HttpResponse> withJob(HttpRequest request, String id, JobCall call) {
    Optional<MediaJobIds.JobRef> ref = parts.ids.parse(id);
    if (ref.isEmpty()) {
      return CompletableFuture.completedFuture(
          answered(
              request,
              notFound("No video job with id '" + id + "' was made through this gateway.")));
    }
    return call.apply(ref.get())
        .exceptionally(
            failure -> {
              log.warn("media provider call failed: {}", failure.toString());
              return GatewayErrors.error(
                  SHAPE, 502, "upstream_unavailable", "The media provider did not answer.");
            })
        .thenApply(response -> answered(request, response));
  }

  private static HttpResponse notFound(String message) {
    return GatewayErrors.notFound(SHAPE, message);
  }

  /** Every answer carries the request id and writes one access line (metadata only). */
  private HttpResponse answered(HttpRequest request, HttpResponse response) {
    String requestId =
        SpendHeaders.requestId(name -> request.getHeader(name).map(HttpHeader::value));
    int status = response.status().intValue();
    AccessLog.write(
        AccessRecord.refusedAtTheDoor(
            services.clock().instant(),
            requestId,
            "/media/v1/videos/*",
            "media",
            status,
            status >= 400 ? "status_" + status : null));
    return response.addHeader(RawHeader.create(SpendHeaders.REQUEST_ID, requestId));
  }
}
