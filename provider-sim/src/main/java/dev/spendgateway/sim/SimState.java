package dev.spendgateway.sim;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The mutable heart shared by the Java and the HTTP scripting API: scripts, recordings and the
 * defaults that scripts fall back to. Thread-safe; nothing here blocks for longer than a queue
 * operation.
 */
final class SimState {
  /** Runtime-changeable defaults, swapped whole so a call never sees half an update. */
  record Defaults(Usage usage, Duration latency) {
    Defaults {
      Objects.requireNonNull(usage, "usage");
      Objects.requireNonNull(latency, "latency");
    }
  }

  private final SimConfig config;
  private final FaultScript script = new FaultScript();
  private final CallRecorder recorder;
  private final OpenStreams streams = new OpenStreams();
  private final MediaJobs media = new MediaJobs(java.time.Clock.systemUTC());
  private volatile Defaults defaults;

  SimState(SimConfig config) {
    this.config = config;
    this.recorder = new CallRecorder(config.recordLimit());
    this.defaults = new Defaults(config.usage(), config.latency());
  }

  SimConfig config() {
    return config;
  }

  Defaults defaults() {
    return defaults;
  }

  void setDefaults(Defaults d) {
    this.defaults = d;
  }

  void script(SimRoute route, Fault fault, int times) {
    script.add(route, fault, times);
  }

  Optional<Fault> nextFault(SimRoute route) {
    return script.next(route);
  }

  int pending(SimRoute route) {
    return script.pending(route);
  }

  void clearScripts() {
    script.clear();
  }

  CallRecorder recorder() {
    return recorder;
  }

  OpenStreams streams() {
    return streams;
  }

  MediaJobs media() {
    return media;
  }

  List<ReceivedCall> received() {
    return recorder.snapshot();
  }

  /** Back to the state right after start: no scripts, no recordings, configured defaults. */
  void reset() {
    script.clear();
    recorder.clear();
    streams.reset();
    media.reset();
    defaults = new Defaults(config.usage(), config.latency());
  }
}
