package dev.spendgateway.edge.connection;

import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.stream.BidiShape;
import org.apache.pekko.stream.Inlet;
import org.apache.pekko.stream.Outlet;
import org.apache.pekko.stream.stage.AbstractInHandler;
import org.apache.pekko.stream.stage.AbstractOutHandler;
import org.apache.pekko.stream.stage.GraphStage;
import org.apache.pekko.stream.stage.TimerGraphStageLogic;

/**
 * A stage that sits per connection between Pekko's HTTP layer and the route and passes every
 * request and response through, one for one, watching them on the way: requests in on the top,
 * responses out at the bottom. A subclass says what it does with each ({@link Logic#onRequest},
 * {@link Logic#onResponse}); the pulling and the completion are written here once.
 */
abstract class ConnectionStage
    extends GraphStage<BidiShape<HttpRequest, HttpRequest, HttpResponse, HttpResponse>> {
  private final Inlet<HttpRequest> requestIn;
  private final Outlet<HttpRequest> requestOut;
  private final Inlet<HttpResponse> responseIn;
  private final Outlet<HttpResponse> responseOut;
  private final BidiShape<HttpRequest, HttpRequest, HttpResponse, HttpResponse> shape;

  /**
   * @param name the stage's name in its ports' names
   */
  ConnectionStage(String name) {
    requestIn = Inlet.create(name + ".requestIn");
    requestOut = Outlet.create(name + ".requestOut");
    responseIn = Inlet.create(name + ".responseIn");
    responseOut = Outlet.create(name + ".responseOut");
    shape = new BidiShape<>(requestIn, requestOut, responseIn, responseOut);
  }

  @Override
  public final BidiShape<HttpRequest, HttpRequest, HttpResponse, HttpResponse> shape() {
    return shape;
  }

  /** The per-connection logic: passes each request and response on as its hook returns it. */
  abstract class Logic extends TimerGraphStageLogic {
    Logic() {
      super(shape);
      setHandler(
          requestIn,
          new AbstractInHandler() {
            @Override
            public void onPush() {
              push(requestOut, onRequest(grab(requestIn)));
            }

            @Override
            public void onUpstreamFinish() {
              // A half-close after the last request: its response may still be written.
              complete(requestOut);
            }
          });
      setHandler(
          requestOut,
          new AbstractOutHandler() {
            @Override
            public void onPull() {
              pull(requestIn);
            }

            @Override
            public void onDownstreamFinish(Throwable cause) {
              cancel(requestIn, cause);
            }
          });
      setHandler(
          responseIn,
          new AbstractInHandler() {
            @Override
            public void onPush() {
              push(responseOut, onResponse(grab(responseIn)));
            }
          });
      setHandler(
          responseOut,
          new AbstractOutHandler() {
            @Override
            public void onPull() {
              pull(responseIn);
            }
          });
    }

    /** A request on its way to the route; what it returns goes there. */
    abstract HttpRequest onRequest(HttpRequest request);

    /** The route's response on its way to the caller; what it returns goes there. */
    abstract HttpResponse onResponse(HttpResponse response);
  }
}
