package dev.spendgateway.policy.request;

import dev.spendgateway.policy.config.ConfigMaps;
import dev.spendgateway.policy.money.Micros;
import java.math.BigDecimal;
import java.util.Locale;
import java.util.Map;

/**
 * The numeric limits of the request policy and the worst-case estimate (conf/policy.conf). Defaults
 * are the values conf/policy.conf ships with (its comments say why each is what it is).
 *
 * @param maxBodyBytes largest request body; larger is 413
 * @param minMessages fewest conversation entries
 * @param maxMessages most conversation entries
 * @param anthropicMaxTokens cap on Anthropic {@code max_tokens}
 * @param openAiMaxTokens cap on OpenAI output tokens; also what is assumed and written when absent
 * @param maxChoices most OpenAI chat choices ({@code n}); the output reservation is multiplied by n
 * @param webSearchMaxUses most web searches per call
 * @param webSearchMicrosPerUse price of one web search
 * @param webSearchInputTokensPerUse input tokens reserved per allowed search for the results read
 *     back
 * @param transcriptionMaxFileBytes largest audio upload; larger is 413
 * @param bytesPerToken request bytes counted as one input token in the estimate
 * @param audioMinBitsPerSecond lowest bitrate assumed when bounding an upload's duration
 * @param inlineImageTokens input tokens reserved per inline image on top of its bytes (an image is
 *     billed by its pixels, not its bytes)
 * @param urlContent which kinds of content the provider fetches from a URL are allowed (all off by
 *     default); a call carrying allowed URL content reserves its input at the model's whole context
 */
