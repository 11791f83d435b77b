package dev.spendgateway.edge.provider;

import dev.spendgateway.edge.body.CallerBodies;
import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.cost.WorstCase;
import dev.spendgateway.policy.request.PolicyDecision;
import dev.spendgateway.upstream.client.UpstreamBody;
import java.util.List;

/**
 * What vetting a caller's request gave: a call ready to reserve and send, a violation, or a body
 * that could not be read at all.
 */
sealed interface Preparation {

  /**
   * @param model the model id (for the log)
   * @param modelInfo its catalog entry (prices for settling)
   * @param worstCase what to reserve
   * @param warnings non-blocking notes sent back as {@code x-gateway-warning}
   * @param upstreamBody the rewritten body to send
   * @param forwardUsageChunk whether a streamed answer's usage-only chunk goes to the caller: the
   *     gateway asks OpenAI chat for it on every stream, the caller gets it only if it asked too
   */
  record Prepared(
      String model,
      ModelInfo modelInfo,
      WorstCase worstCase,
      List<String> warnings,
      UpstreamBody upstreamBody,
      boolean forwardUsageChunk)
      implements Preparation {

    /** A call whose stream reaches the caller as the provider sent it. */
    Prepared(
        String model,
        ModelInfo modelInfo,
        WorstCase worstCase,
        List<String> warnings,
        UpstreamBody upstreamBody) {
      this(model, modelInfo, worstCase, warnings, upstreamBody, true);
    }
  }

  /**
   * @param model the model the caller asked for, when known (for the log)
   */
  record Rejected(PolicyDecision.Violation violation, String model) implements Preparation {}

  /**
   * The body never arrived whole (broken framing, too slow): the caller's 4xx, not a policy matter.
   *
   * @param rule the access line's word for why
   */
  record Unreadable(int status, String message, String rule) implements Preparation {
    static Unreadable of(CallerBodies.Unreadable body) {
      return new Unreadable(body.status(), body.message(), body.rule());
    }
  }
}
