package dev.spendgateway.policy.request;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.cost.WorstCase;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/** What the request policy decided about one JSON provider call. */
public sealed interface PolicyDecision permits PolicyDecision.Allowed, PolicyDecision.Violation {

  /**
   * The call may go upstream once its worst case is reserved.
   *
   * @param callerBody the caller's body as vetted; never modified
   * @param rewrites the top-level fields the policy sets on it (e.g. {@code store: false}, the
   *     assumed output cap written in), in order; empty when the body goes out as the caller sent
   *     it. {@link #upstreamBody} applies them to a copy; {@link TopLevelRewrites#splice} to the
   *     caller's bytes.
   * @param model the model id
   * @param modelInfo its catalog entry (prices for settling)
   * @param worstCase the reservation and the assumptions behind it
   * @param stream whether the caller asked for SSE
   * @param warnings things the caller should know but that do not block the call (deprecated model,
   *     a field the gateway overrode); sent back as a response header and logged
   */
  record Allowed(
      ObjectNode callerBody,
      Map<String, JsonNode> rewrites,
      String model,
      ModelInfo modelInfo,
      WorstCase worstCase,
      boolean stream,
      List<String> warnings)
      implements PolicyDecision {
    public Allowed {
      Objects.requireNonNull(callerBody, "callerBody");
      Objects.requireNonNull(model, "model");
      Objects.requireNonNull(modelInfo, "modelInfo");
      Objects.requireNonNull(worstCase, "worstCase");
      rewrites = Collections.unmodifiableMap(new LinkedHashMap<>(rewrites));
      warnings = List.copyOf(warnings);
    }

    /**
     * The body to send, as a new tree: a copy of the caller's with the rewrites set (the caller's
     * tree is never modified). For callers that build on the tree (the router); a route that holds
     * the caller's bytes splices the rewrites into them instead ({@link TopLevelRewrites#splice}).
     */
    public ObjectNode upstreamBody() {
      return TopLevelRewrites.applied(callerBody, rewrites);
    }
  }

  /**
   * The call breaks a rule and never reaches the provider.
   *
   * @param rule the rule's name (stable, snake_case; listed in policy-rules/README.md)
   * @param field the request field at fault, as the caller wrote it ({@code tools[1].type})
   * @param message a sentence for the caller naming the field, the rule and what is allowed
   * @param httpStatus 400, or 413 for size limits
   */
  record Violation(String rule, String field, String message, int httpStatus)
      implements PolicyDecision, TranscriptionDecision, MediaDecision {
    public Violation {
      Objects.requireNonNull(rule, "rule");
      Objects.requireNonNull(field, "field");
      Objects.requireNonNull(message, "message");
      if (httpStatus != 400 && httpStatus != 413) {
        throw new IllegalArgumentException("a policy violation is 400 or 413, not " + httpStatus);
      }
    }
  }
}
