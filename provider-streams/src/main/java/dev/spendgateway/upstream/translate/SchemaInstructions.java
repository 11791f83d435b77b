package dev.spendgateway.upstream.translate;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The system-prompt text used when a JSON answer is asked for without a native grammar: OpenAI's
 * {@code json_object} mode on Claude, and a schema moved out of a grammar a provider refused. One
 * place, so the JSON and the failover paths word it the same way.
 */
public final class SchemaInstructions {
  /**
   * Appended for {@code json_object}; contains the word "JSON", which OpenAI's json mode requires.
   */
  public static final String JSON_OBJECT_INSTRUCTION =
      "Answer with a single valid JSON object and nothing else: no prose, no Markdown code fences.";

  private SchemaInstructions() {}

  /** The instruction carrying a JSON schema (compact JSON, keys in the caller's order). */
  public static String forSchema(JsonNode schema) {
    return "Answer with a single valid JSON object and nothing else (no prose, no Markdown code"
        + " fences). It must validate against this JSON Schema:\n"
        + schema.toString();
  }
}
