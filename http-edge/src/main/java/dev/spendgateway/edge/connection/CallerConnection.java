package dev.spendgateway.edge.connection;

import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.AttributeKey;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.stream.Attributes;
import org.apache.pekko.stream.javadsl.BidiFlow;
import org.apache.pekko.stream.stage.GraphStageLogic;

/**
 * Tells a route when its caller's connection has ended. Pekko HTTP does not stop a route whose
 * caller hangs up before the response starts: the route runs on and its answer is dropped. A route
 * that is only waiting (the failover router before a retry, sleeping out a provider's {@code
 * retry-after}) would otherwise go on to call the provider, and bill it, for nobody.
 *
 * <p>Sits per connection between Pekko's HTTP layer and the route and passes everything through
 * unchanged; every request it passes carries {@link #gone}, completed if the connection's stream
 * stops (the caller closed or reset it, or the server closed it) before the route answered that
 * request. Once the route has answered, the signal is dropped and never completes.
 */
public final class CallerConnection extends ConnectionStage {

  /** A request's signal, as a request attribute. */
  private record Signal(CompletionStage<Done> gone) {}

  private static final AttributeKey<Signal> GONE =
      AttributeKey.create("spend-gateway-caller-gone", Signal.class);

  private static final CallerConnection INSTANCE = new CallerConnection();

  private CallerConnection() {
    super("CallerConnection");
  }

  /**
   * To join atop a connection's handler flow: requests in on the top, responses out at the bottom.
   */
  public static BidiFlow<HttpRequest, HttpRequest, HttpResponse, HttpResponse, NotUsed> bidi() {
    return BidiFlow.fromGraph(INSTANCE);
  }

  /**
   * Completes when {@code request}'s connection has ended; empty for a request that did not come
   * through this stage (the h2c listener, a test's request).
   */
  public static Optional<CompletionStage<Done>> gone(HttpRequest request) {
    return request.getAttribute(GONE).map(Signal::gone);
  }

  /** Whether {@code request}'s connection has ended already (false without the signal). */
  public static boolean isGone(HttpRequest request) {
    return gone(request).map(g -> g.toCompletableFuture().isDone()).orElse(false);
  }

  @Override
  public GraphStageLogic createLogic(Attributes inheritedAttributes) {
    return new Logic() {
      /**
       * The signals of the requests handed to the route and not answered yet, oldest first
       * (HTTP/1.1 answers in order). One per request, dropped with its answer: a connection kept
       * open for days does not collect what waited on its earlier requests.
       */
      private final ArrayDeque<CompletableFuture<Done>> open = new ArrayDeque<>();

      @Override
      HttpRequest onRequest(HttpRequest request) {
        CompletableFuture<Done> gone = new CompletableFuture<>();
        open.add(gone);
        return request.addAttribute(GONE, new Signal(gone));
      }

      @Override
      HttpResponse onResponse(HttpResponse response) {
        open.poll(); // answered: nothing waits on its caller's connection any more
        return response;
      }

      @Override
      public void postStop() {
        open.forEach(gone -> gone.complete(Done.getInstance()));
        open.clear();
      }
    };
  }
}
