package dev.spendgateway.upstream.translate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Translates an OpenAI Chat Completions request into an Anthropic Messages request, for the
 * failover router's Claude fallback. Pure: no I/O, no clock; the input is never modified.
 *
 * <p>What maps, and how:
 *
 * <ul>
 *   <li>{@code system} and {@code developer} messages, wherever they stand, become the top-level
 *       {@code system} string (joined with a blank line, in order): Anthropic has no system role
 *       inside {@code messages}.
 *   <li>{@code user} / {@code assistant} messages keep their role; string content stays a string,
 *       content parts become blocks: {@code text} → text block; {@code image_url} with a {@code
 *       data:image/…;base64,} URL → {@code image} block with a base64 source, with an {@code
 *       http(s)} URL → {@code image} block with a url source ({@code detail} is dropped). The
 *       {@code name} of a message is dropped (Anthropic has none).
 *   <li>{@code max_completion_tokens}, else {@code max_tokens}, → {@code max_tokens}; absent → the
 *       profile's default (Anthropic requires it).
 *   <li>{@code temperature} is clamped to Anthropic's 0..1 (OpenAI allows 0..2): a caller asking
 *       for more randomness than Claude offers gets Claude's most random setting, never an error.
 *   <li>{@code top_p} is passed on; when both {@code temperature} and {@code top_p} are sent, only
 *       {@code temperature} is kept (current Claude models refuse the pair).
 *   <li>{@code stop} (string or list) → {@code stop_sequences}; {@code user} → {@code
 *       metadata.user_id}; {@code stream} → {@code stream}.
 *   <li>{@code response_format}: Anthropic has no such field. {@code json_object} becomes an
 *       instruction appended to {@code system} ("answer with one JSON object only"). {@code
 *       json_schema} becomes Anthropic's native structured output ({@code output_config.format})
 *       when {@link Options#nativeJsonSchema()} says the target model has the {@code json_schema}
 *       feature, otherwise an instruction carrying the schema in {@code system} (the same text
 *       {@link SchemaInstructions} writes after a "grammar is too large" refusal).
 *   <li>Ignored because they do not change the answer: {@code model} (replaced by the profile's
 *       fallback model), {@code stream_options} (the chunk translator always ends with a usage
 *       chunk), {@code store}, {@code metadata}, {@code service_tier}, {@code seed}, {@code
 *       parallel_tool_calls}, {@code n: 1}, {@code logprobs: false}, zero penalties, empty {@code
 *       tools}, {@code tool_choice: "none"}.
 * </ul>
 *
 * <p>Everything else is refused with a {@link TranslationError} naming the field: tools and
 * function calling, {@code n > 1}, logprobs, audio, predicted outputs, web search options, logit
 * bias, non-zero penalties, reasoning effort, and any field this class does not know. Refusing
 * unknown fields is deliberate: a new OpenAI feature must not silently vanish on the fallback.
 */
public final class ChatToMessages {
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  /** Anthropic's temperature range is 0..1; OpenAI's is 0..2. */
  private static final double ANTHROPIC_MAX_TEMPERATURE = 1.0;

  /** Image types Anthropic accepts in a base64 source. */
  private static final Set<String> IMAGE_MEDIA_TYPES =
      Set.of("image/jpeg", "image/png", "image/gif", "image/webp");

  private static final Pattern DATA_URL =
      Pattern.compile("^data:([^;,]+);base64,(.*)$", Pattern.DOTALL);

  /**
   * Fields that carry no behaviour Claude would lose, or that are checked elsewhere in this class.
   */
  private static final Set<String> KNOWN_FIELDS =
      Set.of(
          "model",
          "messages",
          "max_tokens",
          "max_completion_tokens",
          "temperature",
          "top_p",
          "stop",
          "stream",
          "stream_options",
          "response_format",
          "n",
          "user",
          "store",
          "metadata",
          "service_tier",
          "seed",
          "presence_penalty",
          "frequency_penalty",
          "logprobs",
          "top_logprobs",
          "tools",
          "tool_choice",
          "parallel_tool_calls",
          "functions",
          "function_call",
          "audio",
          "modalities",
          "prediction",
          "web_search_options",
          "logit_bias",
          "reasoning_effort");

  /** Why each known-but-unsupported field is refused when it asks for something. */
  private static final Map<String, String> UNSUPPORTED =
      Map.of(
          "audio", "audio output is not available on the Claude fallback",
          "prediction", "predicted outputs are not available on the Claude fallback",
          "web_search_options", "web search is not translated to the Claude fallback",
          "functions", "function calling is not translated to the Claude fallback",
          "function_call", "function calling is not translated to the Claude fallback",
          "reasoning_effort", "reasoning effort has no equivalent on the Claude fallback",
          "top_logprobs", "logprobs are not available on the Claude fallback");

  private ChatToMessages() {}

  /**
   * How to translate for one target.
   *
   * @param model the Anthropic model id to call (the profile's fallback)
   * @param defaultMaxTokens {@code max_tokens} when the request names none (the profile's default)
   * @param nativeJsonSchema true when the target model has the {@code json_schema} feature: a
   *     {@code json_schema} response format then becomes {@code output_config.format}; false puts
   *     the schema into the system prompt
   */
  public record Options(String model, long defaultMaxTokens, boolean nativeJsonSchema) {
    public Options {
      Objects.requireNonNull(model, "model");
      if (defaultMaxTokens < 1) {
        throw new IllegalArgumentException("defaultMaxTokens must be positive");
      }
    }
  }

  /**
   * Translates one request.
   *
   * @param chatRequest an OpenAI Chat Completions request body
   * @return a new Anthropic Messages request body
   * @throws TranslationError when the request uses something the fallback cannot honour
   */
  public static ObjectNode translate(JsonNode chatRequest, Options options) {
    if (chatRequest == null || !chatRequest.isObject()) {
      throw new TranslationError("", "the request body must be a JSON object");
    }
    refuseUnsupported(chatRequest);
    ObjectNode out = JSON.objectNode();
    out.put("model", options.model());
    List<String> system = new ArrayList<>();
    out.set("messages", messages(chatRequest.path("messages"), system));
    out.put("max_tokens", maxTokens(chatRequest, options));
    samplingParameters(chatRequest, out);
    stopSequences(chatRequest.get("stop"), out);
    responseFormat(chatRequest.get("response_format"), options, system, out);
    if (!system.isEmpty()) {
      out.put("system", String.join("\n\n", system));
    }
    JsonNode user = chatRequest.get("user");
    if (user != null && user.isTextual() && !user.asText().isEmpty()) {
      out.putObject("metadata").put("user_id", user.asText());
    }
    if (chatRequest.path("stream").asBoolean(false)) {
      out.put("stream", true);
    }
    return out;
  }

  private static void refuseUnsupported(JsonNode req) {
    Iterator<String> names = req.fieldNames();
    while (names.hasNext()) {
      String name = names.next();
      if (!KNOWN_FIELDS.contains(name)) {
        throw new TranslationError(
            name, "field '" + name + "' is not supported on the Claude fallback");
      }
      JsonNode value = req.get(name);
      if (value.isNull()) {
        continue;
      }
      String reason = UNSUPPORTED.get(name);
      if (reason != null) {
        throw new TranslationError(name, reason);
      }
    }
    JsonNode tools = req.get("tools");
    if (tools != null && !tools.isNull() && !(tools.isArray() && tools.isEmpty())) {
      throw new TranslationError("tools", "tools are not translated to the Claude fallback");
    }
    JsonNode toolChoice = req.get("tool_choice");
    if (toolChoice != null && !toolChoice.isNull() && !"none".equals(toolChoice.asText(""))) {
      throw new TranslationError(
          "tool_choice", "tool choice is not translated to the Claude fallback");
    }
    JsonNode n = req.get("n");
    if (n != null && !n.isNull() && n.asInt(1) != 1) {
      throw new TranslationError(
          "n", "the Claude fallback answers with one choice only (n must be 1)");
    }
    if (req.path("logprobs").asBoolean(false)) {
      throw new TranslationError("logprobs", "logprobs are not available on the Claude fallback");
    }
    for (String penalty : List.of("presence_penalty", "frequency_penalty")) {
      JsonNode p = req.get(penalty);
      if (p != null && !p.isNull() && p.asDouble(0) != 0) {
        throw new TranslationError(penalty, penalty + " has no equivalent on the Claude fallback");
      }
    }
    JsonNode logitBias = req.get("logit_bias");
    if (logitBias != null && !logitBias.isNull() && !logitBias.isEmpty()) {
      throw new TranslationError(
          "logit_bias", "logit bias has no equivalent on the Claude fallback");
    }
    JsonNode modalities = req.get("modalities");
    if (modalities != null && modalities.isArray()) {
      for (JsonNode m : modalities) {
        if (!"text".equals(m.asText())) {
          throw new TranslationError(
              "modalities", "only text output is available on the Claude fallback");
        }
      }
    }
  }

  private static ArrayNode messages(JsonNode messages, List<String> system) {
    if (!messages.isArray() || messages.isEmpty()) {
      throw new TranslationError("messages", "messages must be a non-empty array");
    }
    ArrayNode out = JSON.arrayNode();
    for (int i = 0; i < messages.size(); i++) {
      JsonNode message = messages.get(i);
      String where = "messages[" + i + "]";
      String role = message.path("role").asText("");
      switch (role) {
        case "system", "developer" -> system.add(systemText(message.get("content"), where));
        case "user" -> out.add(turn("user", message, where, true));
        case "assistant" -> {
          if (message.hasNonNull("tool_calls") || message.hasNonNull("function_call")) {
            throw new TranslationError(
                where + ".tool_calls", "tool calls are not translated to the Claude fallback");
          }
          if (message.hasNonNull("audio")) {
            throw new TranslationError(
                where + ".audio", "audio is not available on the Claude fallback");
          }
          out.add(turn("assistant", message, where, false));
        }
        case "tool", "function" ->
            throw new TranslationError(
                where + ".role", "tool results are not translated to the Claude fallback");
        default -> throw new TranslationError(where + ".role", "unknown role '" + role + "'");
      }
    }
    if (out.isEmpty()) {
      throw new TranslationError(
          "messages", "messages must hold at least one user or assistant message");
    }
    return out;
  }

  private static String systemText(JsonNode content, String where) {
    if (content != null && content.isTextual()) {
      return content.asText();
    }
    if (content != null && content.isArray()) {
      List<String> texts = new ArrayList<>();
      for (int j = 0; j < content.size(); j++) {
        JsonNode part = content.get(j);
        if (!"text".equals(part.path("type").asText())) {
          throw new TranslationError(
              where + ".content[" + j + "]", "system messages may only hold text parts");
        }
        texts.add(part.path("text").asText(""));
      }
      return String.join("\n", texts);
    }
    throw new TranslationError(where + ".content", "system content must be a string or text parts");
  }

  private static ObjectNode turn(
      String role, JsonNode message, String where, boolean imagesAllowed) {
    ObjectNode out = JSON.objectNode();
    out.put("role", role);
    JsonNode content = message.get("content");
    if (content != null && content.isTextual()) {
      if (content.asText().isEmpty()) {
        throw new TranslationError(
            where + ".content", "empty content is refused by the Claude fallback");
      }
      out.put("content", content.asText());
      return out;
    }
    if (content == null || !content.isArray() || content.isEmpty()) {
      throw new TranslationError(where + ".content", "content must be a string or a list of parts");
    }
    ArrayNode blocks = out.putArray("content");
    for (int j = 0; j < content.size(); j++) {
      blocks.add(block(content.get(j), where + ".content[" + j + "]", imagesAllowed));
    }
    return out;
  }

  private static ObjectNode block(JsonNode part, String where, boolean imagesAllowed) {
    String type = part.path("type").asText("");
    switch (type) {
      case "text" -> {
        String text = part.path("text").asText("");
        if (text.isEmpty()) {
          throw new TranslationError(where, "empty text parts are refused by the Claude fallback");
        }
        ObjectNode block = JSON.objectNode();
        block.put("type", "text");
        block.put("text", text);
        return block;
      }
      case "image_url" -> {
        if (!imagesAllowed) {
          throw new TranslationError(where, "only user messages may carry images");
        }
        return image(part.path("image_url").path("url").asText(""), where);
      }
      case "refusal" -> throw new TranslationError(where, "refusal parts are not translated");
      default ->
          throw new TranslationError(
              where, "content part type '" + type + "' is not available on the Claude fallback");
    }
  }

  private static ObjectNode image(String url, String where) {
    ObjectNode block = JSON.objectNode();
    block.put("type", "image");
    ObjectNode source = block.putObject("source");
    Matcher data = DATA_URL.matcher(url);
    if (data.matches()) {
      String mediaType = data.group(1).toLowerCase(java.util.Locale.ROOT);
      if (!IMAGE_MEDIA_TYPES.contains(mediaType)) {
        throw new TranslationError(
            where, "image type " + mediaType + " is not accepted by Claude (jpeg, png, gif, webp)");
      }
      source.put("type", "base64");
      source.put("media_type", mediaType);
      source.put("data", data.group(2));
      return block;
    }
    if (url.startsWith("https://") || url.startsWith("http://")) {
      source.put("type", "url");
      source.put("url", url);
      return block;
    }
    throw new TranslationError(where, "image_url must be a base64 data: URL or an http(s) URL");
  }

  private static long maxTokens(JsonNode req, Options options) {
    for (String key : List.of("max_completion_tokens", "max_tokens")) {
      JsonNode value = req.get(key);
      if (value != null && !value.isNull()) {
        if (!value.canConvertToExactIntegral() || value.asLong() < 1) {
          throw new TranslationError(key, key + " must be a positive integer");
        }
        return value.asLong();
      }
    }
    return options.defaultMaxTokens();
  }

  private static void samplingParameters(JsonNode req, ObjectNode out) {
    JsonNode temperature = req.get("temperature");
    JsonNode topP = req.get("top_p");
    boolean hasTemperature = temperature != null && !temperature.isNull();
    if (hasTemperature) {
      if (!temperature.isNumber() || temperature.asDouble() < 0) {
        throw new TranslationError("temperature", "temperature must be a number from 0 to 2");
      }
      out.put("temperature", Math.min(temperature.asDouble(), ANTHROPIC_MAX_TEMPERATURE));
    }
    if (topP != null && !topP.isNull() && !hasTemperature) {
      if (!topP.isNumber() || topP.asDouble() < 0 || topP.asDouble() > 1) {
        throw new TranslationError("top_p", "top_p must be a number from 0 to 1");
      }
      out.put("top_p", topP.asDouble());
    }
  }

  private static void stopSequences(JsonNode stop, ObjectNode out) {
    if (stop == null || stop.isNull()) {
      return;
    }
    ArrayNode sequences = JSON.arrayNode();
    if (stop.isTextual()) {
      sequences.add(stop.asText());
    } else if (stop.isArray()) {
      for (JsonNode s : stop) {
        if (!s.isTextual()) {
          throw new TranslationError("stop", "stop must be a string or a list of strings");
        }
        sequences.add(s.asText());
      }
    } else {
      throw new TranslationError("stop", "stop must be a string or a list of strings");
    }
    if (!sequences.isEmpty()) {
      out.set("stop_sequences", sequences);
    }
  }

  private static void responseFormat(
      JsonNode format, Options options, List<String> system, ObjectNode out) {
    if (format == null || format.isNull()) {
      return;
    }
    String type = format.path("type").asText("");
    switch (type) {
      case "text" -> {}
      case "json_object" -> system.add(SchemaInstructions.JSON_OBJECT_INSTRUCTION);
      case "json_schema" -> {
        JsonNode schema = format.path("json_schema").get("schema");
        if (schema == null || !schema.isObject()) {
          throw new TranslationError(
              "response_format.json_schema.schema", "json_schema needs a schema object");
        }
        if (options.nativeJsonSchema()) {
          ObjectNode f = out.putObject("output_config").putObject("format");
          f.put("type", "json_schema");
          f.set("schema", schema.deepCopy());
        } else {
          system.add(SchemaInstructions.forSchema(schema));
        }
      }
      default ->
          throw new TranslationError(
              "response_format.type", "response format '" + type + "' is not supported");
    }
  }
}
