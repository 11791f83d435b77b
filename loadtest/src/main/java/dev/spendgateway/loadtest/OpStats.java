package dev.spendgateway.loadtest;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * Latencies and status counts of one kind of call ({@code reserve}, {@code settle}, {@code
 * gateway}, {@code direct}, …). Workers record concurrently into HdrHistogram {@link Recorder}s;
 * the reporter thread drains an interval each second and folds it into the run's totals. Values in
 * microseconds.
 */
final class OpStats {
  /** Status key for a call that got no HTTP answer (connect error, reset, timeout). */
  static final String TRANSPORT_ERROR = "error";

  private final String name;
  private final Recorder latency = new Recorder(3);
  private final Recorder ttfb = new Recorder(3);
  private final Histogram totalLatency = new Histogram(3);
  private final Histogram totalTtfb = new Histogram(3);
  private final Map<String, LongAdder> statuses = new ConcurrentHashMap<>();
  private Histogram intervalLatency;
  private Histogram intervalTtfb;

  OpStats(String name) {
    this.name = name;
  }

  String name() {
    return name;
  }

  void record(int status, long latencyNanos) {
    recordStatus(Integer.toString(status));
    latency.recordValue(micros(latencyNanos));
  }

  void recordTtfb(long ttfbNanos) {
    ttfb.recordValue(micros(ttfbNanos));
  }

  void recordError() {
    recordStatus(TRANSPORT_ERROR);
  }

  private void recordStatus(String key) {
    statuses.computeIfAbsent(key, k -> new LongAdder()).increment();
  }

  private static long micros(long nanos) {
    return Math.max(1, TimeUnit.NANOSECONDS.toMicros(nanos));
  }

  /**
   * Moves what was recorded since the last call into the totals; returns the interval's latency
   * histogram (only the reporter thread calls this).
   */
  synchronized Histogram drainInterval() {
    intervalLatency = latency.getIntervalHistogram(intervalLatency);
    intervalTtfb = ttfb.getIntervalHistogram(intervalTtfb);
    totalLatency.add(intervalLatency);
    totalTtfb.add(intervalTtfb);
    return intervalLatency;
  }

  synchronized Histogram totalLatency() {
    return totalLatency.copy();
  }

  synchronized Histogram totalTtfb() {
    return totalTtfb.copy();
  }

  /** Status code (or {@code error}) → count, sorted. */
  Map<String, Long> statuses() {
    Map<String, Long> out = new TreeMap<>();
    statuses.forEach((k, v) -> out.put(k, v.sum()));
    return out;
  }

  long count(String status) {
    LongAdder a = statuses.get(status);
    return a == null ? 0 : a.sum();
  }

  long total() {
    return statuses.values().stream().mapToLong(LongAdder::sum).sum();
  }
}
