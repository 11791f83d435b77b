package dev.spendgateway.edge.metrics;

import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * One metric's meters by their tag values, found on the per-call hot path without allocating: every
 * lookup walks a tree of maps, one level per tag, keyed by the value strings the caller already
 * holds (no key list, no varargs array, no capturing lambda). A meter is built once, by the table's
 * own maker, the first time its tag values are seen; the label sets are small (providers × models ×
 * statuses).
 *
 * @param <M> the meter (a Counter, a Timer, a gauge's value)
 */
final class MeterTable<M> {
  private final Function<String[], M> maker;
  private final Node<M> root = new Node<>();

  /**
   * @param maker builds and registers the meter for the given tag values, in lookup order; called
   *     at most once per set of values
   */
  MeterTable(Function<String[], M> maker) {
    this.maker = maker;
  }

  M get(String a) {
    Node<M> node = root.child(a);
    M meter = node.meter;
    return meter != null ? meter : node.make(maker, a);
  }

  M get(String a, String b) {
    Node<M> node = root.child(a).child(b);
    M meter = node.meter;
    return meter != null ? meter : node.make(maker, a, b);
  }

  M get(String a, String b, String c) {
    Node<M> node = root.child(a).child(b).child(c);
    M meter = node.meter;
    return meter != null ? meter : node.make(maker, a, b, c);
  }

  M get(String a, String b, String c, String d) {
    Node<M> node = root.child(a).child(b).child(c).child(d);
    M meter = node.meter;
    return meter != null ? meter : node.make(maker, a, b, c, d);
  }

  private static final class Node<M> {
    private final ConcurrentHashMap<String, Node<M>> children = new ConcurrentHashMap<>();
    private volatile M meter;

    Node<M> child(String value) {
      Node<M> child = children.get(value);
      return child != null ? child : children.computeIfAbsent(value, v -> new Node<>());
    }

    synchronized M make(Function<String[], M> maker, String... values) {
      if (meter == null) {
        meter = maker.apply(values);
      }
      return meter;
    }
  }
}
