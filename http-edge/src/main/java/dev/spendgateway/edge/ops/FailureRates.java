package dev.spendgateway.edge.ops;

import dev.spendgateway.policy.failover.ErrorClassifier;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongSupplier;

/**
 * Failure rate per provider and model over a recent window, from the upstream meters the calls
 * already feed ({@code gateway.upstream.responses} by status, {@code gateway.upstream.failures} for
 * attempts without an answer): read from the registry, never by parsing {@code /metrics} text.
 *
 * <p>A failure is no answer, or an answer {@link ErrorClassifier#isProviderFailure} counts (what
 * the provider's side got wrong: 408, 410, 429, 5xx); a caller's other 4xx says nothing about the
 * provider's health. The window is made of samples of the cumulative counts, taken at most every
 * {@code sampleEvery} when the screen asks; the rate is the difference between now and the newest
 * sample taken at or before the window's start (so it covers at least the window; since start while
 * the gateway is younger than it). A screen that was closed for a while thus shows the rate since
 * it last looked, never an empty window. Memory: at most one sample per {@code sampleEvery} within
 * the window, plus that one.
 */
public final class FailureRates {
  private final MeterRegistry registry;
  private final LongSupplier nanoTime;
  private final long windowNanos;
  private final long sampleEveryNanos;
  private final Deque<Sample> samples = new ArrayDeque<>();

  /** One provider and model's counts. */
  public record Rate(String provider, String model, long attempts, long failures) {
    /** failures / attempts, 0 without attempts. */
    public double ratio() {
      return attempts == 0 ? 0 : (double) failures / attempts;
    }
  }

  private record Sample(long nanos, Map<List<String>, long[]> counts) {}

  public FailureRates(
      MeterRegistry registry, Duration window, Duration sampleEvery, LongSupplier nanoTime) {
    this.registry = registry;
    this.nanoTime = nanoTime;
    this.windowNanos = window.toNanos();
    this.sampleEveryNanos = sampleEvery.toNanos();
    // The first sample is the gateway's start: until the window has passed, rates are since start.
    samples.addLast(new Sample(nanoTime.getAsLong(), counts()));
  }

  /** The window's rates, by provider then model; only pairs with attempts in the window. */
  public synchronized List<Rate> rates() {
    long now = nanoTime.getAsLong();
    Map<List<String>, long[]> current = counts();
    if (now - samples.peekLast().nanos() >= sampleEveryNanos) {
      samples.addLast(new Sample(now, current));
    }
    // Keep one sample at or beyond the window's start as the baseline.
    while (samples.size() > 1 && now - second(samples).nanos() >= windowNanos) {
      samples.removeFirst();
    }
    Map<List<String>, long[]> base = samples.peekFirst().counts();
    List<Rate> out = new ArrayList<>();
    current.forEach(
        (key, c) -> {
          long[] b = base.getOrDefault(key, new long[2]);
          long attempts = c[0] - b[0];
          if (attempts > 0) {
            out.add(new Rate(key.get(0), key.get(1), attempts, c[1] - b[1]));
          }
        });
    return out;
  }

  private static Sample second(Deque<Sample> samples) {
    var it = samples.iterator();
    it.next();
    return it.next();
  }

  /** Cumulative (attempts, failures) per (provider, model) from the meters. */
  private Map<List<String>, long[]> counts() {
    Map<List<String>, long[]> out =
        new TreeMap<>((a, b) -> String.join("\u0000", a).compareTo(String.join("\u0000", b)));
    for (Counter c : registry.find("gateway.upstream.responses").counters()) {
      long[] n = out.computeIfAbsent(key(c), k -> new long[2]);
      long count = (long) c.count();
      n[0] += count;
      if (isProviderFailure(c.getId().getTag("status"))) {
        n[1] += count;
      }
    }
    for (Counter c : registry.find("gateway.upstream.failures").counters()) {
      long[] n = out.computeIfAbsent(key(c), k -> new long[2]);
      long count = (long) c.count();
      n[0] += count;
      n[1] += count;
    }
    return out;
  }

  private static List<String> key(Counter c) {
    return List.of(
        String.valueOf(c.getId().getTag("provider")), String.valueOf(c.getId().getTag("model")));
  }

  static boolean isProviderFailure(String status) {
    if (status == null) {
      return false;
    }
    int s;
    try {
      s = Integer.parseInt(status);
    } catch (NumberFormatException e) {
      return false;
    }
    return ErrorClassifier.isProviderFailure(s);
  }
}
