package dev.spendgateway.upstream.translate;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A request the OpenAI → Anthropic translation refuses: it uses a feature the Claude fallback
 * cannot honour the same way (tools, {@code n > 1}, logprobs, audio, …). The router answers it with
 * a 400 instead of failing over into a different behaviour; {@link #toOpenAiError()} is that
 * answer's body.
 */
public final class TranslationError extends RuntimeException {
  private final String field;

  /**
   * @param field the request field at fault, as a JSON path the caller recognises ({@code tools},
   *     {@code messages[2].content[0]})
   * @param message what is unsupported and why, safe to show to the caller (never request content)
   */
  public TranslationError(String field, String message) {
    super(message, null, false, false);
    this.field = field;
  }

  public String field() {
    return field;
  }

  /**
   * The OpenAI error shape ({@code {"error":{"message","type","param","code"}}}) so SDKs surface it
   * normally; {@code code} is {@code unsupported_on_fallback}.
   */
  public ObjectNode toOpenAiError() {
    ObjectNode root = JsonNodeFactory.instance.objectNode();
    ObjectNode error = root.putObject("error");
    error.put("message", getMessage());
    error.put("type", "invalid_request_error");
    error.put("param", field);
    error.put("code", "unsupported_on_fallback");
    return root;
  }

  @Override
  public String toString() {
    return "TranslationError(" + field + ": " + getMessage() + ")";
  }
}
