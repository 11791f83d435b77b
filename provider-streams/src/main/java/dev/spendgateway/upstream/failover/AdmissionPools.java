package dev.spendgateway.upstream.failover;

import dev.spendgateway.policy.catalog.Provider;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;

/**
 * Admission control for upstream calls (docs/ROUTER.md, pools): one lane per (pool, provider), each
 * with its own concurrency limit and bounded FIFO queue. Interactive and batch lanes share nothing,
 * so interactive calls never wait behind a batch flood. {@link #admit} completes at once when a
 * slot is free, queues while the queue has room, and otherwise fails at once with {@link PoolFull}
 * carrying a Retry-After estimated from the lane's observed drain rate. Thread-safe; time from an
 * injected nanosecond source.
 *
 * <p>A queued caller that gives up should cancel the returned stage ({@code
 * toCompletableFuture().cancel(false)}): its place is skipped and its slot is never taken.
 */
public final class AdmissionPools {

  /** Limits of one pool: queue size per provider lane and concurrency per provider. */
  public record PoolLimits(int queueSize, Map<Provider, Integer> concurrency) {
    public PoolLimits {
      concurrency = Map.copyOf(concurrency);
      if (queueSize < 0) {
        throw new IllegalArgumentException("queue-size must be >= 0");
      }
      for (Provider p : Provider.values()) {
        Integer c = concurrency.get(p);
        if (c == null || c < 1) {
          throw new IllegalArgumentException("concurrency." + p.wireName() + " must be >= 1");
        }
      }
    }
  }

  /** {@code failover.pools} settings. */
  public record Settings(
      Map<Pool, PoolLimits> pools, Duration initialRetryAfter, Duration maxRetryAfter) {
    public Settings {
      pools = Map.copyOf(pools);
      for (Pool p : Pool.values()) {
        Objects.requireNonNull(pools.get(p), "limits for pool " + p.wireName());
      }
    }
  }

  /** Gauges of one lane for {@code /metrics}. */
  public record LaneStats(
      Pool pool, Provider provider, int inFlight, int limit, int depth, Duration oldestWait) {}

  /**
   * A held concurrency slot. Close it exactly when the upstream call ends; closing twice is
   * harmless.
   */
  public static final class Permit implements AutoCloseable {
    private final Lane lane;
    private final Duration waited;
    private final AtomicBoolean released = new AtomicBoolean();

    private Permit(Lane lane, Duration waited) {
      this.lane = lane;
      this.waited = waited;
    }

    public Pool pool() {
      return lane.pool;
    }

    public Provider provider() {
      return lane.provider;
    }

    /** Time spent queued before admission (zero when admitted at once). */
    public Duration waited() {
      return waited;
    }

    /** Releases the slot; only the first call has an effect. */
    @Override
    public void close() {
      if (released.compareAndSet(false, true)) {
        lane.release();
      }
    }
  }

  /** Number of recent releases the drain rate is estimated from. */
  private static final int DRAIN_WINDOW = 32;

  private final Map<Pool, Map<Provider, Lane>> lanes = new EnumMap<>(Pool.class);
  private final Settings settings;
  private final LongSupplier nanoTime;

  public AdmissionPools(Settings settings, LongSupplier nanoTime) {
    this.settings = settings;
    this.nanoTime = nanoTime;
    for (Pool pool : Pool.values()) {
      Map<Provider, Lane> byProvider = new EnumMap<>(Provider.class);
      PoolLimits limits = settings.pools().get(pool);
      for (Provider provider : Provider.values()) {
        byProvider.put(
            provider,
            new Lane(pool, provider, limits.concurrency().get(provider), limits.queueSize()));
      }
      lanes.put(pool, byProvider);
    }
  }

  /**
   * Asks for a slot to call {@code provider} on behalf of a {@code pool} call.
   *
   * @return a stage completing with a {@link Permit} (at once when a slot is free, later when
   *     queued) or failed at once with {@link PoolFull}
   */
  public CompletionStage<Permit> admit(Pool pool, Provider provider) {
    return lanes.get(pool).get(provider).admit();
  }

  /** Waiting calls in a lane. */
  public int depth(Pool pool, Provider provider) {
    return lanes.get(pool).get(provider).stats().depth();
  }

