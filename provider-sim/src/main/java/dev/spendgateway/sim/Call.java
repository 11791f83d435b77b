package dev.spendgateway.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.util.Optional;

/**
 * A parsed incoming provider call: what the responder needs to shape the answer.
 *
 * @param route the endpoint
 * @param body the JSON body ({@code {}} for multipart; form values are mirrored into it)
 * @param stream whether the caller asked for SSE
 * @param connection the hook to abort the TCP connection, absent when served without one
 */
record Call(SimRoute route, JsonNode body, boolean stream, Optional<ConnectionControl> connection) {

  static final String DEFAULT_OPENAI_MODEL = "gpt-4o-mini";
  static final String DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-5";

  /** The requested model, echoed back as the real APIs do. */
  String model() {
    JsonNode m = body.path("model");
    if (m.isTextual() && !m.asText().isEmpty()) {
      return m.asText();
    }
    return route.provider() == SimRoute.Provider.ANTHROPIC
        ? DEFAULT_ANTHROPIC_MODEL
        : DEFAULT_OPENAI_MODEL;
  }

  /** {@code stream_options.include_usage} on a chat completion request. */
  boolean includeUsage() {
    return body.path("stream_options").path("include_usage").asBoolean(false);
  }

  static JsonNode emptyBody() {
    return JsonNodeFactory.instance.objectNode();
  }
}
