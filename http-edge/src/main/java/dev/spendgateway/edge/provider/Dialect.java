package dev.spendgateway.edge.provider;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.edge.body.BodyType;
import dev.spendgateway.edge.call.CallServices;
import dev.spendgateway.edge.call.CallerJsonBody;
import dev.spendgateway.edge.call.SpendHeaders;
import dev.spendgateway.policy.request.PolicyDecision;
import dev.spendgateway.policy.request.RequestPolicy;
import dev.spendgateway.policy.request.TopLevelRewrites;
import dev.spendgateway.upstream.client.UpstreamBody;
import dev.spendgateway.upstream.stream.UsageChunkFilter;
import dev.spendgateway.upstream.usage.ApiKind;
import java.time.LocalDate;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.util.ByteString;

/**
 * The JSON provider APIs the gateway passes through. Each names its {@link ApiKind} (route,
 * upstream path, usage rules) and its request policy; reading the body strictly and vetting it is
 * the same for all.
 */
enum Dialect implements CallKind {
  ANTHROPIC_MESSAGES(ApiKind.ANTHROPIC_MESSAGES) {
    @Override
    PolicyDecision vet(RequestPolicy policy, JsonNode body, long bytes, LocalDate today) {
      return policy.anthropicMessages(body, bytes, today);
    }

    @Override
    Optional<PolicyDecision.Violation> vetHeaders(HttpRequest request, RequestPolicy policy) {
      // Betas are how code execution, computer use and MCP are switched on: vet them too — every
      // instance of the header, since the provider reads them all, not only the first.
      return SpendHeaders.valuesOf(request.getHeaders(), "anthropic-beta").stream()
          .flatMap(value -> policy.anthropicBetaHeader(value).stream())
          .findFirst();
    }
  },
  OPENAI_CHAT(ApiKind.OPENAI_CHAT_COMPLETIONS) {
    @Override
    PolicyDecision vet(RequestPolicy policy, JsonNode body, long bytes, LocalDate today) {
      return policy.openAiChatCompletions(body, bytes, today);
    }
  },
  OPENAI_RESPONSES(ApiKind.OPENAI_RESPONSES) {
    @Override
    PolicyDecision vet(RequestPolicy policy, JsonNode body, long bytes, LocalDate today) {
      return policy.openAiResponses(body, bytes, today);
    }
  };

  private final ApiKind kind;

  Dialect(ApiKind kind) {
    this.kind = kind;
  }

  /** Runs this API's request policy on a parsed body. */
  abstract PolicyDecision vet(RequestPolicy policy, JsonNode body, long bytes, LocalDate today);

  /** Header rules beyond the body's; none by default. */
  Optional<PolicyDecision.Violation> vetHeaders(HttpRequest request, RequestPolicy policy) {
    return Optional.empty();
  }

  @Override
  public ApiKind api() {
    return kind;
  }

  @Override
  public BodyType bodyType() {
    return BodyType.JSON;
  }

  @Override
  public Optional<ApiKind> streamKind() {
    return Optional.of(kind);
  }

  @Override
  public long bodyLimit(CallServices services) {
    return services.policy().limits().maxBodyBytes();
  }

  @Override
  public CompletionStage<Preparation> prepare(
      HttpRequest request, CallServices services, LocalDate today) {
    return CallerJsonBody.read(request.entity(), services)
        .thenApply(read -> prepareBody(request, read, services.policy(), today));
  }

  private Preparation prepareBody(
      HttpRequest request, CallerJsonBody.Read read, RequestPolicy policy, LocalDate today) {
    if (read instanceof CallerJsonBody.Refused refused) {
      return refusal(refused);
    }
    CallerJsonBody.Json body = (CallerJsonBody.Json) read;
    ObjectNode json = body.object();
    ByteString bytes = body.bytes();
    String model = json.path("model").isTextual() ? json.get("model").asText() : null;
    Optional<PolicyDecision.Violation> headerViolation = vetHeaders(request, policy);
    if (headerViolation.isPresent()) {
      return new Preparation.Rejected(headerViolation.get(), model);
    }
    PolicyDecision decision = vet(policy, json, bytes.size(), today);
    if (decision instanceof PolicyDecision.Violation v) {
      return new Preparation.Rejected(v, model);
    }
    PolicyDecision.Allowed allowed = (PolicyDecision.Allowed) decision;
    UpstreamBody upstreamBody =
        new UpstreamBody.Strict(
            ContentTypes.APPLICATION_JSON, upstreamBytes(bytes, allowed.rewrites()));
    return new Preparation.Prepared(
        allowed.model(),
        allowed.modelInfo(),
        allowed.worstCase(),
        allowed.warnings(),
        upstreamBody,
        this != OPENAI_CHAT || UsageChunkFilter.callerAskedForUsage(json));
  }

  /**
   * The bytes sent upstream. When the policy rewrote nothing, the caller's own bytes go out:
   * serializing an equal tree again costs CPU on every call and says the same. A rewrite (a forced
   * stream usage, a written-in output limit, store off) is spliced into the caller's bytes: only
   * the rewritten fields' values are written, the rest is copied as it came, never rebuilt as a
   * tree and serialized again. The read was strict (no duplicate keys, nothing after the object),
   * so the provider reads exactly the tree the policy vetted, with the rewrites.
   */
  static ByteString upstreamBytes(ByteString read, Map<String, JsonNode> rewrites) {
    if (rewrites.isEmpty()) {
      return read;
    }
    // fromArrayUnsafe: the array is new and never written again, so it need not be copied (a 4 MiB
    // body would otherwise be made twice per call).
    return ByteString.fromArrayUnsafe(TopLevelRewrites.splice(read.toArrayUnsafe(), rewrites));
  }

  /**
   * The body reader's refusal in this route's terms: a policy rule (size, JSON) is a violation the
   * caller's error names; broken framing or a slow body is unreadable (not a policy matter).
   */
  static Preparation refusal(CallerJsonBody.Refused refused) {
    String policyPrefix = "policy:";
    if (refused.errorClass().startsWith(policyPrefix)) {
      return rejected(
          refused.errorClass().substring(policyPrefix.length()),
          refused.field(),
          refused.message(),
          refused.status(),
          null);
    }
    return new Preparation.Unreadable(refused.status(), refused.message(), refused.errorClass());
  }

  static Preparation.Rejected rejected(
      String rule, String field, String message, int status, String model) {
    return new Preparation.Rejected(
        new PolicyDecision.Violation(rule, field, message, status), model);
  }
}
