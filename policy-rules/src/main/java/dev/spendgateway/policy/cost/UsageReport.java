package dev.spendgateway.policy.cost;

/**
 * The outcome of reading usage from a provider answer. "Not reported" (a cut stream, an unreadable
 * body) is kept distinct from a reported zero: the first keeps the worst case, the second costs $0.
 */
public sealed interface UsageReport {

  record Reported(TokenUsage usage) implements UsageReport {}

  record NotReported(String reason) implements UsageReport {}
}
