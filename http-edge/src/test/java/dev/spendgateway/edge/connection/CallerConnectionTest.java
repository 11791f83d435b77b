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
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * A connection's requests, through {@link CallerConnection} to a route that answers the first and
 * is still working on the second when the caller resets the connection: only the unanswered
 * request's signal fires, and the answered one's is dropped (never fires).
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

  @Test
  void aRequestThatDidNotComeThroughItHasNoSignal() {
    assertTrue(CallerConnection.gone(HttpRequest.create("/")).isEmpty());
    assertFalse(CallerConnection.isGone(HttpRequest.create("/")));
  }
}
