package dev.spendgateway.edge.connection;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.testkit.Eventually;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A connection's requests, through {@link CallerConnection} to a route that answers the first and
 * is still working on the second when the caller resets the connection: only the unanswered
 * request's signal fires, and the answered one's is dropped (never fires), unless its answer's body
 * had not started yet.
 */
class CallerConnectionTest {
  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final Materializer MAT = Materializer.matFromSystem(testKit.system());

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @Test
  void onlyARequestStillUnansweredWhenTheConnectionIsResetIsToldItsCallerIsGone() throws Exception {
    List<CompletionStage<Done>> signals = new CopyOnWriteArrayList<>();
    List<HttpRequest> requests = new CopyOnWriteArrayList<>();
    CompletableFuture<HttpResponse> stillWorking = new CompletableFuture<>();
    Flow<HttpRequest, HttpResponse, NotUsed> route =
        Flow.<HttpRequest>create()
            .mapAsync(
                1,
                request -> {
                  requests.add(request);
                  signals.add(CallerConnection.gone(request).orElseThrow());
                  return signals.size() == 1
                      ? CompletableFuture.completedFuture(HttpResponse.create())
                      : stillWorking;
                });
    AtomicInteger answered = new AtomicInteger();
    CompletableFuture<Optional<HttpRequest>> connection =
        Source.from(List.of(HttpRequest.create("/first"), HttpRequest.create("/second")))
            .concatMat(Source.<HttpRequest>maybe(), Keep.right())
            .via(CallerConnection.bidi().join(route))
            .to(Sink.foreach(response -> answered.incrementAndGet()))
            .run(MAT);
    Eventually.until(
        "both signals came and the call was answered once",
        Duration.ofSeconds(5),
        () -> signals.size() == 2 && answered.get() == 1);

    connection.completeExceptionally(new IOException("Connection reset by peer"));

    signals.get(1).toCompletableFuture().get(5, TimeUnit.SECONDS);
    assertTrue(CallerConnection.isGone(requests.get(1)));
    assertFalse(CallerConnection.isGone(requests.get(0)));
    assertFalse(signals.get(0).toCompletableFuture().isDone(), "the answered request's is dropped");
    assertEquals(1, answered.get());
  }

  /**
   * An answer whose body Pekko HTTP had not started when the connection ended is never run: its
   * request is told too (whoever waits for that body's end would wait for ever). An answer whose
   * body started is not: its own end is seen on the body.
   */
  @Test
  void anAnswerWhoseBodyNeverStartedBeforeTheResetIsToldItsCallerIsGone() throws Exception {
    List<HttpRequest> requests = new CopyOnWriteArrayList<>();
    CompletableFuture<HttpResponse> stillWorking = new CompletableFuture<>();
    Flow<HttpRequest, HttpResponse, NotUsed> route =
        Flow.<HttpRequest>create()
            .mapAsync(
                1,
                request -> {
                  requests.add(request);
                  HttpResponse streamed =
                      HttpResponse.create()
                          .withEntity(
                              HttpEntities.createChunked(
                                  ContentTypes.TEXT_PLAIN_UTF8,
                                  Source.single(ByteString.fromString("data"))));
                  if (requests.size() == 1) {
                    CallerConnection.bodyStarted(request); // as the answer's own watcher does
                  }
                  return requests.size() < 3
                      ? CompletableFuture.completedFuture(streamed)
                      : stillWorking;
                });
    AtomicInteger answered = new AtomicInteger();
    CompletableFuture<Optional<HttpRequest>> connection =
        Source.from(
                List.of(
                    HttpRequest.create("/started"),
                    HttpRequest.create("/never-started"),
                    HttpRequest.create("/unanswered")))
            .concatMat(Source.<HttpRequest>maybe(), Keep.right())
            .via(CallerConnection.bidi().join(route))
            .to(Sink.foreach(response -> answered.incrementAndGet()))
            .run(MAT);
    Eventually.until(
        "three requests came and two were answered",
        Duration.ofSeconds(5),
        () -> requests.size() == 3 && answered.get() == 2);

    connection.completeExceptionally(new IOException("Connection reset by peer"));

    CallerConnection.gone(requests.get(2))
        .orElseThrow()
        .toCompletableFuture()
        .get(5, TimeUnit.SECONDS);
    // Told on the stage's own thread, maybe just after the unanswered one: wait for it too.
    CallerConnection.gone(requests.get(1))
        .orElseThrow()
        .toCompletableFuture()
        .get(5, TimeUnit.SECONDS);
    assertTrue(CallerConnection.isGone(requests.get(1)), "answered, body never run");
    assertFalse(CallerConnection.isGone(requests.get(0)), "answered, body started");
  }

  @Test
  void aRequestThatDidNotComeThroughItHasNoSignal() {
    assertTrue(CallerConnection.gone(HttpRequest.create("/")).isEmpty());
    assertFalse(CallerConnection.isGone(HttpRequest.create("/")));
  }
}
