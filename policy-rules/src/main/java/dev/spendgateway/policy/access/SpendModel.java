package dev.spendgateway.policy.access;

import java.util.regex.Pattern;

/**
 * The rule for the model and the provider a reservation is journaled with (the ledger API's {@code
 * model} and {@code provider}): names a report groups spend by. Wider than a workflow tag, since
 * providers spell model ids with colons, slashes and {@code @} ({@code ft:gpt-4o:org:x}, {@code
 * org/model}), but still short, ASCII, and without whitespace or characters that mean something in
 * CSV or JSON, so a name reads the same in every place it reaches. Pure.
 */
public final class SpendModel {

  /** Longest model or provider name. */
  public static final int MAX_LENGTH = 128;

  private static final Pattern RULE = Pattern.compile("[A-Za-z0-9._:/@+-]{1," + MAX_LENGTH + "}");

  /** The rule in words, for refusals. */
  public static final String DESCRIPTION = "1-" + MAX_LENGTH + " characters of [A-Za-z0-9._:/@+-]";

  private SpendModel() {}

  /** Whether {@code value} is a well-formed model or provider name; null is not. */
  public static boolean isValid(String value) {
    return value != null && RULE.matcher(value).matches();
  }
}
