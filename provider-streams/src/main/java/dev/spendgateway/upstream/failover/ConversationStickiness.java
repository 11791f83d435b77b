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
 * last call (not after its switch, or a conversation still in use would flip back); in memory only
 * — a restart forgets, which is accepted: the worst a forgotten entry does is let a conversation
 * switch once more, which is not worth a durable write per switch. Thread-safe; time comes from an
 * injected nanosecond source.
 */
public final class ConversationStickiness {
  private final int maxEntries;
  private final long ttlNanos;
  private final LongSupplier nanoTime;
  private final LinkedHashMap<String, Entry> entries;

  /** {@code seenAtNanos}: the switch, or the conversation's latest call since. */
  private record Entry(Provider provider, long seenAtNanos) {}

  public ConversationStickiness(int maxEntries, Duration ttl, LongSupplier nanoTime) {
    if (maxEntries < 1 || ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("stickiness needs max-entries >= 1 and a positive ttl");
    }
    this.maxEntries = maxEntries;
    this.ttlNanos = ttl.toNanos();
    this.nanoTime = nanoTime;
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
    entries.put(conversationId, new Entry(provider, nanoTime.getAsLong()));
    return provider;
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
    entries.put(conversationId, new Entry(e.provider(), now));
    return Optional.of(e.provider());
  }

  /** Entries held (expired ones count until touched or evicted); for the metrics gauge. */
  public synchronized int size() {
    return entries.size();
  }
}
