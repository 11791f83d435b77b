package dev.spendgateway.edge.media;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpMethod;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.Authorization;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.util.ByteString;

/**
 * The media provider's job API, with the media key added on the way out and nothing else of the
 * caller's: no caller header reaches the provider. JSON answers are read whole (they are small);
 * content is handed back as a stream.
 */
final class MediaUpstream {
  private final Http http;
  private final MediaSettings settings;
  private final Materializer materializer;

  MediaUpstream(ClassicActorSystemProvider system, MediaSettings settings) {
    this.http = Http.get(system.classicSystem());
    this.settings = settings;
    this.materializer = Materializer.matFromSystem(system);
  }

  /** A JSON answer of the provider, read whole. */
  record Answer(int status, Optional<String> retryAfter, ByteString body) {
    boolean ok() {
      return status >= 200 && status < 300;
    }
  }

  /** A submit: a JSON body, or a multipart form carrying an {@code input_reference} image. */
  CompletionStage<Answer> submit(HttpEntity.Strict body) {
    return answer(request(HttpMethods.POST, "/v1/videos").withEntity(body));
  }

  CompletionStage<Answer> retrieve(String providerId) {
    return answer(request(HttpMethods.GET, "/v1/videos/" + providerId));
  }

  CompletionStage<Answer> delete(String providerId) {
    return answer(request(HttpMethods.DELETE, "/v1/videos/" + providerId));
  }

  /** The content answer as it arrives: its bytes are streamed to the caller, never held whole. */
  CompletionStage<HttpResponse> content(String providerId) {
    return http.singleRequest(request(HttpMethods.GET, "/v1/videos/" + providerId + "/content"));
  }

  private HttpRequest request(HttpMethod method, String path) {
    return HttpRequest.create(settings.baseUrl() + path)
        .withMethod(method)
        .addHeader(Authorization.oauth2(settings.apiKey()));
  }

  private CompletionStage<Answer> answer(HttpRequest request) {
    Duration timeout = settings.requestTimeout();
    return http.singleRequest(request)
        .thenCompose(
            response ->
                response
                    .entity()
                    .toStrict(timeout.toMillis(), materializer)
                    .thenApply(
                        strict ->
                            new Answer(
                                response.status().intValue(),
                                response.getHeader("retry-after").map(h -> h.value()),
                                strict.getData())))
        .toCompletableFuture()
        .orTimeout(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
  }
}
