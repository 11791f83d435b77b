package dev.spendgateway.upstream.client;

import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many calls to one provider hold a pooled connection (or are about to), bounded by that
 * provider's {@code max-connections}. A call that finds every slot taken is refused at once ({@link
 * SafeErrors#UPSTREAM_BUSY}) instead of joining Pekko's pool queue: over HTTP/1.1 a streamed answer
 * holds its connection until its last byte, so a queued call could wait for minutes — long enough
 * for the caller's or the server's idle timeout to reset it while its reservation is held. Refused
 * here, nothing was sent, the reservation is voided and the caller is told to retry.
 *
 * <p>A slot is held from the request until the response body ends (or the request fails): the same
 * span for which the pool keeps the connection busy. Thread-safe, lock-free.
 */
final class ConnectionSlots {
  private final int limit;
  private final AtomicInteger taken = new AtomicInteger();

  ConnectionSlots(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be >= 1");
    }
    this.limit = limit;
  }

  /** One taken slot; {@link #release} gives it back once, however often it is called. */
  final class Slot {
    private final AtomicBoolean released = new AtomicBoolean();

    void release() {
      if (released.compareAndSet(false, true)) {
        taken.decrementAndGet();
      }
    }
  }

  /** A slot, or empty when all {@code limit} are taken. */
  Optional<Slot> tryTake() {
    while (true) {
      int now = taken.get();
      if (now >= limit) {
        return Optional.empty();
      }
      if (taken.compareAndSet(now, now + 1)) {
        return Optional.of(new Slot());
      }
    }
  }

  /** Slots taken right now. */
  int inUse() {
    return taken.get();
  }

  int limit() {
    return limit;
  }
}
