package dev.spendgateway.upstream.client;

import dev.spendgateway.upstream.Fixtures;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Source;

/** A tiny provider stand-in on 127.0.0.1:0 that records what reached it. */
final class StubProvider implements AutoCloseable {

  /** One request as the provider saw it. */
  record Seen(String path, List<HttpHeader> headers, String body) {
    String header(String lowercaseName) {
      return headers.stream()
          .filter(h -> h.lowercaseName().equals(lowercaseName))
          .map(HttpHeader::value)
          .findFirst()
          .orElse(null);
    }
  }

  final BlockingQueue<Seen> seen = new LinkedBlockingQueue<>();
  private final ActorSystem<?> system;
  private final Materializer mat;
  private final ServerBinding binding;

  StubProvider(ActorSystem<?> system) throws Exception {
    this.system = system;
    this.mat = Materializer.matFromSystem(system);
    this.binding =
        Http.get(system)
            .newServerAt("127.0.0.1", 0)
            .bind(this::handle)
            .toCompletableFuture()
            .get(5, TimeUnit.SECONDS);
  }

  String baseUrl() {
    return "http://127.0.0.1:" + binding.localAddress().getPort();
  }

  Seen next() throws InterruptedException {
    return seen.poll(5, TimeUnit.SECONDS);
  }

  private CompletionStage<HttpResponse> handle(HttpRequest request) {
    return request
        .entity()
        .toStrict(5_000, mat)
        .thenCompose(
            strict -> {
              String path = request.getUri().path();
              seen.add(new Seen(path, copy(request.getHeaders()), strict.getData().utf8String()));
              return respond(path);
            });
  }

  private CompletionStage<HttpResponse> respond(String path) {
    return switch (path) {
      case "/v1/messages" -> CompletableFuture.completedFuture(anthropicStream());
      case "/v1/chat/completions" -> CompletableFuture.completedFuture(rateLimited());
      case "/slow" -> later(Duration.ofSeconds(3), HttpResponse.create());
      default -> CompletableFuture.completedFuture(HttpResponse.create().withStatus(404));
    };
  }

  private static HttpResponse anthropicStream() {
    return HttpResponse.create()
        .withHeaders(
            List.of(
                RawHeader.create("request-id", "req_stub_1"),
                RawHeader.create("anthropic-ratelimit-requests-remaining", "99"),
                RawHeader.create("anthropic-organization-id", "org-secret"),
                RawHeader.create("Set-Cookie", "tracking=1")))
        .withEntity(
            HttpEntities.create(
                ContentTypes.create(MediaTypes.TEXT_EVENT_STREAM),
                Source.from(Fixtures.chunks(Fixtures.bytes(Fixtures.ANTHROPIC), 64))));
  }

  private static HttpResponse rateLimited() {
    return HttpResponse.create()
        .withStatus(429)
        .withHeaders(
            List.of(
                RawHeader.create("retry-after", "7"),
                RawHeader.create("x-request-id", "req_stub_2"),
                RawHeader.create("Set-Cookie", "tracking=1")))
        .withEntity(
            HttpEntities.create(
                ContentTypes.APPLICATION_JSON,
                "{\"error\":{\"message\":\"Rate limit reached\",\"type\":\"requests\"}}"));
  }

  private CompletionStage<HttpResponse> later(Duration delay, HttpResponse response) {
    CompletableFuture<HttpResponse> future = new CompletableFuture<>();
    system
        .scheduler()
        .scheduleOnce(delay, () -> future.complete(response), system.executionContext());
    return future;
  }

  private static List<HttpHeader> copy(Iterable<HttpHeader> headers) {
    java.util.ArrayList<HttpHeader> list = new java.util.ArrayList<>();
    headers.forEach(list::add);
    return list;
  }

  @Override
  public void close() throws Exception {
    binding.unbind().toCompletableFuture().get(5, TimeUnit.SECONDS);
  }
}
