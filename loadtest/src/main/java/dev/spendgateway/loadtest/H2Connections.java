package dev.spendgateway.loadtest;

import com.typesafe.config.ConfigFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.ResponseFuture;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.stream.BoundedSourceQueue;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.QueueOfferResult;
import org.apache.pekko.stream.javadsl.Framing;
import org.apache.pekko.stream.javadsl.FramingTruncation;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * K HTTP/2 connections with prior knowledge (h2c) to the gateway's HTTP/2 listener, as a proxy in
 * front of it would hold them: call i goes on connection i mod K, so each carries at most
 * ceil(calls / K) streams at once (keep that within the gateway's {@code
 * pekko.http.server.http2.max-concurrent-streams}). Responses are matched to their requests by
 * Pekko's request-response association, since HTTP/2 answers in any order.
 */
final class H2Connections implements AutoCloseable {
  private final ActorSystem system;
  private final Materializer materializer;
  private final List<BoundedSourceQueue<HttpRequest>> connections = new ArrayList<>();
  private final String base;
  private final AtomicInteger next = new AtomicInteger();

  /**
   * @param queueSize calls that may wait on one connection for a stream slot (the peer's
   *     max-concurrent-streams) before an offer is refused
   */
  H2Connections(String host, int port, int count, int queueSize) {
    // The client's own timers off: a held stream is silent for minutes, and with every stream on
    // a connection silent the whole connection is; the gateway's timers are what is measured.
    // Pekko's log off: stdout carries the summary.
    this.system =
        ActorSystem.create(
            "loadtest-h2",
            ConfigFactory.parseMap(
                    Map.of(
                        "pekko.http.client.idle-timeout", "infinite",
                        "pekko.loglevel", "OFF",
                        "pekko.stdout-loglevel", "OFF",
                        "pekko.log-dead-letters", "off"))
                .withFallback(ConfigFactory.defaultReference()));
    this.materializer = Materializer.matFromSystem(system);
    this.base = "http://" + host + ":" + port;
    for (int i = 0; i < count; i++) {
      connections.add(
          Source.<HttpRequest>queue(queueSize)
              .via(Http.get(system).connectionTo(host).toPort(port).http2WithPriorKnowledge())
              .to(
                  Sink.foreach(
                      r -> r.getAttribute(ResponseFuture.KEY()).get().future().complete(r)))
              .run(materializer));
    }
  }

  /** A POST of {@code json} to {@code path} with {@code headers}, on the next connection. */
  CompletionStage<HttpResponse> post(String path, Map<String, String> headers, String json) {
    List<HttpHeader> list = new ArrayList<>();
    headers.forEach((k, v) -> list.add(RawHeader.create(k, v)));
    HttpRequest request =
        HttpRequest.create(base + path)
            .withMethod(HttpMethods.POST)
            .withHeaders(list)
            .withEntity(ContentTypes.APPLICATION_JSON, json);
    CompletableFuture<HttpResponse> answer = new CompletableFuture<>();
    BoundedSourceQueue<HttpRequest> connection =
        connections.get(Math.floorMod(next.getAndIncrement(), connections.size()));
    QueueOfferResult offered =
        connection.offer(request.addAttribute(ResponseFuture.KEY(), new ResponseFuture(answer)));
    if (offered != QueueOfferResult.enqueued()) {
      answer.completeExceptionally(new IllegalStateException("h2 connection queue: " + offered));
    }
    return answer;
  }

  /**
   * The response body, line by line (SSE lines, {@code \r} stripped); completes when it ends,
   * exceptionally when it was cut.
   */
  CompletionStage<?> lines(HttpResponse response, Consumer<String> line) {
    return response
        .entity()
        .getDataBytes()
        .via(
            Framing.delimiter(
                ByteString.fromString("\n"), 16 * 1024 * 1024, FramingTruncation.ALLOW))
        .map(
            bytes -> {
              String s = bytes.utf8String();
              return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
            })
        .runWith(Sink.foreach(line::accept), materializer);
  }

  @Override
  public void close() {
    connections.forEach(BoundedSourceQueue::complete);
    system.terminate();
  }
}
