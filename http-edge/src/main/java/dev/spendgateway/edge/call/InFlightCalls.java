package dev.spendgateway.edge.call;

import dev.spendgateway.edge.connection.CallerConnection;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.ResponseEntity;
import org.apache.pekko.http.javadsl.server.Complete;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.server.RouteResult;
import org.apache.pekko.http.javadsl.server.RouteResults;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.util.ByteString;

/**
 * What a shutdown must wait for: answers still on their way to callers (a streamed one until its
 * last byte), and settles or voids still on their way to the ledger.
 *
 * <p>Why answers are counted here rather than left to Pekko HTTP: {@code ServerBinding.terminate}
 * treats a request as done once its response headers are out, and the actor system stops right
 * after, so a streamed answer would be cut at shutdown. An answer counts from the moment its route
 * starts (a call still waiting for the ledger or for the provider's headers is in flight too) until
 * its entity has been handed to the connection in full, or the caller left. Waiting for them first
 * (bounded by {@code gateway.shutdown-drain}) lets them finish and be settled at their real cost;
 * settles still unanswered when the ledger stops expire later at their worst case — never
 * under-counted.
 */
public final class InFlightCalls {
  private final AtomicInteger answers = new AtomicInteger();
  private final AtomicInteger settlements = new AtomicInteger();

  /**
   * Counts every answer of {@code inner} from the start of its route to the end of its entity.
   * {@code inner} is sealed here (rejections and exceptions become responses, as the binding would
   * make them), so every request ends in exactly one response and one decrement. The result is
   * mapped on the route's own execution context (synchronously when it is already complete): a
   * {@code CompletionStage} callback here would hop to the JDK's common pool twice per request.
   */
  public Route tracking(Supplier<Route> inner) {
    return tracking(inner, Integer.MAX_VALUE, null);
  }

  /**
   * {@link #tracking(Supplier)}, and a provider or router call that arrives while {@code
   * maxOpenCalls} answers are open gets {@code whenFull} instead (answered at once, not counted):
   * the node's limit on calls held open, reached before Pekko's connection limit, which would leave
   * a caller unanswered in the kernel's backlog. Other routes (health, metrics, the ledger API) are
   * always served.
   */
  public Route tracking(Supplier<Route> inner, int maxOpenCalls, Route whenFull) {
    // Built once: the per-request lambda only counts and wraps this route in one small mapping.
    Route sealed = inner.get().seal();
    return Directives.extractRequest(
        request -> {
          if (answers.incrementAndGet() > maxOpenCalls && Overload.isProviderCall(request)) {
            answers.decrementAndGet();
            return whenFull;
          }
          Optional<CompletionStage<Done>> callerGone = CallerConnection.gone(request);
          return Directives.mapRouteResult(
              routed -> endWithEntity(routed, request, callerGone), () -> sealed);
        });
  }

  /** Open answers right now (for tests and the drain log). */
  public int openAnswers() {
    return answers.get();
  }

  /**
   * Ends the count when the answer's entity has been run to its end, or at once for a strict one. A
   * caller that hung up before its response reached the connection never gets it: Pekko HTTP drops
   * that response without running its entity, so its end would never be seen and the answer would
   * count for ever (every provider call a 503 {@code open_calls} after {@code max-open-calls} such
   * hang-ups, every shutdown waiting out its drain). {@code callerGone} completes only for a
   * request whose connection ended before its entity started (still unanswered, or answered but not
   * yet written); the entity not started by then never will be. (A streamed answer's own count is
   * not lost with it: its meter drains and settles without a reader.)
   */
  private RouteResult endWithEntity(
      RouteResult routed, HttpRequest request, Optional<CompletionStage<Done>> callerGone) {
    if (!(routed instanceof Complete complete)) {
      answers.decrementAndGet(); // a rejection: cannot come out of a sealed route, but never leak a
      // count
      return routed;
    }
    HttpResponse response = complete.getResponse();
    ResponseEntity entity = response.entity();
    if (entity.isStrict() || entity.isKnownEmpty()) {
      answers.decrementAndGet();
      return routed;
    }
    // The entity may be run at most once, but guard anyway: one answer, one decrement.
    AtomicBoolean ended = new AtomicBoolean();
    AtomicBoolean started = new AtomicBoolean();
    Runnable end =
        () -> {
          if (ended.compareAndSet(false, true)) {
            answers.decrementAndGet();
          }
        };
    // Every javadsl entity is a scaladsl one; only the latter can wrap its bytes and keep its kind
    // (chunked stays chunked, a known length stays known).
    ResponseEntity watched =
        ((org.apache.pekko.http.scaladsl.model.ResponseEntity) entity)
            .transformDataBytes(
                Flow.<ByteString>create()
                    .watchTermination(Keep.right())
                    .<Object>mapMaterializedValue(
                        done -> {
                          started.set(true);
                          CallerConnection.bodyStarted(request);
                          done.whenComplete((ok, error) -> end.run());
                          return NotUsed.getInstance();
                        })
                    .asScala());
    callerGone.ifPresent(
        gone ->
            gone.thenRun(
                () -> {
                  if (!started.get()) {
                    end.run();
                  }
                }));
    return RouteResults.complete(response.withEntity(watched));
  }

  /**
   * Counts {@code close} (a settle or void) until it completes, either way; returns it unchanged.
   */
  public <T> CompletionStage<T> track(CompletionStage<T> close) {
    settlements.incrementAndGet();
    close.whenComplete((reply, failure) -> settlements.decrementAndGet());
    return close;
  }

  /**
   * A settle that will be started later (when a stream ends) counts from now; run the returned
   * ticket once that settle has been started through {@link #track}, so the count never drops to
   * zero in between.
   */
  public Runnable settlementExpected() {
    settlements.incrementAndGet();
    AtomicBoolean once = new AtomicBoolean();
    return () -> {
      if (once.compareAndSet(false, true)) {
        settlements.decrementAndGet();
      }
    };
  }

  /** Completes when no answer is open, or after {@code max}, with the number still open. */
  public CompletionStage<Integer> awaitAnswers(Duration max) {
    return awaitZero(answers, max, "answers-drain");
  }

  /** Completes when no settlement is in flight, or after {@code max}, with the number left. */
  public CompletionStage<Integer> awaitSettlements(Duration max) {
    return awaitZero(settlements, max, "settlements-drain");
  }

  private static CompletionStage<Integer> awaitZero(
      AtomicInteger counter, Duration max, String name) {
    CompletableFuture<Integer> idle = new CompletableFuture<>();
    long deadline = System.nanoTime() + max.toNanos();
    // Shutdown only: a plain polling thread keeps this independent of the actor system stopping.
    Thread waiter =
        new Thread(
            () -> {
              while (counter.get() > 0 && System.nanoTime() < deadline) {
                try {
                  Thread.sleep(20);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                  break;
                }
              }
              idle.complete(counter.get());
            },
            name);
    waiter.setDaemon(true);
    waiter.start();
    return idle;
  }
}
