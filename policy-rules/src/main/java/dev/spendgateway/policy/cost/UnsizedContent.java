package dev.spendgateway.policy.cost;

/**
 * Content in a call whose input tokens its bytes do not bound, found by walking the conversation.
 * The reservation counts one input token per {@code bytes-per-token} bytes of body, which holds for
 * text; it does not for:
 *
 * <ul>
 *   <li>an inline image (base64, a {@code data:} URL): billed by its pixels after the provider
 *       scales it down, not by its bytes, and a small file can have large dimensions (a one-colour
 *       PNG of 1092 × 1092 pixels is 226 bytes, 304 in base64: about 100 tokens by its bytes, about
 *       1,590 billed by Claude);
 *   <li>an inline document (a base64 PDF, OpenAI {@code file_data}): every page is billed as text
 *       and as an image of the page, and the text sits in compressed streams, so a small file can
 *       fill the whole context window;
 *   <li>content the provider fetches from a URL: nothing about it is in the body at all.
 * </ul>
 *
 * @param inlineImages inline images in the conversation; each adds {@code inline-image-tokens}
 * @param wholeContext an inline document or URL content is present: only the model's context window
 *     bounds the input
 */
public record UnsizedContent(long inlineImages, boolean wholeContext) {

  /** Text only: the bytes bound the input. */
  public static final UnsizedContent NONE = new UnsizedContent(0, false);

  public UnsizedContent {
    if (inlineImages < 0) {
      throw new IllegalArgumentException("inline image count cannot be negative");
    }
  }

  /** One more inline image. */
  public static UnsizedContent image() {
    return new UnsizedContent(1, false);
  }

  /** Content only the context window bounds. */
  public static UnsizedContent wholeContextWindow() {
    return new UnsizedContent(0, true);
  }

  /** What two parts of a conversation hold together. */
  public UnsizedContent and(UnsizedContent other) {
    return new UnsizedContent(
        Math.addExact(inlineImages, other.inlineImages), wholeContext || other.wholeContext);
  }
}
