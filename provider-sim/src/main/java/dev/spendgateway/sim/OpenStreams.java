package dev.spendgateway.sim;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * How many streamed answers the simulator is sending right now, the most at once since start (or
 * the last reset), and how each ended: what a capacity test reads to prove N streams were really
 * open upstream at the same time, and how many of them the client read to their end.
 */
final class OpenStreams {
  private final AtomicInteger open = new AtomicInteger();
  private final AtomicInteger peak = new AtomicInteger();
  private final AtomicLong finished = new AtomicLong();
  private final AtomicLong cut = new AtomicLong();

  /**
   * Streams waiting at their hold now. A stream is counted open from its first pull but reaches its
   * hold only once its head is sent; a release between the two misses it, so whoever releases waits
   * for this count, not the open one.
   */
  private final AtomicInteger holding = new AtomicInteger();

  /** What held streams ({@link Fault.StreamHold}) wait for; replaced by a fresh one on release. */
  private final AtomicReference<CompletableFuture<Done>> held =
      new AtomicReference<>(new CompletableFuture<>());

  /** What the counters say now. */
  record Snapshot(int open, int peak, long finished, long cut, int held) {}

  /**
   * {@code body}, counted as open from its first pull until it ends: {@code finished} when all of
   * it was sent, {@code cut} when it failed or the client went away first.
   */
  Source<ByteString, NotUsed> counted(Source<ByteString, NotUsed> body) {
    return body.watchTermination(
        (mat, done) -> {
          peak.accumulateAndGet(open.incrementAndGet(), Math::max);
          done.whenComplete(
              (d, failure) -> {
                open.decrementAndGet();
                (failure == null ? finished : cut).incrementAndGet();
              });
          return NotUsed.getInstance();
        });
  }

  /**
   * Completes on the next release or when {@code orElse} does, whichever is first; the stream
   * counts as held until then.
   */
  CompletionStage<Done> hold(CompletionStage<Done> orElse) {
    // The release to wait for is read before the stream counts as held: counted first, a release
    // between the two would find the count complete and still miss this stream.
    CompletableFuture<Done> release = held.get();
    holding.incrementAndGet();
    CompletionStage<Done> over = release.applyToEither(orElse, d -> d);
    over.whenComplete((d, failure) -> holding.decrementAndGet());
    return over;
  }

  /** Lets every stream held now go on; streams held later wait for the next release. */
  void releaseHeld() {
    held.getAndSet(new CompletableFuture<>()).complete(Done.getInstance());
  }

  Snapshot snapshot() {
    return new Snapshot(open.get(), peak.get(), finished.get(), cut.get(), holding.get());
  }

  /** Peak back to what is open now; the ended counts to 0. */
  void reset() {
    peak.set(open.get());
    finished.set(0);
    cut.set(0);
  }
}
