package dev.spendgateway.policy.failover;

/** What the failover router does with a provider's answer. */
public enum Classification {
  /** 2xx: not an error. */
  SUCCESS,
  /**
   * An outage, limit or account problem on this provider: the other provider can serve the call.
   */
  FAILOVER,
  /**
   * Rate limited with a wait we can afford: retry here (Retry-After or backoff), then fail over.
   */
  RETRY_THEN_FAILOVER,
  /**
   * A 429 that is a quota or billing limit (OpenAI {@code insufficient_quota}, Anthropic billing
   * errors), not a rate limit: waiting does not clear it, so no retry and no backoff here — fail
   * over at once, or hand it back at once when there is nowhere to go.
   */
  QUOTA_EXHAUSTED,
  /**
   * 410 Gone: the model is retired. No retry; open its circuit, alarm, use the profile's fallback.
   */
  MODEL_GONE,
  /**
   * Hand the answer to the caller as is, no failover: an invalid request or a content refusal would
   * fail the same way on the other side.
   */
  CALLER_ERROR
}
