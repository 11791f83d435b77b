package dev.spendgateway.ledger;

import java.util.Collection;
import java.util.Map;
import scala.Option;
import scala.collection.immutable.HashMap;
import scala.collection.immutable.HashMap$;
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
    PersistentMap<K, V> m = empty();
    for (Map.Entry<K, V> e : entries.entrySet()) {
      m = m.with(e.getKey(), e.getValue());
    }
    return m;
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
