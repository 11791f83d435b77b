package dev.spendgateway.ledger;

import java.util.Collection;
import java.util.Map;
import scala.Option;
import scala.Tuple2;
import scala.collection.immutable.HashMap;
import scala.collection.immutable.HashMap$;
import scala.collection.mutable.ReusableBuilder;
import scala.jdk.javaapi.CollectionConverters;

/**
 * An immutable map whose {@code with}/{@code without} share structure with the original (a hash
 * array mapped trie: Scala's immutable {@code HashMap}, already on the classpath through Pekko). It
 * lets the ledger state stay immutable without copying thousands of reservations per event.
 */
final class PersistentMap<K, V> {
  private static final PersistentMap<?, ?> EMPTY =
      new PersistentMap<Object, Object>(HashMap$.MODULE$.empty());

  private final HashMap<K, V> map;

  private PersistentMap(HashMap<K, V> map) {
    this.map = map;
  }

  @SuppressWarnings("unchecked")
  static <K, V> PersistentMap<K, V> empty() {
    return (PersistentMap<K, V>) EMPTY;
  }

  static <K, V> PersistentMap<K, V> of(Map<K, V> entries) {
    Builder<K, V> b = builder();
    for (Map.Entry<K, V> e : entries.entrySet()) {
      b.put(e.getKey(), e.getValue());
    }
    return b.build();
  }

  /** For building a map from many entries at once (a snapshot's), see {@link Builder}. */
  static <K, V> Builder<K, V> builder() {
    return new Builder<>();
  }

  /**
   * Fills a new map in place and publishes it once: no path of the trie is copied per entry, as
   * {@link #with} must do for a value others may hold. Used once, by one thread; a later {@code
   * put} of a key wins over an earlier one.
   */
  static final class Builder<K, V> {
    private final ReusableBuilder<Tuple2<K, V>, HashMap<K, V>> entries =
        HashMap$.MODULE$.newBuilder();

    Builder<K, V> put(K key, V value) {
      entries.addOne(new Tuple2<>(key, value));
      return this;
    }

    PersistentMap<K, V> build() {
      return new PersistentMap<>(entries.result());
    }
  }

  /** The value for {@code key}, or {@code null}. */
  V get(K key) {
    Option<V> v = map.get(key);
    return v.isEmpty() ? null : v.get();
  }

  V getOrDefault(K key, V fallback) {
    V v = get(key);
    return v == null ? fallback : v;
  }

  boolean containsKey(K key) {
    return map.contains(key);
  }

  PersistentMap<K, V> with(K key, V value) {
    return new PersistentMap<>(map.updated(key, value));
  }

  PersistentMap<K, V> without(K key) {
    return new PersistentMap<>(map.removed(key));
  }

  int size() {
    return map.size();
  }

  /** A read-only view; iteration order is unspecified. */
  Map<K, V> asMap() {
    return CollectionConverters.asJava(map);
  }

  Collection<V> values() {
    return asMap().values();
  }
}
