package dev.spendgateway.upstream.client;

import java.time.Duration;

/**
 * Ends a provider answer that outlived {@code providers.max-call-duration}: the body stream fails
 * with it, and {@link SafeErrors} names it {@code max_call_duration}. Carries no URL, header or
 * body, so it is safe in logs.
 */
public final class MaxCallDurationExceeded extends RuntimeException {
  public MaxCallDurationExceeded(Duration limit) {
    super(
        "provider call cut after providers.max-call-duration (" + limit + ")", null, false, false);
  }
}
