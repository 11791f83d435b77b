package dev.spendgateway.edge.body;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.http.javadsl.model.HttpEntity;

/**
 * The bytes of caller request bodies the provider routes and the router hold in memory at once
 * ({@code gateway.body-memory-share} of the heap). A body is read whole before it is vetted (the
 * policy must see all of it) and kept until the provider's answer starts (a request whose
 * connection was refused is sent again), so a 25 MiB transcription upload is 25 MiB of heap for
 * that long, and nothing else bounds how many arrive at once: 24 such uploads on a 512 MiB heap ran
 * the JVM out of memory, and the node died with every open stream and held reservation on it.
 *
 * <p>A call takes its body's share before a byte of the body is read and gives it back when its
 * answer is handed over; a call that would take the total past the limit is refused at once (503
 * with retry-after, {@code body_memory}), so nothing is read, reserved or sent. One call always
 * gets through while nothing is held, so a limit below the largest body never refuses every upload.
 */
public final class BodyMemory {
  private final long limitBytes;
  private final AtomicLong held = new AtomicLong();

  public BodyMemory(long limitBytes) {
    if (limitBytes <= 0) {
      throw new IllegalArgumentException("limitBytes must be > 0");
    }
    this.limitBytes = limitBytes;
  }

  /** No limit: for tests and tools that build call services without a heap to protect. */
  public static BodyMemory unbounded() {
    return new BodyMemory(Long.MAX_VALUE);
  }

  /**
   * {@code share} (0 < share <= 1) of {@code maxHeapBytes} ({@code Runtime.maxMemory()}): the rest
   * of the heap is for what a body costs while it is parsed and rebuilt, and for everything else.
   */
  public static BodyMemory shareOfHeap(double share, long maxHeapBytes) {
    if (!(share > 0 && share <= 1)) {
      throw new IllegalArgumentException(
          "gateway.body-memory-share must be > 0 and <= 1, was " + share);
    }
    return new BodyMemory(Math.max(1, (long) (maxHeapBytes * share)));
  }

  /**
   * What reading {@code entity} under {@code routeLimit} will hold: its declared length, or the
   * route's limit when no length is declared (chunked). Nothing for a body longer than the limit:
   * that one is read and dropped, never held, and refused with 413.
   */
  public static long expected(HttpEntity entity, long routeLimit) {
    if (entity.isKnownEmpty()) {
      return 0;
    }
    var declared = entity.getContentLengthOption();
    if (declared.isPresent()) {
      return declared.getAsLong() > routeLimit ? 0 : declared.getAsLong();
    }
    return routeLimit;
  }

  /** A hold on {@code bytes}, or empty when it would take the total past the limit. */
  public Optional<Lease> take(long bytes) {
    while (true) {
      long now = held.get();
      if (now > 0 && bytes > limitBytes - now) {
        return Optional.empty();
      }
      if (held.compareAndSet(now, now + bytes)) {
        return Optional.of(new Lease(bytes));
      }
    }
  }

  /** Bytes held right now. */
  public long heldBytes() {
    return held.get();
  }

  /** Bytes held by one call, given back once. */
  public final class Lease {
    private final long bytes;
    private final AtomicBoolean released = new AtomicBoolean();

    private Lease(long bytes) {
      this.bytes = bytes;
    }

    public void release() {
      if (released.compareAndSet(false, true)) {
        held.addAndGet(-bytes);
      }
    }
  }
}