  /** How long the oldest waiting call of a lane has waited (zero when none). */
  public Duration oldestWait(Pool pool, Provider provider) {
    return lanes.get(pool).get(provider).stats().oldestWait();
  }

  /** Every lane's gauges. */
  public List<LaneStats> stats() {
    List<LaneStats> out = new ArrayList<>();
    for (Pool pool : Pool.values()) {
      for (Provider provider : Provider.values()) {
        out.add(lanes.get(pool).get(provider).stats());
      }
    }
    return out;
  }

  private record Waiter(CompletableFuture<Permit> future, long enqueuedNanos) {}

  /**
   * One (pool, provider) lane. All state under the lane's monitor; futures completed outside it.
   */
  private final class Lane {
    private final Pool pool;
    private final Provider provider;
    private final int limit;
    private final int queueSize;
    private final ArrayDeque<Waiter> queue = new ArrayDeque<>();
    private final long[] releases = new long[DRAIN_WINDOW];
    private int releaseCount;
    private int inFlight;

    Lane(Pool pool, Provider provider, int limit, int queueSize) {
      this.pool = pool;
      this.provider = provider;
      this.limit = limit;
      this.queueSize = queueSize;
    }

    CompletionStage<Permit> admit() {
      long retryAfter;
      synchronized (this) {
        if (inFlight < limit) {
          inFlight++;
          return CompletableFuture.completedFuture(new Permit(this, Duration.ZERO));
        }
        if (queue.size() >= queueSize) {
          queue.removeIf(w -> w.future().isCancelled()); // callers that gave up hold no place
        }
        if (queue.size() < queueSize) {
          CompletableFuture<Permit> future = new CompletableFuture<>();
          queue.addLast(new Waiter(future, nanoTime.getAsLong()));
          return future;
        }
        retryAfter = retryAfterSeconds();
      }
      return CompletableFuture.failedFuture(new PoolFull(pool, provider, retryAfter));
    }

    /** Hands the slot to the first waiter still interested, or frees it. */
    void release() {
      while (true) {
        Waiter next;
        long now;
        synchronized (this) {
          now = nanoTime.getAsLong();
          releases[releaseCount % DRAIN_WINDOW] = now;
          releaseCount++;
          next = queue.pollFirst();
          if (next == null) {
            inFlight--;
            return;
          }
        }
        // The slot passes to the waiter without ever being free, so no newcomer can jump the queue.
        Permit permit = new Permit(this, Duration.ofNanos(now - next.enqueuedNanos()));
        if (next.future().complete(permit)) {
          return;
        }
        // The waiter cancelled: it never held the slot; offer it to the next one. Not a real
        // release, so undo the drain-rate sample.
        synchronized (this) {
          releaseCount--;
        }
      }
    }

    /** Seconds until a newcomer would likely get a slot: queue depth / observed drain rate. */
    private long retryAfterSeconds() {
      long max = Math.max(1, settings.maxRetryAfter().toSeconds());
      int samples = Math.min(releaseCount, DRAIN_WINDOW);
      if (samples < 2) {
        return Math.min(max, Math.max(1, settings.initialRetryAfter().toSeconds()));
      }
      long newest = releases[(releaseCount - 1) % DRAIN_WINDOW];
      long oldest = releases[(releaseCount - samples) % DRAIN_WINDOW];
      long span = Math.max(1, nanoTime.getAsLong() - oldest);
      // rate = (samples - 1) releases over [oldest, newest]; stale samples make it slower, which is
      // the safe side (callers wait longer rather than stampede).
      double perSecond = (samples - 1) / (span / 1e9);
      if (newest == oldest || perSecond <= 0) {
        return max;
      }
      double seconds = (queue.size() + 1) / perSecond;
      return Math.min(max, Math.max(1, (long) Math.ceil(seconds)));
    }

    synchronized LaneStats stats() {
      queue.removeIf(w -> w.future().isCancelled());
      Waiter oldest = queue.peekFirst();
      Duration wait =
          oldest == null
              ? Duration.ZERO
              : Duration.ofNanos(nanoTime.getAsLong() - oldest.enqueuedNanos());
      return new LaneStats(pool, provider, inFlight, limit, queue.size(), wait);
    }
  }
}
