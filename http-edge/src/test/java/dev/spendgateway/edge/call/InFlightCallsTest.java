package dev.spendgateway.edge.call;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.japi.function.Function;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.OverflowStrategy;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.stream.javadsl.SourceQueueWithComplete;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * The shutdown drain counts an answer from the start of its route until its last byte is handed on:
 * a streamed answer stays open after its headers, a strict one ends with its response.
 */
class InFlightCallsTest {
  private static final ActorTestKit kit = ActorTestKit.create();
  private static final Materializer mat = Materializer.matFromSystem(kit.system());

  @AfterAll
  static void stop() {
    kit.shutdownTestKit();
  }

  private static Function<HttpRequest, CompletionStage<HttpResponse>> handler(
      InFlightCalls inFlight, Route inner) {
    return inFlight.tracking(() -> inner).seal().handler(kit.system());
  }

  @Test
  void aStreamedAnswerStaysOpenUntilItsEntityHasBeenReadToTheEnd() throws Exception {
    InFlightCalls inFlight = new InFlightCalls();
    Pair<SourceQueueWithComplete<ByteString>, Source<ByteString, NotUsed>> queue =
        Source.<ByteString>queue(8, OverflowStrategy.backpressure()).preMaterialize(mat);
    Route streaming =
        complete(
            HttpResponse.create()
                .withEntity(
                    HttpEntities.createChunked(ContentTypes.TEXT_PLAIN_UTF8, queue.second())));

    HttpResponse response =
        handler(inFlight, streaming)
            .apply(HttpRequest.create("/"))
            .toCompletableFuture()
            .get(5, TimeUnit.SECONDS);
    assertEquals(1, inFlight.openAnswers(), "headers out, body still to come");

    var body =
        response
            .entity()
            .getDataBytes()
            .runWith(Sink.fold(ByteString.emptyByteString(), ByteString::concat), mat);
    queue.first().offer(ByteString.fromString("data: one\n\n"));
    assertEquals(1, inFlight.openAnswers(), "still streaming");
    queue.first().complete();
    assertEquals("data: one\n\n", body.toCompletableFuture().get(5, TimeUnit.SECONDS).utf8String());
    assertEquals(
        0,
        inFlight
            .awaitAnswers(Duration.ofSeconds(5))
            .toCompletableFuture()
            .get(6, TimeUnit.SECONDS));
  }

  @Test
  void aStreamedAnswerTheCallerLeftIsNoLongerOpen() throws Exception {
    InFlightCalls inFlight = new InFlightCalls();
    Route endless =
        complete(
            HttpResponse.create()
                .withEntity(
                    HttpEntities.createChunked(
                        ContentTypes.TEXT_PLAIN_UTF8,
                        Source.repeat(ByteString.fromString("x"))
                            .throttle(1, Duration.ofMillis(10)))));

    HttpResponse response =
        handler(inFlight, endless)
            .apply(HttpRequest.create("/"))
            .toCompletableFuture()
            .get(5, TimeUnit.SECONDS);
    response
        .entity()
        .getDataBytes()
        .take(3)
        .runWith(Sink.ignore(), mat)
        .toCompletableFuture()
        .get(5, TimeUnit.SECONDS);
    assertEquals(
        0,
        inFlight
            .awaitAnswers(Duration.ofSeconds(5))
            .toCompletableFuture()
            .get(6, TimeUnit.SECONDS));
  }

  @Test
  void strictAnswersAndRejectionsEndWithTheirResponse() throws Exception {
    InFlightCalls inFlight = new InFlightCalls();
    Route strict = path("strict", () -> complete("done"));
    var handler = handler(inFlight, strict);

    assertEquals(
        200,
        handler
            .apply(HttpRequest.create("/strict"))
            .toCompletableFuture()
            .get(5, TimeUnit.SECONDS)
            .status()
            .intValue());
    assertEquals(0, inFlight.openAnswers());
    assertEquals(
        404,
        handler
            .apply(HttpRequest.create("/elsewhere"))
            .toCompletableFuture()
            .get(5, TimeUnit.SECONDS)
            .status()
            .intValue());
    assertEquals(0, inFlight.openAnswers());
  }

  @Test
  void anExpectedSettlementCountsUntilItsTicketIsUsedOnce() throws Exception {
    InFlightCalls inFlight = new InFlightCalls();
    Runnable ticket = inFlight.settlementExpected();
    assertEquals(
        1,
        inFlight
            .awaitSettlements(Duration.ofMillis(50))
            .toCompletableFuture()
            .get(2, TimeUnit.SECONDS));
    ticket.run();
    ticket.run(); // a second use must not drive the count below zero
    assertEquals(
        0,
        inFlight
            .awaitSettlements(Duration.ofMillis(50))
            .toCompletableFuture()
            .get(2, TimeUnit.SECONDS));
    Runnable another = inFlight.settlementExpected();
    assertEquals(
        1,
        inFlight
            .awaitSettlements(Duration.ofMillis(50))
            .toCompletableFuture()
            .get(2, TimeUnit.SECONDS));
    another.run();
  }
}
