package dev.spendgateway.sim;

import java.util.ArrayDeque;
import java.util.EnumMap;
import java.util.Map;
import java.util.Optional;

/**
 * Per-route queues of scripted behaviour. Each call takes one step from the head of its route's
 * queue; a step scripted for N calls stays at the head until used N times ({@code -1} = forever).
 * An empty queue means the default behaviour. Access is under a per-route lock, held for a few
 * nanoseconds; the common unscripted path only reads a volatile counter.
 */
final class FaultScript {

  /** One queued step: a fault and how many calls it still applies to ({@code -1} = forever). */
  record Step(Fault fault, int remaining) {}

  private static final class Queue {
    final ArrayDeque<Step> steps = new ArrayDeque<>();
    volatile int size;
  }

  private final Map<SimRoute, Queue> queues = new EnumMap<>(SimRoute.class);

  FaultScript() {
    for (SimRoute r : SimRoute.values()) {
      queues.put(r, new Queue());
    }
  }

  void add(SimRoute route, Fault fault, int times) {
    if (times == 0 || times < -1) {
      throw new IllegalArgumentException("times must be >= 1, or -1 for forever");
    }
    Queue q = queues.get(route);
    synchronized (q) {
      q.steps.addLast(new Step(fault, times));
      q.size = q.steps.size();
    }
  }

  /** Takes the behaviour for the next call on {@code route}, if one is scripted. */
  Optional<Fault> next(SimRoute route) {
    Queue q = queues.get(route);
    if (q.size == 0) {
      return Optional.empty();
    }
    synchronized (q) {
      Step head = q.steps.pollFirst();
      if (head == null) {
        return Optional.empty();
      }
      if (head.remaining() == -1) {
        q.steps.addFirst(head);
      } else if (head.remaining() > 1) {
        q.steps.addFirst(new Step(head.fault(), head.remaining() - 1));
      }
      q.size = q.steps.size();
      return Optional.of(head.fault());
    }
  }

  /** Steps still queued for a route (sticky steps count once). */
  int pending(SimRoute route) {
    return queues.get(route).size;
  }

  void clear() {
    for (Queue q : queues.values()) {
      synchronized (q) {
        q.steps.clear();
        q.size = 0;
      }
    }
  }
}
