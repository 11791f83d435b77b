package dev.spendgateway.upstream.client;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.apache.pekko.http.javadsl.model.HttpHeader;

/**
 * The providers' rate-limit headers, read into numbers: how many requests and tokens are left in
 * the provider's current window and what the window allows. Both providers send them on every
 * answer, so the gateway sees an account nearing its limit before the first 429.
 *
 * <ul>
 *   <li>OpenAI: {@code x-ratelimit-limit-requests}, {@code x-ratelimit-remaining-requests}, {@code
 *       x-ratelimit-limit-tokens}, {@code x-ratelimit-remaining-tokens}.
 *   <li>Anthropic: {@code
 *       anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining}}.
 * </ul>
 *
 * Resets (durations or timestamps) are not read: the remaining count is what an operator watches.
 * Only the four known resources are kept, so a provider inventing a new header cannot grow the
 * number of metric series. Pure.
 */
public final class RateLimitHeaders {
  private static final String OPENAI_PREFIX = "x-ratelimit-";
  private static final String ANTHROPIC_PREFIX = "anthropic-ratelimit-";
  private static final Set<String> RESOURCES =
      Set.of("requests", "tokens", "input_tokens", "output_tokens");

  private RateLimitHeaders() {}

  /**
   * What an answer's headers said.
   *
   * @param remaining per resource ({@code requests}, {@code tokens}, {@code input_tokens}, {@code
   *     output_tokens}), what is left in the current window
   * @param limit per resource, what the window allows
   */
  public record Reading(Map<String, Long> remaining, Map<String, Long> limit) {
    public Reading {
      remaining = Map.copyOf(remaining);
      limit = Map.copyOf(limit);
    }

    public boolean isEmpty() {
      return remaining.isEmpty() && limit.isEmpty();
    }
  }

  /**
   * Reads every rate-limit header of one answer; headers that are not whole numbers are skipped.
   */
  public static Reading read(Iterable<HttpHeader> headers) {
    Map<String, Long> remaining = new LinkedHashMap<>();
    Map<String, Long> limit = new LinkedHashMap<>();
    for (HttpHeader h : headers) {
      String name = h.lowercaseName();
      String kind;
      String resource;
      if (name.startsWith(OPENAI_PREFIX)) {
        // x-ratelimit-remaining-tokens
        String rest = name.substring(OPENAI_PREFIX.length());
        int dash = rest.indexOf('-');
        if (dash < 0) {
          continue;
        }
        kind = rest.substring(0, dash);
        resource = rest.substring(dash + 1);
      } else if (name.startsWith(ANTHROPIC_PREFIX)) {
        // anthropic-ratelimit-input-tokens-remaining
        String rest = name.substring(ANTHROPIC_PREFIX.length());
        int dash = rest.lastIndexOf('-');
        if (dash < 0) {
          continue;
        }
        resource = rest.substring(0, dash);
        kind = rest.substring(dash + 1);
      } else {
        continue;
      }
      resource = resource.replace('-', '_').toLowerCase(Locale.ROOT);
      if (!RESOURCES.contains(resource)) {
        continue;
      }
      Long value = wholeNumber(h.value());
      if (value == null) {
        continue;
      }
      if (kind.equals("remaining")) {
        remaining.put(resource, value);
      } else if (kind.equals("limit")) {
        limit.put(resource, value);
      }
    }
    return new Reading(remaining, limit);
  }

  private static Long wholeNumber(String value) {
    try {
      long n = Long.parseLong(value.trim());
      return n < 0 ? null : n;
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
