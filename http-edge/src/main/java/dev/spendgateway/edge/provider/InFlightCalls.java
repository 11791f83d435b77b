package dev.spendgateway.edge.provider;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a shutdown must wait for: streamed answers still flowing to callers, and settles or voids
 * still on their way to the ledger.
 *
 * <p>Why streams are counted here: Pekko HTTP's {@code ServerBinding.terminate} treats a request as
 * done once its response headers are out, so a streamed answer would be cut at shutdown. Waiting
 * for open streams first (bounded by {@code gateway.shutdown-drain}) lets them finish and be
 * settled at their real cost; settles still unanswered when the ledger stops expire later at their
 * worst case — never under-counted.
 */
public final class InFlightCalls {
  private final AtomicInteger streams = new AtomicInteger();
  private final AtomicInteger settlements = new AtomicInteger();

  /** A streamed answer started flowing; pair with {@link #streamEnded()}. */
  public void streamStarted() {
    streams.incrementAndGet();
  }

  public void streamEnded() {
    streams.decrementAndGet();
  }

  /** Counts {@code close} (a settle or void) until it completes, either way; returns it unchanged. */
  public <T> CompletionStage<T> track(CompletionStage<T> close) {
    settlements.incrementAndGet();
    close.whenComplete((reply, failure) -> settlements.decrementAndGet());
    return close;
  }

  /** Completes when no stream is open, or after {@code max}, with the number still open. */
  public CompletionStage<Integer> awaitStreams(Duration max) {
    return awaitZero(streams, max, "streams-drain");
  }

  /** Completes when no settlement is in flight, or after {@code max}, with the number left. */
  public CompletionStage<Integer> awaitSettlements(Duration max) {
    return awaitZero(settlements, max, "settlements-drain");
  }

  private static CompletionStage<Integer> awaitZero(AtomicInteger counter, Duration max, String name) {
    CompletableFuture<Integer> idle = new CompletableFuture<>();
    long deadline = System.nanoTime() + max.toNanos();
    // Shutdown only: a plain polling thread keeps this independent of the actor system stopping.
    Thread waiter = new Thread(() -> {
      while (counter.get() > 0 && System.nanoTime() < deadline) {
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
      idle.complete(counter.get());
    }, name);
    waiter.setDaemon(true);
    waiter.start();
    return idle;
  }
}
