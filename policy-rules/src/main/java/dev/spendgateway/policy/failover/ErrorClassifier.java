package dev.spendgateway.policy.failover;

import dev.spendgateway.policy.catalog.Provider;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * Decides, from a provider's answer, whether the failover router switches provider. Kept
 * deliberately narrow: only outages, limits and account problems switch; anything the other
 * provider would refuse the same way goes back to the caller.
 *
 * <p>The one place that tells a 429 apart: a rate limit clears with time (retry after the advised
 * wait), a quota or billing limit does not (an empty balance or a monthly hard limit stays until a
 * person pays), so retrying it only delays the failover and adds load.
 *
 * <p>The one place that holds the status lists, too: every other question about a provider's status
 * is a method here — {@link #isTransient} (worth a retry on the same side), {@link
 * #countsAgainstProvider} (what a provider's circuit breaker counts) and {@link #isProviderFailure}
 * (what the operations screen's failure rate counts).
 */
public final class ErrorClassifier {
  /**
   * Status standing for "no HTTP answer at all" (connection refused, reset, TLS or DNS failure).
   */
  public static final int CONNECTION_ERROR = 0;

  /**
   * Statuses that say our account with the provider is wrong (key, payment, permission): the other
   * side may serve the call, but waiting here changes nothing.
   */
  private static final Set<Integer> ACCOUNT_STATUSES = Set.of(401, 402, 403);

  /**
   * Statuses that say the provider's side is slow, busy or down for now, on both sides: the other
   * side may serve the call, and so may this one a little later. (505 and above are not: they say
   * the request itself cannot be served.)
   */
  private static final Set<Integer> OUTAGE_STATUSES = Set.of(408, 409, 500, 501, 502, 503, 504);

  /** Anthropic's "overloaded" status: an outage on that side only (OpenAI never sends it). */
  private static final int ANTHROPIC_OVERLOADED = 529;

  /** Anthropic answers an empty balance with this 400 instead of a 402; it is an outage for us. */
  private static final String CREDIT_BALANCE_TOO_LOW = "credit balance is too low";

  /**
   * Words in a 429 body that mean a quota or billing limit rather than a rate limit: OpenAI's error
   * codes {@code insufficient_quota}, {@code billing_hard_limit_reached} and {@code
   * billing_not_active}; Anthropic's error type {@code billing_error} and its credit-balance
   * message.
   */
  private static final List<String> QUOTA_MARKERS =
      List.of(
          "insufficient_quota",
          "billing_hard_limit_reached",
          "billing_not_active",
          "billing_error",
          CREDIT_BALANCE_TOO_LOW);

  /** The two kinds of 429, as metrics label them. */
  public enum TooManyRequests {
    /** Requests or tokens per minute: clears with time. */
    RATE_LIMIT("rate_limit"),
    /** Quota or billing: clears only when someone pays or raises the limit. */
    QUOTA("quota");

    private final String wireName;

    TooManyRequests(String wireName) {
      this.wireName = wireName;
    }

    public String wireName() {
      return wireName;
    }
  }

  private ErrorClassifier() {}

  /** A call that got no HTTP answer: always an outage on that side. */
  public static Classification classifyConnectionError(Provider provider) {
    return Classification.FAILOVER;
  }

  /**
   * Classifies one provider answer.
   *
   * @param status the HTTP status, or {@link #CONNECTION_ERROR} when there was no answer
   * @param body the error body (may be null); only read for Anthropic's credit-balance 400
   * @param retryAfter the answer's Retry-After, when it had one
   * @param maxRetryAfter the longest wait worth taking before failing over instead
   */
  public static Classification classify(
      Provider provider,
      int status,
      String body,
      Optional<Duration> retryAfter,
      Duration maxRetryAfter) {
    if (status == CONNECTION_ERROR) {
      return classifyConnectionError(provider);
    }
    if (status >= 200 && status <= 299) {
      return Classification.SUCCESS;
    }
    if (status == 410) {
      return Classification.MODEL_GONE;
    }
    if (status == 429 && kindOf429(body) == TooManyRequests.QUOTA) {
      return Classification.QUOTA_EXHAUSTED;
    }
    if (status == 429) {
      // Retry-After beyond what we can wait means the other side answers sooner; no header means
      // capped exponential backoff here first.
      boolean waitAffordable =
          retryAfter.map(wait -> wait.compareTo(maxRetryAfter) <= 0).orElse(true);
      return waitAffordable ? Classification.RETRY_THEN_FAILOVER : Classification.FAILOVER;
    }
    if (ACCOUNT_STATUSES.contains(status) || isOutage(provider, status)) {
      return Classification.FAILOVER;
    }
    if (provider == Provider.ANTHROPIC && status == 400 && saysCreditBalanceTooLow(body)) {
      return Classification.FAILOVER;
    }
    return Classification.CALLER_ERROR;
  }

  /**
   * Which kind of 429 this body describes; a body naming no quota or billing limit is a rate limit.
   */
  public static TooManyRequests kindOf429(String body) {
    if (body != null) {
      String lower = body.toLowerCase(Locale.ROOT);
      for (String marker : QUOTA_MARKERS) {
        if (lower.contains(marker)) {
          return TooManyRequests.QUOTA;
        }
      }
    }
    return TooManyRequests.RATE_LIMIT;
  }

  /**
   * Whether a failed answer may clear on the same provider with time, so a retry there is worth it
   * when a switch is not possible: no answer, a rate-limit 429, and the outage statuses (408, 409,
   * 500–504, Anthropic's 529). An account problem (401, 402, 403, an empty balance), a quota or
   * billing 429 and a retired model (410) are not: waiting does not fix them.
   *
   * @param status the HTTP status, or {@link #CONNECTION_ERROR} when there was no answer
   * @param body the error body (may be null); read to tell a quota 429 from a rate limit
   */
  public static boolean isTransient(Provider provider, int status, String body) {
    if (status == CONNECTION_ERROR) {
      return true;
    }
    if (status == 429) {
      return kindOf429(body) == TooManyRequests.RATE_LIMIT;
    }
    return isOutage(provider, status);
  }

  /**
   * Whether a provider's circuit breaker counts this answer as the provider failing: no answer, or
   * any 5xx (Anthropic's 529 included). Never a caller error, and never a 429: a limit is the
   * provider working as it should, and opening the breaker on it would stop calls that fit.
   *
   * @param status the HTTP status, or {@link #CONNECTION_ERROR} when there was no answer
   */
  public static boolean countsAgainstProvider(int status) {
    return status == CONNECTION_ERROR || status >= 500;
  }

  /**
   * Whether the operations screen counts this answer in a provider's failure rate: what the
   * provider's side got wrong or refused for its own reasons — a timeout (408), a retired model
   * (410), a limit (429), any 5xx (Anthropic's 529 included). A caller's other 4xx is not: it says
   * nothing about the provider's health. (Calls without an answer are counted apart.)
   */
  public static boolean isProviderFailure(int status) {
    return status == 408 || status == 410 || status == 429 || status >= 500;
  }

  /** An outage status on this provider: see {@link #OUTAGE_STATUSES} and Anthropic's 529. */
  private static boolean isOutage(Provider provider, int status) {
    return OUTAGE_STATUSES.contains(status)
        || (provider == Provider.ANTHROPIC && status == ANTHROPIC_OVERLOADED);
  }

  private static boolean saysCreditBalanceTooLow(String body) {
    return body != null && body.toLowerCase(Locale.ROOT).contains(CREDIT_BALANCE_TOO_LOW);
  }
}
