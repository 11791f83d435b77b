package dev.spendgateway.upstream.failover;

import dev.spendgateway.policy.catalog.Provider;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Remembers, per {@code x-conversation-id}, the provider a conversation switched to, so that it
 * switches at most once and does not flap between two models' styles. Bounded (least recently used
 * entries go first) and time-limited: an entry is forgotten {@code ttl} after the conversation's
 * last call (not after its switch, or a conversation still in use would flip back). Thread-safe;
 * time comes from an injected nanosecond source.
 *
 * <p>In one process it is memory only — a restart forgets, which is accepted: the worst a forgotten
 * entry does is let a conversation switch once more, which is not worth a durable write per switch.
 * On a cluster node every switch, and a conversation's later calls at most once per {@link
 * #shareEvery()}, are handed to {@link Sharing}, which replicates them; what another node shares
 * arrives through {@link #seenElsewhere}. So a conversation stays switched on every node, and a
 * restarted node learns the switches again from the others.
 */
public final class ConversationStickiness {
  private final int maxEntries;
  private final long ttlNanos;
  private final LongSupplier nanoTime;
  private final LinkedHashMap<String, Entry> entries;
  private final Sharing sharing;

  /** Where this node's switches and the later calls of switched conversations go (cluster mode). */
  @FunctionalInterface
  public interface Sharing {
    /** {@code conversationId} is on {@code provider} and had a call just now. */
    void seen(String conversationId, Provider provider);

    /** One process: nothing to share. */
    Sharing NONE = (conversationId, provider) -> {};
  }

  /**
   * {@code seenAtNanos}: the switch, or the conversation's latest call since; {@code
   * sharedAtNanos}: the latest of those the other nodes were told of (or told this node).
   */
  private record Entry(Provider provider, long seenAtNanos, long sharedAtNanos) {
    Entry seenAt(long now) {
      return new Entry(provider, now, sharedAtNanos);
    }
  }

  public ConversationStickiness(int maxEntries, Duration ttl, LongSupplier nanoTime) {
    this(maxEntries, ttl, nanoTime, Sharing.NONE);
  }

  /** As above, on a cluster node: switches and later calls are handed to {@code sharing}. */
  public ConversationStickiness(
      int maxEntries, Duration ttl, LongSupplier nanoTime, Sharing sharing) {
    if (maxEntries < 1 || ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("stickiness needs max-entries >= 1 and a positive ttl");
    }
    this.maxEntries = maxEntries;
    this.ttlNanos = ttl.toNanos();
    this.nanoTime = nanoTime;
    this.sharing = sharing;
    this.entries =
        new LinkedHashMap<>(16, 0.75f, true) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Entry> eldest) {
            return size() > ConversationStickiness.this.maxEntries;
          }
        };
  }

  /**
   * Records that the conversation switched to {@code provider}. A conversation already stuck (and
   * not expired) keeps its first provider: the answer is the provider it is stuck to.
   */
  public synchronized Provider stick(String conversationId, Provider provider) {
    Optional<Provider> current = find(conversationId);
    if (current.isPresent()) {
      return current.get();
    }
    long now = nanoTime.getAsLong();
    entries.put(conversationId, new Entry(provider, now, now));
    sharing.seen(conversationId, provider);
    return provider;
  }

  /**
   * How often a conversation's calls are shared: a tenth of the ttl. Each call restarts the ttl on
   * this node; the other nodes need only hear of it now and then, well before their copy expires,
   * not on every call.
   */
  public Duration shareEvery() {
    return Duration.ofNanos(ttlNanos / 10);
  }

  /** How long an entry lives after the conversation's last call. */
  public Duration ttl() {
    return Duration.ofNanos(ttlNanos);
  }

  /**
   * Another node's switch of {@code conversationId} to {@code provider}, or a later call of it,
   * {@code ago} (its clock against this node's). Kept unless it has expired; an entry here with a
   * later call keeps its own time.
   */
  public synchronized void seenElsewhere(String conversationId, Provider provider, Duration ago) {
    long now = nanoTime.getAsLong();
    long seenAt = now - Math.max(0, ago.toNanos());
    if (now - seenAt >= ttlNanos) {
      return;
    }
    Entry here = entries.get(conversationId);
    if (here != null && here.seenAtNanos() >= seenAt && now - here.seenAtNanos() < ttlNanos) {
      return;
    }
    entries.put(conversationId, new Entry(provider, seenAt, seenAt));
  }

  /**
   * Forgets every expired entry (a periodic sweep: expired entries are otherwise only dropped when
   * touched or evicted).
   */
  public synchronized int pruneExpired() {
    long now = nanoTime.getAsLong();
    int before = entries.size();
    entries.values().removeIf(e -> now - e.seenAtNanos() >= ttlNanos);
    return before - entries.size();
  }

  /**
   * The provider the conversation is stuck to, if it switched and has had a call within the ttl;
   * this call counts as one (the ttl starts again).
   */
  public synchronized Optional<Provider> find(String conversationId) {
    if (conversationId == null) {
      return Optional.empty();
    }
    Entry e = entries.get(conversationId);
    if (e == null) {
      return Optional.empty();
    }
    long now = nanoTime.getAsLong();
    if (now - e.seenAtNanos() >= ttlNanos) {
      entries.remove(conversationId);
      return Optional.empty();
    }
    if (now - e.sharedAtNanos() >= ttlNanos / 10) {
      entries.put(conversationId, new Entry(e.provider(), now, now));
      sharing.seen(conversationId, e.provider());
    } else {
      entries.put(conversationId, e.seenAt(now));
    }
    return Optional.of(e.provider());
  }

  /** Entries held (expired ones count until touched or evicted); for the metrics gauge. */
  public synchronized int size() {
    return entries.size();
  }
}
