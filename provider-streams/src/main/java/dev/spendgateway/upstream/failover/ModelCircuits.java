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
 */
public final class ModelCircuits {

  /** Called once each time a model's circuit opens. Must be quick and must not throw. */
  @FunctionalInterface
  public interface Listener {
    void modelGone(String model);
  }

  private final Optional<Duration> openFor;
  private final LongSupplier nanoTime;
  private final Listener listener;

  /** model → nano time it was opened. */
  private final Map<String, Long> openedAt = new ConcurrentHashMap<>();

  /**
   * @param openFor how long a circuit stays open; empty = until restart or {@link #reset}
   * @param nanoTime time source ({@code System::nanoTime})
   */
  public ModelCircuits(Optional<Duration> openFor, LongSupplier nanoTime, Listener listener) {
    this.openFor = openFor;
    this.nanoTime = nanoTime;
    this.listener = listener;
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
    }
    return opened[0];
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
  }

  private boolean expired(long openedAtNanos, long now) {
    return openFor.isPresent() && now - openedAtNanos >= openFor.get().toNanos();
  }
}
