package dev.spendgateway.policy.request;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.policy.request.PolicyLimits.UrlContent;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Content the provider would fetch or read by reference instead of receiving it in the body.
 *
 * <p>The reservation is made from the body's size, so content the provider fetches from a URL (an
 * image, a PDF) is invisible to it: a 200-byte body can bill 150,000 input tokens. Such content is
 * refused unless its kind is switched on in {@link UrlContent}; when it is, the caller learns that
 * the call must be reserved at the model's whole context window. Content stored with the provider
 * (any {@code file_id}, Anthropic's {@code file} source) is always refused: the gateway keeps no
 * state of its own and the provider account is shared, so a stored file would be readable by every
 * caller.
 *
 * <p>Only the conversation is walked (messages, system, Responses input and instructions), at any
 * depth, so nested content (a tool result holding an image, a document made of blocks) is seen too.
 * Fields outside it, such as a JSON schema that names a {@code file_id} property, are not content.
 */
final class ReferencedContent {

  /** What a walk found that was allowed but is fetched by the provider. */
  enum Fetched {
    NOTHING,
    URL_CONTENT;

    Fetched or(Fetched other) {
      return this == URL_CONTENT ? this : other;
    }
  }

  static final String URL_RULE = "url_content";
  static final String FILE_RULE = "file_reference";
  static final String SOURCE_RULE = "content_source";

  /** Anthropic source types whose bytes are all in the body. */
  static final Set<String> INLINE_ANTHROPIC_SOURCES = Set.of("base64", "text", "content");

  private static final String URL_SOURCE = "url";
  private static final String FILE_SOURCE = "file";
  private static final String DATA_URL_PREFIX = "data:";

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
  static Fetched anthropic(JsonNode body, UrlContent switches) {
    Walk walk = new Walk(true, switches);
    return walk.field(body, "messages").or(walk.field(body, "system"));
  }

  /**
   * OpenAI chat: {@code image_url} parts, {@code file} parts, any {@code file_id}, an assistant
   * turn's {@code audio.id}.
   */
  static Fetched openAiChat(JsonNode body, UrlContent switches) {
    return new Walk(false, switches).field(body, "messages");
  }

  /** OpenAI Responses: {@code input_image}, {@code input_file}, any {@code file_id}. */
  static Fetched openAiResponses(JsonNode body, UrlContent switches) {
    Walk walk = new Walk(false, switches);
    return walk.field(body, "input").or(walk.field(body, "instructions"));
  }

  /** One walk over one dialect's conversation; holds only its settings, no state. */
  private record Walk(boolean anthropic, UrlContent switches) {

    Fetched field(JsonNode body, String name) {
      JsonNode value = body.get(name);
      return value == null ? Fetched.NOTHING : visit(value, name);
    }

    private Fetched visit(JsonNode node, String path) {
      Fetched found = Fetched.NOTHING;
      if (node.isArray()) {
        for (int i = 0; i < node.size(); i++) {
          found = found.or(visit(node.get(i), path + "[" + i + "]"));
        }
      } else if (node.isObject()) {
        Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
        while (fields.hasNext()) {
          Map.Entry<String, JsonNode> f = fields.next();
          String here = path + "." + f.getKey();
          found = found.or(check(node, f.getKey(), f.getValue(), here));
          found = found.or(visit(f.getValue(), here));
        }
      }
      return found;
    }

    /** The one field {@code key} of {@code owner}; refuses what may not pass. */
    private Fetched check(JsonNode owner, String key, JsonNode value, String here) {
      if (value.isNull()) {
        return Fetched.NOTHING;
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
        boolean inline =
            url == null
                || url.isNull()
                || url.asText().toLowerCase(Locale.ROOT).startsWith(DATA_URL_PREFIX);
        return inline
            ? Fetched.NOTHING
            : byUrl(Kind.IMAGES, value.isObject() ? here + ".url" : here);
      }
      if (!anthropic && "file_url".equals(key)) {
        return byUrl(Kind.DOCUMENTS, here);
      }
      return Fetched.NOTHING;
    }

    private Fetched anthropicSource(JsonNode source, String here, Kind kind) {
      String type = source.path("type").asText("");
      if (INLINE_ANTHROPIC_SOURCES.contains(type)) {
        return Fetched.NOTHING;
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

    private Fetched byUrl(Kind kind, String field) {
      if (kind.allowedBy(switches)) {
        return Fetched.URL_CONTENT;
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
