package dev.spendgateway.policy.access;

import java.util.regex.Pattern;

/**
 * The rule for a caller's workflow tag ({@code x-spend-tag}, the ledger API's {@code tag}): the
 * name a report groups spend by and a metric may carry as a label. Short, ASCII, and without
 * characters that mean something in CSV, JSON, a URL or a Prometheus label value, so a tag reads
 * the same in every place it reaches. Pure.
 */
public final class SpendTag {

  /** Longest tag. */
  public static final int MAX_LENGTH = 64;

  private static final Pattern RULE = Pattern.compile("[A-Za-z0-9._-]{1," + MAX_LENGTH + "}");

  /** The rule in words, for refusals. */
  public static final String DESCRIPTION = "1-" + MAX_LENGTH + " characters of [A-Za-z0-9._-]";

  private SpendTag() {}

  /** Whether {@code value} is a well-formed tag; null is not. */
  public static boolean isValid(String value) {
    return value != null && RULE.matcher(value).matches();
  }
}
