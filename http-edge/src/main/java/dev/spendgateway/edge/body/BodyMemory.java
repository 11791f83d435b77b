package dev.spendgateway.edge.body;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.RequestEntity;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

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
 *
 * <p>A body that declares no length (chunked HTTP/1.1, and an HTTP/2 body whose caller sent no
 * {@code content-length}, as a proxy multiplexing calls on h2c does) takes the route's whole limit
 * while it streams in, and gives back all but what it really holds once it is in: counted at the
 * limit for as long as its call waited, 128 calls waiting for their answers took a 2 GiB heap's
 * whole share, and the 129th call behind an h2c proxy was refused.
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
   * route's limit when no length is declared (chunked) until the body is in. Nothing for a body
   * longer than the limit: that one is read and dropped, never held, and refused with 413.
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
    return take(bytes, HttpEntities.EMPTY);
  }

  /**
   * A hold on what reading {@code entity} under {@code routeLimit} takes ({@link #expected}), or
   * empty when it would take the total past the limit. Read the lease's {@link Lease#entity()}, not
   * {@code entity}: for a body of no declared length it gives back the rest of the route's limit
   * once the body has arrived.
   */
  public Optional<Lease> take(RequestEntity entity, long routeLimit) {
    return take(expected(entity, routeLimit), entity);
  }

  private Optional<Lease> take(long bytes, RequestEntity entity) {
    while (true) {
      long now = held.get();
      if (now > 0 && bytes > limitBytes - now) {
        return Optional.empty();
      }
      if (held.compareAndSet(now, now + bytes)) {
        return Optional.of(new Lease(bytes, entity));
      }
    }
  }

  /** Bytes held right now. */
  public long heldBytes() {
    return held.get();
  }

  /** Bytes held by one call, trimmed to what its body holds once that is known, given back once. */
  public final class Lease {
    /** What the lease holds now; -1 once it is given back. */
    private final AtomicLong bytes;

    private final RequestEntity entity;

    private Lease(long bytes, RequestEntity entity) {
      this.bytes = new AtomicLong(bytes);
      this.entity = countedIfUndeclared(entity);
    }

    /**
     * The body to read: the caller's own when its length is declared (or it is empty), else the
     * same bytes counted as they pass, the lease trimmed to their total when the last has arrived.
     */
    public RequestEntity entity() {
      return entity;
    }

    /** Bytes this lease holds now (0 once given back). */
    public long heldBytes() {
      return Math.max(0, bytes.get());
    }

    public void release() {
      long had = bytes.getAndSet(-1);
      if (had > 0) {
        held.addAndGet(-had);
      }
    }

    private RequestEntity countedIfUndeclared(RequestEntity body) {
      if (body.isKnownEmpty() || body.getContentLengthOption().isPresent()) {
        return body;
      }
      AtomicLong arrived = new AtomicLong();
      return HttpEntities.createChunked(
          body.getContentType(),
          body.getDataBytes()
              .via(
                  Flow.of(ByteString.class)
                      .map(
                          chunk -> {
                            arrived.addAndGet(chunk.size());
                            return chunk;
                          })
                      // Trimmed inside the stream, as its last step before it completes: a reader
                      // that has the whole body then sees the lease trimmed already (a callback on
                      // the stream's termination could run after that reader went on).
                      .concatLazy(
                          Source.lazySource(
                              () -> {
                                trimTo(arrived.get());
                                return Source.<ByteString>empty();
                              }))));
    }

    /** Gives back all but {@code real} bytes, unless the lease is already at or below it. */
    private void trimTo(long real) {
      while (true) {
        long had = bytes.get();
        if (had <= real) {
          return; // given back (-1), or already no more than the body
        }
        if (bytes.compareAndSet(had, real)) {
          held.addAndGet(real - had);
          return;
        }
      }
    }
  }
}