public record PolicyLimits(
    long maxBodyBytes,
    int minMessages,
    int maxMessages,
    long anthropicMaxTokens,
    long openAiMaxTokens,
    int maxChoices,
    int webSearchMaxUses,
    long webSearchMicrosPerUse,
    long webSearchInputTokensPerUse,
    long transcriptionMaxFileBytes,
    long bytesPerToken,
    long audioMinBitsPerSecond,
    long inlineImageTokens,
    UrlContent urlContent) {

  private static final String PATH = "policy";
  private static final String URL_CONTENT = "allow-url-content";

  /**
   * Switches for content the provider fetches from a URL the caller names. Off, such content is
   * refused: its size, and so its input cost, is unknown until the provider has fetched it. On, the
   * call reserves its input at the model's whole context window, the only bound known beforehand.
   * Content stored with the provider ({@code file_id}) has no switch: the gateway is stateless and
   * the provider account is shared by every caller, so a stored file is never reachable through it.
   * (Inline documents reserve the whole window too, switch or not: see {@code UnsizedContent}.)
   *
   * @param images image URLs: Anthropic {@code image} blocks with a {@code url} source, OpenAI chat
   *     {@code image_url} and Responses {@code input_image.image_url} that are not {@code data:}
   *     URLs
   * @param documents document and file URLs: Anthropic {@code document} (and every other non-image
   *     block) with a {@code url} source, OpenAI Responses {@code input_file.file_url}
   */
  public record UrlContent(boolean images, boolean documents) {
    /** Nothing fetched by URL: the default. */
    public static final UrlContent NONE = new UrlContent(false, false);
  }

  public PolicyLimits {
    if (maxBodyBytes <= 0
        || minMessages < 0
        || maxMessages < minMessages
        || anthropicMaxTokens <= 0
        || openAiMaxTokens <= 0
        || maxChoices <= 0
        || webSearchMaxUses < 0
        || webSearchMicrosPerUse < 0
        || webSearchInputTokensPerUse < 0
        || transcriptionMaxFileBytes <= 0
        || bytesPerToken <= 0
        || audioMinBitsPerSecond <= 0
        || inlineImageTokens < 0
        || urlContent == null) {
      throw new IllegalArgumentException("policy limits out of range: " + this);
    }
  }

  /** The same numbers conf/policy.conf ships with, for tests and tools that read no config. */
  public static PolicyLimits defaults() {
    return new PolicyLimits(
        4L * 1024 * 1024,
        1,
        12,
        64_000,
        32_000,
        4,
        8,
        10_000,
        4_000,
        25L * 1024 * 1024,
        3,
        8_000,
        10_000,
        UrlContent.NONE);
  }

  /**
   * Reads the unwrapped {@code policy} object of conf/policy.conf: {@code
   * ConfigFactory.load().getConfig("policy").root().unwrapped()}. A missing key keeps its default,
   * so an override file only names what it changes.
   */
  public static PolicyLimits fromMap(Map<String, Object> root) {
    PolicyLimits d = defaults();
    return new PolicyLimits(
        whole(root, "max-body-bytes", d.maxBodyBytes),
        (int) whole(root, "min-messages", d.minMessages),
        (int) whole(root, "max-messages", d.maxMessages),
        whole(root, "anthropic-max-tokens", d.anthropicMaxTokens),
        whole(root, "openai-max-tokens", d.openAiMaxTokens),
        (int) whole(root, "max-choices", d.maxChoices),
        (int) whole(root, "web-search-max-uses", d.webSearchMaxUses),
        ConfigMaps.decimal(root, "web-search-usd-per-use", PATH)
            .map(PolicyLimits::micros)
            .orElse(d.webSearchMicrosPerUse),
        whole(root, "web-search-input-tokens-per-use", d.webSearchInputTokensPerUse),
        whole(root, "transcription-max-file-bytes", d.transcriptionMaxFileBytes),
        whole(root, "bytes-per-token", d.bytesPerToken),
        whole(root, "audio-min-bits-per-second", d.audioMinBitsPerSecond),
        whole(root, "inline-image-tokens", d.inlineImageTokens),
        urlContent(root, d.urlContent));
  }

  /** These limits with other URL content switches (an operator override, a test). */
  public PolicyLimits withUrlContent(UrlContent switches) {
    return new PolicyLimits(
        maxBodyBytes,
        minMessages,
        maxMessages,
        anthropicMaxTokens,
        openAiMaxTokens,
        maxChoices,
        webSearchMaxUses,
        webSearchMicrosPerUse,
        webSearchInputTokensPerUse,
        transcriptionMaxFileBytes,
        bytesPerToken,
        audioMinBitsPerSecond,
        inlineImageTokens,
        switches);
  }

  /** The optional {@code allow-url-content} object; each switch keeps its default when absent. */
  private static UrlContent urlContent(Map<String, Object> root, UrlContent fallback) {
    if (root.get(URL_CONTENT) == null) {
      return fallback;
    }
    Map<String, Object> switches = ConfigMaps.object(root, URL_CONTENT, PATH);
    String path = PATH + "." + URL_CONTENT;
    return new UrlContent(
        flag(switches, "images", path, fallback.images()),
        flag(switches, "documents", path, fallback.documents()));
  }

  /**
   * A boolean switch. A file gives HOCON booleans; a {@code -Dpolicy...=true} override arrives as
   * its text, so the words HOCON reads as booleans are accepted too. Anything else fails at start.
   */
  private static boolean flag(Map<String, Object> map, String key, String path, boolean fallback) {
    Object value = map.get(key);
    if (value == null) {
      return fallback;
    }
    if (value instanceof Boolean b) {
      return b;
    }
    return switch (value.toString().trim().toLowerCase(Locale.ROOT)) {
      case "true", "yes", "on" -> true;
      case "false", "no", "off" -> false;
      default ->
          throw new IllegalArgumentException(
              path + "." + key + " must be true or false, was " + value);
    };
  }

  private static long whole(Map<String, Object> root, String key, long fallback) {
    return ConfigMaps.wholeNumber(root, key, PATH).orElse(fallback);
  }

  private static long micros(BigDecimal usd) {
    try {
      return Micros.ofUsdExact(usd);
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(
          PATH + ".web-search-usd-per-use has more than six decimals");
    }
  }
}
