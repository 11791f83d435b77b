package dev.spendgateway.policy.request;

import dev.spendgateway.policy.request.PolicyDecision.Violation;

/**
 * Carries a violation out of a deep check to the public method that turns it into a decision. Never
 * leaves this package: callers only ever see {@link Violation} values.
 */
final class Refusal extends RuntimeException {
  private static final int BAD_REQUEST = 400;
  private static final int TOO_LARGE = 413;

  private final transient Violation violation;

  private Refusal(Violation violation) {
    super(violation.message(), null, false, false);
    this.violation = violation;
  }

  /** A 400; the message gets the rule name appended so callers can search the README for it. */
  static Refusal of(String rule, String field, String message) {
    return new Refusal(new Violation(rule, field, message + " (rule " + rule + ")", BAD_REQUEST));
  }

  /** A 413 for size limits. */
  static Refusal tooLarge(String rule, String field, String message) {
    return new Refusal(new Violation(rule, field, message + " (rule " + rule + ")", TOO_LARGE));
  }

  Violation violation() {
    return violation;
  }
}
