package dev.spendgateway.policy.access;

import java.util.regex.Pattern;

/**
 * The one rule for every name the ledger books under: brand ids, preview ids and reservation ids,
 * wherever they arrive (spend headers, ledger and admin JSON bodies, URL paths, {@code ?brand=}).
 *
 * <p>One rule, so a brand a provider route accepts is a brand an operator can look up and credit:
 * the same id later appears as a URL path segment ({@code /admin/brands/{id}}) and a query value
 * ({@code /usage?brand=}), so characters with a meaning in URLs ({@code /}, {@code +}, {@code =},
 * {@code @}, {@code %}, {@code ?}, {@code #}) are out, and so are whitespace and control
 * characters, which would make log lines and journal events ambiguous. Pure.
 */
public final class LedgerId {

  /** Longest id; the ledger refuses longer ones as well. */
  public static final int MAX_LENGTH = 128;

  private static final Pattern RULE = Pattern.compile("[A-Za-z0-9._:-]{1," + MAX_LENGTH + "}");

  /** The rule in words, for refusals: "1-128 characters of [A-Za-z0-9._:-]". */
  public static final String DESCRIPTION = "1-" + MAX_LENGTH + " characters of [A-Za-z0-9._:-]";

  private LedgerId() {}

  /** Whether {@code value} is a well-formed id; null is not. */
  public static boolean isValid(String value) {
    return value != null && RULE.matcher(value).matches();
  }
}
