package dev.spendgateway.edge.call;

import dev.spendgateway.policy.cost.TokenUsage;
import dev.spendgateway.upstream.client.RateLimitHeaders;
import java.time.Duration;
import java.util.Optional;

/**
 * What the provider routes and the failover router report per call, for {@code /metrics}.
 * Implementations must be cheap and thread-safe and never throw. Provider and model are the wire
 * names ({@code openai}, {@code gpt-4o-mini}); model is the one actually called upstream. {@code
 * profile} is the routing profile of a router call ({@link UsageTelemetry#NO_PROFILE}, empty, on
 * the provider routes): profiles come from {@code conf/profiles.conf}, so the label's values are as
 * few as the profiles, and an operator can tell which profile's calls a latency or a 429 belongs
 * to.
 */
public interface CallMetrics {
  /** Reports nothing: for tests and for code built without metrics. */
  CallMetrics NONE = new CallMetrics() {};

  /** An upstream answered with {@code status} (each attempt, failovers included). */
  default void upstreamStatus(String provider, String model, String profile, int status) {}

  /**
   * An attempt could not get an HTTP answer (connect error, timeout, reset): {@code cause} is a
   * short class.
   */
  default void upstreamFailure(String provider, String model, String profile, String cause) {}

  /** From sending the upstream request to the end of its response (last byte of a stream). */
  default void upstreamLatency(String provider, String model, String profile, Duration latency) {}

  /** From sending the upstream request to its first response byte (streams and plain answers). */
  default void timeToFirstByte(String provider, String model, String profile, Duration ttfb) {}

  /**
   * The gateway's own time on a call: total time minus the upstream time (policy, reserve, settle,
   * queueing aside from admission). {@code route} is the route family ({@code chat}, {@code
   * messages}, …).
   */
  default void gatewayOverhead(String route, Duration overhead) {}

  /**
   * A streamed answer started flowing to the caller. Pair every call with {@link #streamClosed}.
   */
  default void streamOpened(String provider) {}

  /** A stream ended (completed, cut, or cancelled by the caller). */
  default void streamClosed(String provider) {}

  /**
   * The edge settled a call above its reservation (the real usage exceeded the worst case
   * estimate).
   */
  default void settledAboveReserve(String provider, String model, long overMicros) {}

  /**
   * A request named a model whose lifecycle needs attention: {@code lifecycle} is {@code
   * deprecated} (served, callers should move), {@code retired} (refused) or {@code gone} (the
   * provider answered that the model no longer exists: its circuit opened).
   */
  default void modelLifecycleAlarm(String model, String lifecycle) {}

  /**
   * A call was refused at once because this node is at a capacity limit: {@code kind} is {@code
   * open_calls} (gateway.max-open-calls), {@code upstream_busy} (every connection to the provider
   * in use) or {@code pool_overflow} (the pool's queue full).
   */
  default void overloadRefused(String kind) {}

  /**
   * A call carried data class {@code dataClass} (its name, never content): {@code outcome} is
   * {@code allowed}, {@code forbidden} (403 on a provider route, or no provider of the profile
   * allowed) or {@code fallback_not_permitted} (the router could not fail over outside the class).
   */
  default void dataClass(String dataClass, String outcome) {}

  /**
   * An upstream 429, told apart: {@code kind} is {@code quota} (billing; never retried) or {@code
   * rate_limit}.
   */
  default void upstreamTooManyRequests(
      String provider, String model, String profile, String kind) {}

  /** The provider's rate-limit headers on one answer: what is left of its window, and its size. */
  default void upstreamRateLimits(String provider, RateLimitHeaders.Reading reading) {}

  /**
   * Tokens a provider reported for one attempt that was billed from its usage; {@code profile} is
   * the routing profile of a router call, empty on the provider routes.
   */
  default void tokensUsed(String provider, String model, String profile, TokenUsage usage) {}

  /**
   * What the ledger closed one attempt at (settled, worst case kept, or 0), same labels as {@link
   * #tokensUsed}, and the caller's workflow tag ({@code x-spend-tag}; empty when none was sent).
   */
  default void spent(
      String provider, String model, String profile, Optional<String> tag, long micros) {}
}
