package dev.spendgateway.edge.connection;

import java.time.Duration;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.ResponseEntity;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.javadsl.BidiFlow;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.stage.AsyncCallback;
import org.apache.pekko.stream.stage.GraphStageLogic;
import org.apache.pekko.util.ByteString;

/**
 * Closes a connection whose next request line and headers do not arrive in time. Pekko HTTP has no
 * such limit: its idle timeout restarts on every byte, so a client sending one header line every
 * few seconds holds a connection (and, times many, the server) for as long as it likes.
 *
 * <p>Sits per connection between Pekko's HTTP layer and the route, where it sees a request when its
 * head has been parsed and a response when the route answers. The clock runs while no request is
 * being served:
 *
 * <ul>
 *   <li>from the moment the connection is accepted, its first request's line and headers must be in
 *       within {@code firstHead} ({@code gateway.header-read-timeout});
 *   <li>from the moment a response has been written to its end, the next request's head must be in
 *       within {@code nextHead} (the server's idle timeout): a keep-alive connection may wait as
 *       long as Pekko lets an idle one wait, but trickling a head no longer restarts that wait.
 * </ul>
 *
 * When the clock runs out no request is open, so closing the connection cuts nothing; the client
 * sees the connection closed. The body is the routes' business ({@code gateway.body-read-timeout}).
 */
public final class HeaderReadTimeout extends ConnectionStage {

  private static final String CLOCK = "head";

  private final Duration firstHead;
  private final Duration nextHead;

  /**
   * @param nextHead {@code null} when the server has no idle timeout: the next head may take
   *     forever too
   */
  private HeaderReadTimeout(Duration firstHead, Duration nextHead) {
    super("HeaderReadTimeout");
    this.firstHead = firstHead;
    this.nextHead = nextHead;
  }

  /**
   * To join atop a connection's handler flow: requests in on the top, responses out at the bottom.
   */
  public static BidiFlow<HttpRequest, HttpRequest, HttpResponse, HttpResponse, NotUsed> bidi(
      Duration firstHead, Duration nextHead) {
    return BidiFlow.fromGraph(new HeaderReadTimeout(firstHead, nextHead));
  }

  @Override
  public GraphStageLogic createLogic(Attributes inheritedAttributes) {
    return new Logic() {
      /** Requests handed to the route whose response has not been written to its end. */
      private int serving;

      private AsyncCallback<NotUsed> responseWritten;

      @Override
      HttpRequest onRequest(HttpRequest request) {
        cancelTimer(CLOCK);
        serving++;
        return request;
      }

      @Override
      HttpResponse onResponse(HttpResponse response) {
        return watched(response);
      }

      @Override
      public void preStart() {
        responseWritten = createAsyncCallback(ignored -> onResponseWritten());
        scheduleOnce(CLOCK, firstHead);
      }

      /** The response, its end reported back here (a strict one is written at once). */
      private HttpResponse watched(HttpResponse response) {
        ResponseEntity entity = response.entity();
        if (entity.isStrict()) {
          onResponseWritten();
          return response;
        }
        Flow<ByteString, ByteString, Object> watch =
            Flow.of(ByteString.class)
                .watchTermination(
                    (notUsed, done) -> {
                      done.whenComplete(
                          (ok, failure) -> responseWritten.invoke(NotUsed.getInstance()));
                      return (Object) notUsed;
                    });
        return response.withEntity(sameFraming(entity, watch));
      }

      private void onResponseWritten() {
        serving = Math.max(0, serving - 1);
        if (serving == 0 && nextHead != null) {
          scheduleOnce(CLOCK, nextHead);
        }
      }

      @Override
      public void onTimer(Object key) {
        completeStage();
      }
    };
  }

  /**
   * {@code entity} with its bytes through {@code watch}, keeping a declared length: Pekko's plain
   * transform turns a sized entity into a chunked one, which would change what callers receive.
   */
  private static ResponseEntity sameFraming(
      ResponseEntity entity, Flow<ByteString, ByteString, Object> watch) {
    if (entity instanceof org.apache.pekko.http.scaladsl.model.HttpEntity.Default sized) {
      return (ResponseEntity) sized.transformDataBytes(sized.contentLength(), watch.asScala());
    }
    // Every response entity is also Pekko's Scala model, whose transform keeps chunked and
    // close-delimited framing as it is.
    return ((org.apache.pekko.http.scaladsl.model.ResponseEntity) entity)
        .transformDataBytes(watch.asScala());
  }
}
