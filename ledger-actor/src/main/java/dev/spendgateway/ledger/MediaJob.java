package dev.spendgateway.ledger;

import java.util.Objects;

/**
 * The media job a reservation pays for: which media account runs it (its unfinished jobs are
 * counted against the account's concurrency limit), the caller's idempotency key, and the
 * provider's job id once the provider has accepted the submit.
 *
 * @param account the media account (one per provider key); never the key itself
 * @param idempotencyKey the caller's {@code idempotency-key}, or {@code null}
 * @param jobId the provider's job id; {@code null} until the submit was answered
 */
public record MediaJob(String account, String idempotencyKey, String jobId) {
  public MediaJob {
    Objects.requireNonNull(account, "account");
  }

  public MediaJob withJobId(String id) {
    return new MediaJob(account, idempotencyKey, id);
  }

  public boolean submitted() {
    return jobId != null;
  }
}
