package dev.spendgateway.upstream.failover;

import com.typesafe.config.Config;
import dev.spendgateway.policy.catalog.Provider;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The node's own pace towards each provider: requests and tokens per minute, so a burst is spread
 * out (or refused) here instead of becoming a storm of upstream 429s that every caller then
 * retries. One limiter per provider, shared by every route.
 *
 * <p>Each limit is a bucket that refills continuously at {@code perMinute / 60} per second and
 * holds at most one minute's worth. A call takes its share at once; when the bucket is short the
 * call is told how long to wait for its turn (the bucket goes into debt, so later calls queue
 * behind it in order). A call whose wait would exceed {@code maxWait} takes nothing and is refused
 * with that wait, which the edge answers as 429 with {@code Retry-After}.
 *
 * <p>Tokens are counted at the call's worst case (input as assumed plus the whole output budget),
 * as the providers themselves count a request's {@code max_tokens} against the minute's tokens.
 *
 * <p><b>Interactive first.</b> The last {@code interactiveReserve} of each limit (a fraction of the
 * minute) is for interactive calls: a {@link Pool#BATCH batch} call goes only while the bucket,
 * after its share, still holds the reserve. It never queues inside the bucket (a queued share is
 * taken at once, and would eat the reserve ahead of the interactive calls that come meanwhile): it
 * is told to ask again when the share above the reserve is back ({@link Turn.NotYet}), holding
 * nothing meanwhile, and is refused when that is further away than the maximum wait. So a batch
 * flood takes at most the unreserved part of the minute, and an interactive call finds the reserve
 * there. With a reserve of 0 a batch call is paced like an interactive one.
 *
 * <p><b>Several nodes.</b> The configured limits are the cluster's: a cluster node paces by its
 * {@link #shareAmong share} of them, the limit divided by the live nodes (the remainder to the
 * first nodes in address order, so the shares add up to exactly the limit; a limit below the node
 * count still gives each node one), recomputed whenever membership changes. A node keeps the
 * fraction of a minute its buckets held, so a rebalance neither refills nor empties them.
 */
public final class ProviderRateLimits {
  /**
   * The most a limit may be per minute. The buckets count exactly in units × 60e9, and a bucket's
   * level plus the debt of calls already let through must stay within a long: 50 million a minute
   * (over 800,000 tokens a second from one node) keeps both with room to spare. Above it, turn the
   * node's own pacing off (0) and let the provider's limits apply.
   */
  public static final long MAX_PER_MINUTE = 50_000_000L;

  /** One provider's limits; 0 turns a limit off. */
  public record Limits(long requestsPerMinute, long tokensPerMinute) {
    public Limits {
      if (requestsPerMinute < 0 || tokensPerMinute < 0) {
        throw new IllegalArgumentException("rate limits must be >= 0 (0 = off)");
      }
      if (requestsPerMinute > MAX_PER_MINUTE || tokensPerMinute > MAX_PER_MINUTE) {
        throw new IllegalArgumentException(
            "rate limits must be at most " + MAX_PER_MINUTE + " per minute (0 = off)");
      }
    }
  }

  /** What a call may do now. */
  public sealed interface Turn {
    /** Go after {@code after} (zero: at once); the call's share is taken. */
    record Go(Duration after) implements Turn {}

    /** Over the limit for longer than the maximum wait; nothing was taken. */
    record Refused(Duration retryAfter, String limit) implements Turn {}

    /**
     * A batch call: only the interactive reserve of {@code limit} is left. Nothing was taken; the
     * share above the reserve is back in {@code retryIn} (at most the maximum wait), when the call
     * may ask again.
     */
    record NotYet(Duration retryIn, String limit) implements Turn {}
  }

  private final Map<Provider, Bucket> requests = new EnumMap<>(Provider.class);
  private final Map<Provider, Bucket> tokens = new EnumMap<>(Provider.class);
  private final Duration maxWait;
  private final LongSupplier nanoTime;

  /** The configured (whole cluster's) limits, and the reserve fraction, to recompute shares. */
  private final Map<Provider, Limits> configured;

  private final double interactiveReserve;

  /** The live nodes this node shares the limits with (1: all its own), and its place among them. */
  private int nodes = 1;

  private int rank = 0;

  /** Limits with no interactive reserve: batch calls are paced like interactive ones. */
  public ProviderRateLimits(Map<Provider, Limits> limits, Duration maxWait, LongSupplier nanoTime) {
    this(limits, 0, maxWait, nanoTime);
  }

  /**
   * @param interactiveReserve the fraction of each limit batch calls never take, in [0, 1)
   */
  public ProviderRateLimits(
      Map<Provider, Limits> limits,
      double interactiveReserve,
      Duration maxWait,
      LongSupplier nanoTime) {
    if (!(interactiveReserve >= 0 && interactiveReserve < 1)) {
      throw new IllegalArgumentException(
          "interactive-reserve must be at least 0 and below 1 (a fraction of each limit), was "
              + interactiveReserve);
    }
    this.maxWait = maxWait;
    this.nanoTime = nanoTime;
    this.configured = Map.copyOf(limits);
    this.interactiveReserve = interactiveReserve;
    for (Map.Entry<Provider, Limits> e : limits.entrySet()) {
      long rpm = e.getValue().requestsPerMinute();
      long tpm = e.getValue().tokensPerMinute();
      if (rpm > 0) {
        requests.put(
            e.getKey(), new Bucket(rpm, reserveOf(rpm, interactiveReserve), nanoTime.getAsLong()));
      }
      if (tpm > 0) {
        tokens.put(
            e.getKey(), new Bucket(tpm, reserveOf(tpm, interactiveReserve), nanoTime.getAsLong()));
      }
    }
  }

  /**
   * The units of a {@code perMinute} limit kept for interactive calls: rounded up (a reserve of a
   * fraction of a request would be none), but always leaving batch calls at least one unit.
   */
  private static long reserveOf(long perMinute, double fraction) {
    if (fraction == 0) {
      return 0;
    }
    // Less a hair before rounding up: 0.1 × 30 is 3.0000000000000004 in doubles, and a reserve of
    // 4 there would be one request more than the operator asked for.
    return Math.min(perMinute - 1, (long) Math.ceil(perMinute * fraction - 1e-9));
  }

  /**
   * This node's share of a {@code perMinute} limit when {@code nodes} live nodes share it and this
   * one is {@code rank}-th (from 0) in address order: the limit divided evenly, the remainder one
   * each to the first nodes, so the shares add up to exactly the limit. A limit below the node
   * count gives each node one (the cluster may then send up to one per node a minute: a limit of
   * zero would turn the pacing off).
   */
  public static long shareOf(long perMinute, int nodes, int rank) {
    if (nodes < 1 || rank < 0 || rank >= nodes) {
      throw new IllegalArgumentException("rank " + rank + " of " + nodes + " nodes");
    }
    long share = perMinute / nodes + (rank < perMinute % nodes ? 1 : 0);
    return Math.max(1, share);
  }

  /**
   * Paces by this node's share of the configured limits, {@code nodes} live nodes sharing them and
   * this one {@code rank}-th; {@code (1, 0)} is the whole limit (one process). Each bucket keeps
   * the fraction of a minute it held (and its debt), rescaled to the new share.
   */
  public synchronized void shareAmong(int nodes, int rank) {
    if (nodes == this.nodes && rank == this.rank) {
      return;
    }
    shareOf(1, nodes, rank); // checks the arguments
    long now = nanoTime.getAsLong();
    for (Map.Entry<Provider, Limits> e : configured.entrySet()) {
      rescale(requests, e.getKey(), e.getValue().requestsPerMinute(), nodes, rank, now);
      rescale(tokens, e.getKey(), e.getValue().tokensPerMinute(), nodes, rank, now);
    }
    this.nodes = nodes;
    this.rank = rank;
  }

  private void rescale(
      Map<Provider, Bucket> buckets, Provider p, long limit, int nodes, int rank, long now) {
    Bucket b = buckets.get(p);
    if (b != null) {
      long share = shareOf(limit, nodes, rank);
      buckets.put(p, b.rescaled(share, reserveOf(share, interactiveReserve), now));
    }
  }

  /** The live nodes this node shares the limits with (1 in one process). */
  public synchronized int sharedAmong() {
    return nodes;
  }

  /** The longest a call waits for its turn before it is refused instead. */
  public Duration maxWait() {
    return maxWait;
  }

  /**
   * {@code failover.rate-limits} of {@code config}; with {@code enabled = off}, no limits at all
   * (the numbers are still checked, so turning it on later cannot fail the start).
   */
  public static ProviderRateLimits fromConfig(Config config, LongSupplier nanoTime) {
    Config r = config.getConfig("failover.rate-limits");
    boolean enabled = r.getBoolean("enabled");
    Map<Provider, Limits> limits = new EnumMap<>(Provider.class);
    for (Provider p : Provider.values()) {
      String key = "failover.rate-limits." + p.wireName();
      try {
        limits.put(
            p,
            new Limits(
                r.getLong(p.wireName() + ".requests-per-minute"),
                r.getLong(p.wireName() + ".tokens-per-minute")));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            key + ".requests-per-minute / .tokens-per-minute: " + e.getMessage(), e);
      }
    }
    double reserve = r.getDouble("interactive-reserve");
    try {
      return new ProviderRateLimits(
          enabled ? limits : Map.of(), reserve, r.getDuration("max-wait"), nanoTime);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "failover.rate-limits.interactive-reserve: " + e.getMessage(), e);
    }
  }

  /** {@link #take(Provider, Pool, long)} for an interactive call. */
  public Turn take(Provider provider, long worstCaseTokens) {
    return take(provider, Pool.INTERACTIVE, worstCaseTokens);
  }

  /**
   * Takes one request and {@code worstCaseTokens} from {@code provider}'s limits, or refuses. Both
   * limits are decided together: a call refused by one takes nothing from the other. A call of the
   * batch pool never takes the interactive reserve ({@link Turn.NotYet} instead of a wait).
   */
  public synchronized Turn take(Provider provider, Pool pool, long worstCaseTokens) {
    if (pool == Pool.BATCH) {
      return takeAboveReserve(provider, worstCaseTokens);
    }
    return takeInTurn(provider, worstCaseTokens);
  }

  private Turn takeInTurn(Provider provider, long worstCaseTokens) {
    long now = nanoTime.getAsLong();
    Bucket r = requests.get(provider);
    Bucket t = tokens.get(provider);
    long waitNanos = 0;
    String limit = null;
    if (r != null) {
      long w = r.waitFor(1, now);
      if (w > waitNanos) {
        waitNanos = w;
        limit = "requests per minute";
      }
    }
    if (t != null) {
      long w = t.waitFor(Math.min(worstCaseTokens, t.perMinute), now);
      if (w > waitNanos) {
        waitNanos = w;
        limit = "tokens per minute";
      }
    }
    if (waitNanos > maxWait.toNanos()) {
      return new Turn.Refused(Duration.ofNanos(waitNanos), limit);
    }
    if (r != null) {
      r.take(1, now);
    }
    if (t != null) {
      t.take(Math.min(worstCaseTokens, t.perMinute), now);
    }
    return new Turn.Go(Duration.ofNanos(waitNanos));
  }

  /**
   * A batch call: at once if both buckets still hold the reserve after its share, else nothing
   * taken and the time until they would. A bucket without a reserve paces it as {@link #takeInTurn}
   * does.
   */
  private Turn takeAboveReserve(Provider provider, long worstCaseTokens) {
    Bucket r = requests.get(provider);
    Bucket t = tokens.get(provider);
    boolean anyReserve = (r != null && r.reserve > 0) || (t != null && t.reserve > 0);
    if (!anyReserve) {
      return takeInTurn(provider, worstCaseTokens);
    }
    long now = nanoTime.getAsLong();
    long waitNanos = 0;
    String limit = null;
    if (r != null) {
      long w = r.waitAbove(1, now);
      if (w > waitNanos) {
        waitNanos = w;
        limit = "requests per minute";
      }
    }
    long batchTokens = t == null ? 0 : Math.min(worstCaseTokens, t.perMinute - t.reserve);
    if (t != null) {
      long w = t.waitAbove(batchTokens, now);
      if (w > waitNanos) {
        waitNanos = w;
        limit = "tokens per minute";
      }
    }
    if (waitNanos > maxWait.toNanos()) {
      return new Turn.Refused(Duration.ofNanos(waitNanos), limit + " (interactive reserve)");
    }
    if (waitNanos > 0) {
      return new Turn.NotYet(Duration.ofNanos(waitNanos), limit + " (interactive reserve)");
    }
    if (r != null) {
      r.take(1, now);
    }
    if (t != null) {
      t.take(batchTokens, now);
    }
    return new Turn.Go(Duration.ZERO);
  }

  /**
   * Returns a share {@link #take} let through that was never used: the call's caller hung up while
   * it waited for its turn, so nothing was sent. Calls already waiting keep their turns; the next
   * newcomer finds the room. Never fills a bucket past a minute's worth.
   */
  public void giveBack(Provider provider, long worstCaseTokens) {
    giveBack(provider, Pool.INTERACTIVE, worstCaseTokens);
  }

  /** {@link #giveBack(Provider, long)} of a call of {@code pool}: exactly what it took. */
  public synchronized void giveBack(Provider provider, Pool pool, long worstCaseTokens) {
    long now = nanoTime.getAsLong();
    Bucket r = requests.get(provider);
    Bucket t = tokens.get(provider);
    if (r != null) {
      r.giveBack(1, now);
    }
    if (t != null) {
      long cap = pool == Pool.BATCH ? t.perMinute - t.reserve : t.perMinute;
      t.giveBack(Math.min(worstCaseTokens, cap), now);
    }
  }

  /**
   * The limits in words, for the line the gateway logs at start (an operator who never set them
   * sees the shipped tier there), e.g. {@code openai: 500 requests, 500000 tokens a minute (100,
   * 100000 kept for interactive calls); anthropic: off}.
   */
  public synchronized String describe() {
    StringBuilder out = new StringBuilder();
    for (Provider p : Provider.values()) {
      if (out.length() > 0) {
        out.append("; ");
      }
      out.append(p.wireName()).append(": ");
      Bucket r = requests.get(p);
      Bucket t = tokens.get(p);
      if (r == null && t == null) {
        out.append("off");
        continue;
      }
      out.append(r == null ? "any" : Long.toString(r.perMinute))
          .append(" requests, ")
          .append(t == null ? "any" : Long.toString(t.perMinute))
          .append(" tokens a minute");
      long rr = r == null ? 0 : r.reserve;
      long tr = t == null ? 0 : t.reserve;
      if (rr > 0 || tr > 0) {
        out.append(" (").append(rr).append(", ").append(tr).append(" kept for interactive calls)");
      }
    }
    if (nodes > 1) {
      out.append(" (this node's share; ").append(nodes).append(" nodes share the limits)");
    }
    return out.toString();
  }

  /** Whether any limit is set for {@code provider}. */
  public boolean limits(Provider provider) {
    return requests.containsKey(provider) || tokens.containsKey(provider);
  }

  /**
   * A continuously refilled bucket, counted in units × 60e9 so that integer arithmetic is exact at
   * any rate: one unit refills every {@code 60e9 / perMinute} ns.
   */
  private static final class Bucket {
    private static final long NANOS_PER_MINUTE = 60_000_000_000L;
    private final long perMinute;

    /** Units a batch call must leave in the bucket (the interactive reserve); 0: none. */
    private final long reserve;

    private long levelTimesMinute; // units × 60e9 ns; negative = debt of calls already let through
    private long at;

    Bucket(long perMinute, long reserve, long now) {
      this.perMinute = perMinute;
      this.reserve = reserve;
      this.levelTimesMinute = Math.multiplyExact(perMinute, NANOS_PER_MINUTE);
      this.at = now;
    }

    private void refill(long now) {
      long elapsed = Math.max(0, now - at);
      long full = perMinute * NANOS_PER_MINUTE;
      // elapsed × perMinute may overflow for idle hours: cap the elapsed time at a minute first.
      long add = Math.min(elapsed, NANOS_PER_MINUTE) * perMinute;
      levelTimesMinute = Math.min(full, levelTimesMinute + add);
      at = now;
    }

    /** Nanoseconds until {@code units} are there (0: now). */
    long waitFor(long units, long now) {
      refill(now);
      long missing = units * NANOS_PER_MINUTE - levelTimesMinute;
      return missing <= 0 ? 0 : ceilDiv(missing, perMinute);
    }

    /** Nanoseconds until {@code units} are there above the reserve (0: now). */
    long waitAbove(long units, long now) {
      return waitFor(units + reserve, now);
    }

    void take(long units, long now) {
      refill(now);
      levelTimesMinute -= units * NANOS_PER_MINUTE;
    }

    /**
     * This bucket at {@code newPerMinute}, holding the same fraction of a minute (or the same
     * time's worth of debt) as now.
     */
    Bucket rescaled(long newPerMinute, long newReserve, long now) {
      refill(now);
      Bucket b = new Bucket(newPerMinute, newReserve, now);
      // level / perMinute is the nanoseconds' worth held (at most a minute; debt is bounded by the
      // maximum wait), times the new rate: no overflow within MAX_PER_MINUTE.
      b.levelTimesMinute = Math.floorDiv(levelTimesMinute, perMinute) * newPerMinute;
      return b;
    }

    void giveBack(long units, long now) {
      refill(now);
      levelTimesMinute =
          Math.min(perMinute * NANOS_PER_MINUTE, levelTimesMinute + units * NANOS_PER_MINUTE);
    }

    private static long ceilDiv(long a, long b) {
      return -Math.floorDiv(-a, b);
    }
  }
}
