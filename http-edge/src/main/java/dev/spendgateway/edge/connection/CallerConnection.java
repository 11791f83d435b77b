package dev.spendgateway.edge.connection;

import java.util.ArrayDeque;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.AttributeKey;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.ResponseEntity;
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
 * request, or after its answer reached the connection but before the answer's body started (Pekko
 * HTTP drops such an answer without running its body, so whoever waits for that body's end must
 * learn it here). Once the answer's body has started ({@link #bodyStarted}), or the answer had none
 * to run, the signal is dropped and never completes.
 */
public final class CallerConnection extends ConnectionStage {

  /** A request's signal, as a request attribute; {@code bodyStarted} set once its answer's runs. */
  private record Signal(CompletableFuture<Done> gone, AtomicBoolean bodyStarted) {
    Signal() {
      this(new CompletableFuture<>(), new AtomicBoolean());
    }
  }

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
    return request.getAttribute(GONE).<CompletionStage<Done>>map(Signal::gone);
  }

  /**
   * Called when the body of {@code request}'s answer starts to run: from then on its end is seen on
   * the body itself, and the connection no longer keeps the signal.
   */
  public static void bodyStarted(HttpRequest request) {
    request.getAttribute(GONE).ifPresent(signal -> signal.bodyStarted().set(true));
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
       * (HTTP/1.1 answers in order).
       */
      private final ArrayDeque<Signal> open = new ArrayDeque<>();

      /**
       * The signals of answers handed on to Pekko HTTP whose body has not started yet: if the
       * connection ends now, that body never runs. Trimmed at every answer, so a connection kept
       * open for days holds at most the few answers still being written, not its whole history.
       */
      private final ArrayDeque<Signal> unstarted = new ArrayDeque<>();

      @Override
      HttpRequest onRequest(HttpRequest request) {
        Signal signal = new Signal();
        open.add(signal);
        return request.addAttribute(GONE, signal);
      }

      @Override
      HttpResponse onResponse(HttpResponse response) {
        Signal answered = open.poll();
        unstarted.removeIf(signal -> signal.bodyStarted().get());
        ResponseEntity entity = response.entity();
        if (answered != null && !entity.isStrict() && !entity.isKnownEmpty()) {
          unstarted.add(answered);
        }
        return response;
      }

      @Override
      public void postStop() {
        // Oldest first: the answered-but-unwritten ones came before those still unanswered.
        unstarted.forEach(signal -> signal.gone().complete(Done.getInstance()));
        open.forEach(signal -> signal.gone().complete(Done.getInstance()));
        open.clear();
        unstarted.clear();
      }
    };
  }
}
