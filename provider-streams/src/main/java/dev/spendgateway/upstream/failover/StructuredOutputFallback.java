package dev.spendgateway.upstream.failover;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.upstream.translate.SchemaInstructions;
import java.util.Locale;
import java.util.Optional;

/**
 * Pure helpers for the router's two structured-output downgrades (docs/ROUTER.md): OpenAI strict
 * {@code json_schema} rejected with a 400 → the same turn in {@code json_object} mode with the
 * schema as an instruction; Claude "compiled grammar is too large" → the schema moves from {@code
 * output_config.format} into the system prompt. Inputs are never modified; each helper returns a
 * new body.
 */
public final class StructuredOutputFallback {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private StructuredOutputFallback() {}

  /** The schema of an OpenAI request's {@code response_format: {type: json_schema}}, if any. */
  public static Optional<JsonNode> schemaOf(JsonNode chatRequest) {
    JsonNode format = chatRequest.path("response_format");
    if ("json_schema".equals(format.path("type").asText())) {
      JsonNode schema = format.path("json_schema").get("schema");
      if (schema != null && schema.isObject()) {
        return Optional.of(schema);
      }
    }
    return Optional.empty();
  }

  /** The schema was enforced by the provider (OpenAI strict mode, Claude's output format). */
  public static final String STRICT = "strict";

  /** The provider was asked for JSON, not held to the schema. */
  public static final String JSON_OBJECT = "json_object";

  /** The schema only reached the model as an instruction: nothing held the answer to it. */
  public static final String SCHEMA_IN_PROMPT = "schema_in_prompt";

  /**
   * How the body sent upstream asked for the structured output the caller wanted, so the caller can
   * tell whether its schema was enforced; empty when the caller asked for none ({@code
   * response_format} absent or {@code text}). Read from the body actually sent, so a downgrade
   * (json_object mode on OpenAI, the schema moved into Claude's system prompt) and a fallback model
   * without native schemas are reported as what they are. An OpenAI {@code json_schema} without
   * {@code strict: true} is not enforced by OpenAI, so it is {@link #SCHEMA_IN_PROMPT} too.
   *
   * @param chatRequest the caller's OpenAI chat request
   * @param toAnthropic whether {@code upstreamBody} is a Claude Messages body (else OpenAI's)
   * @param upstreamBody the body the answering attempt sent
   */
  public static Optional<String> enforcement(
      JsonNode chatRequest, boolean toAnthropic, JsonNode upstreamBody) {
    String asked = chatRequest.path("response_format").path("type").asText("");
    if (!asked.equals("json_schema") && !asked.equals("json_object")) {
      return Optional.empty();
    }
    if (asked.equals("json_object")) {
      return Optional.of(JSON_OBJECT);
    }
    if (toAnthropic) {
      boolean nativeFormat = upstreamBody.path("output_config").path("format").isObject();
      return Optional.of(nativeFormat ? STRICT : SCHEMA_IN_PROMPT);
    }
    JsonNode format = upstreamBody.path("response_format");
    return switch (format.path("type").asText("")) {
      case "json_schema" ->
          Optional.of(
              format.path("json_schema").path("strict").asBoolean(false)
                  ? STRICT
                  : SCHEMA_IN_PROMPT);
      case "json_object" -> Optional.of(JSON_OBJECT);
      default -> Optional.of(SCHEMA_IN_PROMPT);
    };
  }

  /**
   * An OpenAI request in {@code json_object} mode: {@code response_format} becomes {@code {type:
   * json_object}} and a system message carrying the schema is inserted after the leading
   * system/developer messages (OpenAI's json mode also needs the word "JSON" in the messages; the
   * instruction has it). A request without a json_schema format is returned as an unchanged copy.
   */
  public static ObjectNode toJsonObjectMode(ObjectNode chatRequest) {
    ObjectNode out = chatRequest.deepCopy();
    Optional<JsonNode> schema = schemaOf(chatRequest);
    if (schema.isEmpty()) {
      return out;
    }
    out.putObject("response_format").put("type", "json_object");
    ArrayNode messages = out.withArray("messages");
    int at = 0;
    while (at < messages.size()) {
      String role = messages.get(at).path("role").asText();
      if (!role.equals("system") && !role.equals("developer")) {
        break;
      }
      at++;
    }
    ObjectNode instruction = MAPPER.createObjectNode();
    instruction.put("role", "system");
    instruction.put("content", SchemaInstructions.forSchema(schema.get()));
    messages.insert(at, instruction);
    return out;
  }

  /**
   * An Anthropic request with the schema in the system prompt instead of a grammar: {@code
   * output_config.format} is removed (and {@code output_config} when it becomes empty), and the
   * schema instruction is appended to {@code system} — a string stays a string, a block list gets a
   * text block.
   */
  public static ObjectNode schemaIntoSystemPrompt(ObjectNode messagesRequest, JsonNode schema) {
    ObjectNode out = messagesRequest.deepCopy();
    JsonNode config = out.get("output_config");
    if (config instanceof ObjectNode oc) {
      oc.remove("format");
      if (oc.isEmpty()) {
        out.remove("output_config");
      }
    }
    String instruction = SchemaInstructions.forSchema(schema);
    JsonNode system = out.get("system");
    if (system instanceof ArrayNode blocks) {
      ObjectNode block = blocks.addObject();
      block.put("type", "text");
      block.put("text", instruction);
    } else if (system != null && system.isTextual() && !system.asText().isEmpty()) {
      out.put("system", system.asText() + "\n\n" + instruction);
    } else {
      out.put("system", instruction);
    }
    return out;
  }

  /** The schema of an Anthropic request's {@code output_config.format}, if any. */
  public static Optional<JsonNode> grammarSchemaOf(JsonNode messagesRequest) {
    JsonNode schema = messagesRequest.path("output_config").path("format").get("schema");
    return schema != null && schema.isObject() ? Optional.of(schema) : Optional.empty();
  }

  /**
   * OpenAI refused the strict schema: a 400 whose error is about {@code response_format}'s schema
   * ({@code code: invalid_json_schema}, or param {@code response_format} with an "Invalid schema"
   * message — e.g. "'additionalProperties' is required to be supplied and to be false").
   */
  public static boolean isStrictSchemaRejection(int status, String body) {
    if (status != 400 || body == null) {
      return false;
    }
    Optional<JsonNode> error = errorOf(body);
    if (error.isPresent()) {
      JsonNode e = error.get();
      String message = e.path("message").asText("").toLowerCase(Locale.ROOT);
      return "invalid_json_schema".equals(e.path("code").asText())
          || ("response_format".equals(e.path("param").asText()) && message.contains("schema"));
    }
    return body.toLowerCase(Locale.ROOT).contains("invalid schema for response_format");
  }

  /**
   * Anthropic could not compile the schema into a grammar: a 400 saying "compiled grammar is too
   * large" or "schema is too complex for compilation".
   */
  public static boolean isGrammarTooLarge(int status, String body) {
    if (status != 400 || body == null) {
      return false;
    }
    String text =
        errorOf(body).map(e -> e.path("message").asText("")).orElse(body).toLowerCase(Locale.ROOT);
    return text.contains("grammar is too large")
        || text.contains("schema is too complex for compilation");
  }

  private static Optional<JsonNode> errorOf(String body) {
    try {
      JsonNode root = MAPPER.readTree(body);
      JsonNode error = root == null ? null : root.get("error");
      return error != null && error.isObject() ? Optional.of(error) : Optional.empty();
    } catch (JsonProcessingException e) {
      return Optional.empty();
    }
  }
}
