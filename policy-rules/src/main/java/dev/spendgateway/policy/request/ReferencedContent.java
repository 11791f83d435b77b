package dev.spendgateway.policy.request;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.policy.cost.UnsizedContent;
import dev.spendgateway.policy.request.PolicyLimits.UrlContent;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Content the provider would fetch or read by reference instead of receiving it in the body, and
 * inline content whose bytes do not bound its tokens ({@link UnsizedContent}: images, documents).
 *
 * <p>The reservation is made from the body's size, so content the provider fetches from a URL (an
 * image, a PDF) is invisible to it: a 200-byte body can bill 150,000 input tokens. Such content is
 * refused unless its kind is switched on in {@link UrlContent}; when it is, the caller learns that
 * the call must be reserved at the model's whole context window. Content stored with the provider
 * (any {@code file_id}, Anthropic's {@code file} source) is always refused: the gateway keeps no
 * state of its own and the provider account is shared, so a stored file would be readable by every
 * caller.
 *
 * <p>Inline images and documents pass, and the walk counts them for the estimate: an image adds
 * {@code inline-image-tokens}, a document (a base64 PDF, {@code file_data}) makes the call reserve
 * the whole context window, as URL content does.
 *
 * <p>Only the conversation is walked (messages, system, Responses input and instructions), at any
 * depth, so nested content (a tool result holding an image, a document made of blocks) is seen too.
 * Fields outside it, such as a JSON schema that names a {@code file_id} property, are not content.
 */
final class ReferencedContent {

  static final String URL_RULE = "url_content";
  static final String FILE_RULE = "file_reference";
  static final String SOURCE_RULE = "content_source";

  /** Anthropic source types whose bytes are all in the body. */
  static final Set<String> INLINE_ANTHROPIC_SOURCES = Set.of("base64", "text", "content");

  private static final String URL_SOURCE = "url";
  private static final String FILE_SOURCE = "file";
  private static final String DATA_URL_PREFIX = "data:";
  private static final String BASE64_SOURCE = "base64";

  private enum Kind {
    IMAGES("images", "an image"),
    DOCUMENTS("documents", "a document");

    final String key;
    final String what;

    Kind(String key, String what) {
      this.key = key;
      this.what = what;
    }

    boolean allowedBy(UrlContent switches) {
      return this == IMAGES ? switches.images() : switches.documents();
    }
  }

  private ReferencedContent() {}

  /** Anthropic Messages: {@code source} objects of content blocks, and any {@code file_id}. */
  static UnsizedContent anthropic(JsonNode body, UrlContent switches) {
    Walk walk = new Walk(true, switches);
    return walk.field(body, "messages").and(walk.field(body, "system"));
  }

  /**
   * OpenAI chat: {@code image_url} parts, {@code file} parts, any {@code file_id}, an assistant
   * turn's {@code audio.id}.
   */
  static UnsizedContent openAiChat(JsonNode body, UrlContent switches) {
    return new Walk(false, switches).field(body, "messages");
  }

  /** OpenAI Responses: {@code input_image}, {@code input_file}, any {@code file_id}. */
  static UnsizedContent openAiResponses(JsonNode body, UrlContent switches) {
    Walk walk = new Walk(false, switches);
    return walk.field(body, "input").and(walk.field(body, "instructions"));
  }

  /** One walk over one dialect's conversation; holds only its settings, no state. */
  private record Walk(boolean anthropic, UrlContent switches) {

    UnsizedContent field(JsonNode body, String name) {
      JsonNode value = body.get(name);
      return value == null ? UnsizedContent.NONE : visit(value, name);
    }

    private UnsizedContent visit(JsonNode node, String path) {
      UnsizedContent found = UnsizedContent.NONE;
      if (node.isArray()) {
        for (int i = 0; i < node.size(); i++) {
          found = found.and(visit(node.get(i), path + "[" + i + "]"));
        }
      } else if (node.isObject()) {
        Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
        while (fields.hasNext()) {
          Map.Entry<String, JsonNode> f = fields.next();
          String here = path + "." + f.getKey();
          found = found.and(check(node, f.getKey(), f.getValue(), here));
          found = found.and(visit(f.getValue(), here));
        }
      }
      return found;
    }

    /** The one field {@code key} of {@code owner}; refuses what may not pass. */
    private UnsizedContent check(JsonNode owner, String key, JsonNode value, String here) {
      if (value.isNull()) {
        return UnsizedContent.NONE;
      }
      if ("file_id".equals(key)) {
        throw storedFile(here);
      }
      if (!anthropic && "audio".equals(key) && value.isObject() && value.has("id")) {
        // A chat assistant turn may name an earlier audio answer by id; OpenAI keeps it for a
        // while,
        // in the same shared account as every other caller's.
        throw storedFile(here + ".id");
      }
      if (anthropic && "source".equals(key) && value.isObject()) {
        Kind kind = "image".equals(owner.path("type").asText()) ? Kind.IMAGES : Kind.DOCUMENTS;
        return anthropicSource(value, here, kind);
      }
      if (!anthropic && "image_url".equals(key)) {
        JsonNode url = value.isObject() ? value.get("url") : value;
        if (url == null || url.isNull()) {
          return UnsizedContent.NONE;
        }
        return url.asText().toLowerCase(Locale.ROOT).startsWith(DATA_URL_PREFIX)
            ? UnsizedContent.image()
            : byUrl(Kind.IMAGES, value.isObject() ? here + ".url" : here);
      }
      if (!anthropic && "file_url".equals(key)) {
        return byUrl(Kind.DOCUMENTS, here);
      }
      if (!anthropic && "file_data".equals(key)) {
        // A whole file in the body (a PDF, base64): its pages are billed as text and as images.
        return UnsizedContent.wholeContextWindow();
      }
      return UnsizedContent.NONE;
    }

    private UnsizedContent anthropicSource(JsonNode source, String here, Kind kind) {
      String type = source.path("type").asText("");
      if (BASE64_SOURCE.equals(type)) {
        // An image is billed by its pixels; a base64 document (a PDF) by its pages' text and
        // images, neither by the bytes.
        return kind == Kind.IMAGES ? UnsizedContent.image() : UnsizedContent.wholeContextWindow();
      }
      if (INLINE_ANTHROPIC_SOURCES.contains(type)) {
        // text, or content blocks (walked on their own: an image among them is counted there).
        return UnsizedContent.NONE;
      }
      if (URL_SOURCE.equals(type)) {
        return byUrl(kind, here + ".url");
      }
      if (FILE_SOURCE.equals(type)) {
        throw storedFile(here + (source.has("file_id") ? ".file_id" : ".type"));
      }
      throw Refusal.of(
          SOURCE_RULE,
          here + ".type",
          "'"
              + here
              + ".type' is '"
              + type
              + "'; the gateway accepts content sent in the body ("
              + String.join(", ", new TreeSet<>(INLINE_ANTHROPIC_SOURCES))
              + ") and, when switched on, url");
    }

    private UnsizedContent byUrl(Kind kind, String field) {
      if (kind.allowedBy(switches)) {
        return UnsizedContent.wholeContextWindow();
      }
      throw Refusal.of(
          URL_RULE,
          field,
          "'"
              + field
              + "' asks the provider to fetch "
              + kind.what
              + " from a URL; its size, and so its cost, is unknown until it is fetched, so the"
              + " gateway refuses it (policy.allow-url-content."
              + kind.key
              + " is off). Send the content inline (base64 or a data: URL) instead");
    }

    private static Refusal storedFile(String field) {
      return Refusal.of(
          FILE_RULE,
          field,
          "'"
              + field
              + "' reads a file stored with the provider; the gateway keeps no files and the"
              + " provider account is shared by every caller, so stored files are never reachable"
              + " through it. Send the content inline instead");
    }
  }
}
