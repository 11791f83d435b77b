package dev.spendgateway.upstream.failover;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * Per-MODEL circuits opened by a 410 Gone (the model is retired): no retry, every later call goes
 * straight to the profile's fallback. A circuit stays open for {@code
 * failover.model-gone-open-for}, or — the default, {@code forever} — until restart or {@link
 * #reset}: a retired model does not come back, the catalog update is the fix. The listener is told
 * once per opening, for the alarm (the edge logs it and counts {@code
 * gateway_model_retired{model}}). Thread-safe.
 *
 * <p>On a cluster node the circuits are the cluster's: an opening or an operator reset here is
 * handed to {@link Sharing} (which replicates it), and one made on another node arrives through
 * {@link #openedElsewhere} / {@link #closedElsewhere}. Those do not tell the listener: the alarm is
 * raised once, by the node that got the 410.
 */
public final class ModelCircuits {

  /** Called once each time a model's circuit opens. Must be quick and must not throw. */
  @FunctionalInterface
  public interface Listener {
    void modelGone(String model);
  }

  /** Where this node's openings and resets go, so that the other nodes apply them too. */
  public interface Sharing {
    /** This node opened {@code model}'s circuit just now. */
    void opened(String model);

    /** An operator closed {@code model}'s circuit on this node. */
    void reset(String model);

    /** One process: nothing to share. */
    Sharing NONE =
        new Sharing() {
          @Override
          public void opened(String model) {}

          @Override
          public void reset(String model) {}
        };
  }

  private final Optional<Duration> openFor;
  private final LongSupplier nanoTime;
  private final Listener listener;
  private final Sharing sharing;

  /** model → nano time it was opened. */
  private final Map<String, Long> openedAt = new ConcurrentHashMap<>();

  /**
   * @param openFor how long a circuit stays open; empty = until restart or {@link #reset}
   * @param nanoTime time source ({@code System::nanoTime})
   */
  public ModelCircuits(Optional<Duration> openFor, LongSupplier nanoTime, Listener listener) {
    this(openFor, nanoTime, listener, Sharing.NONE);
  }

  /** As above, on a cluster node: openings and resets are handed to {@code sharing}. */
  public ModelCircuits(
      Optional<Duration> openFor, LongSupplier nanoTime, Listener listener, Sharing sharing) {
    this.openFor = openFor;
    this.nanoTime = nanoTime;
    this.listener = listener;
    this.sharing = sharing;
  }

  /** How long a circuit stays open; empty = until an operator reset. */
  public Optional<Duration> openFor() {
    return openFor;
  }

  /**
   * A 410 Gone came back for {@code model}: opens its circuit.
   *
   * @return true when this call opened it (the listener was told), false when it was already open
   */
  public boolean onModelGone(String model) {
    boolean[] opened = {false};
    long now = nanoTime.getAsLong();
    openedAt.compute(
        model,
        (m, at) -> {
          if (at != null && !expired(at, now)) {
            return at;
          }
          opened[0] = true;
          return now;
        });
    if (opened[0]) {
      listener.modelGone(model);
      sharing.opened(model);
    }
    return opened[0];
  }

  /**
   * Another node opened {@code model}'s circuit {@code ago} (its clock against this node's): open
   * here too, from that moment, unless it is open already or that opening has expired. The listener
   * is not told (the other node raised the alarm).
   */
  public void openedElsewhere(String model, Duration ago) {
    long now = nanoTime.getAsLong();
    long at = now - Math.max(0, ago.toNanos());
    if (expired(at, now)) {
      return;
    }
    openedAt.compute(
        model, (m, current) -> current != null && !expired(current, now) ? current : at);
  }

  /** An operator reset {@code model}'s circuit on another node: closed here too. */
  public void closedElsewhere(String model) {
    openedAt.remove(model);
  }

  /** True while calls to {@code model} must not be made. */
  public boolean isOpen(String model) {
    Long at = openedAt.get(model);
    if (at == null) {
      return false;
    }
    if (expired(at, nanoTime.getAsLong())) {
      openedAt.remove(model, at);
      return false;
    }
    return true;
  }

  /** Models whose circuit is open now, sorted; for metrics and the operations screen. */
  public Set<String> openModels() {
    Set<String> out = new TreeSet<>();
    for (String model : openedAt.keySet()) {
      if (isOpen(model)) {
        out.add(model);
      }
    }
    return out;
  }

  /** Operator reset (after a catalog fix): closes the model's circuit. */
  public void reset(String model) {
    openedAt.remove(model);
    sharing.reset(model);
  }

  private boolean expired(long openedAtNanos, long now) {
    return openFor.isPresent() && now - openedAtNanos >= openFor.get().toNanos();
  }
}
