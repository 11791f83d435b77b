package dev.spendgateway.upstream.stream;

/** How a metered stream ended, as far as billing is concerned. */
public enum Termination {
  /** The upstream ended normally after the provider's end-of-answer event: usage is final. */
  COMPLETED,
  /** The upstream ended normally but without the end-of-answer event: cut, keep the worst case. */
  ENDED_EARLY,
  /** The upstream failed (connection reset, idle timeout, ...): cut, keep the worst case. */
  UPSTREAM_FAILED,
  /** The client left and draining the rest took longer than {@code providers.drain-timeout}. */
  DRAIN_TIMEOUT,
  /**
   * The gateway stopped the stream before the upstream ended (its stream materializer shut down, or
   * the metering stage broke): nothing more can be read, keep the worst case.
   */
  STOPPED
}
