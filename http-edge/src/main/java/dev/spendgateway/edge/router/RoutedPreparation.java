package dev.spendgateway.edge.router;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.edge.call.CallTarget.Vetted;
import dev.spendgateway.edge.call.Refusal;
import dev.spendgateway.edge.call.SpendHeaders.SpendContext;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.policy.dataclass.DataClass;
import dev.spendgateway.policy.request.PolicyDecision;
import dev.spendgateway.policy.request.RequestPolicy;
import dev.spendgateway.upstream.failover.FailoverPlan;
import dev.spendgateway.upstream.failover.Pool;
import dev.spendgateway.upstream.failover.RoutingProfile;
import dev.spendgateway.upstream.failover.StructuredOutputFallback;
import dev.spendgateway.upstream.translate.ChatToMessages;
import dev.spendgateway.upstream.translate.TranslationError;
import java.time.LocalDate;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * What a routed call learns before its first attempt, from the caller's chat request alone: its
 * profile, its pool, the vetted OpenAI body and the fallback's translated and vetted body, and the
 * failover plan's context. Pure but for the memories it reads (schemas OpenAI rejected, sticky
 * conversations, open model circuits).
 */
final class RoutedPreparation {
  private RoutedPreparation() {}

  /**
   * A routed call ready for its first attempt; never changes after.
   *
   * @param downgraded whether structured output starts downgraded (json_object mode)
   * @param openAiBody the vetted OpenAI body
   * @param fallbackBody the vetted Anthropic body (null: no usable fallback)
   */
  record Routed(
      SpendContext spend,
      RoutingProfile profile,
      Pool pool,
      ObjectNode chatRequest,
      boolean downgraded,
      PolicyDecision.Allowed openAiBody,
      PolicyDecision.Allowed fallbackBody,
      FailoverPlan.Context plan) {}

  /**
   * The profile {@code model} names, the pool ({@code x-priority} or the profile's), the bodies for
   * each provider as policy vets them, and the plan's context ({@code failoverNever}: the caller
   * pinned the call to the primary); or the refusal.
   */
  static Vetted<Routed> prepare(
      ObjectNode chatRequest,
      SpendContext spend,
      DataClass dataClass,
      Optional<Pool> priority,
      boolean failoverNever,
      RouterContext rc,
      Predicate<String> modelOpen,
      LocalDate today) {
    RequestPolicy policy = rc.services().policy();
    String name = chatRequest.path("model").asText("");
    Optional<RoutingProfile> found = rc.profiles().find(name);
    if (found.isEmpty()) {
      return refused(
          400,
          "invalid_request_error",
          "Unknown profile '"
              + name
              + "': `model` must name a routing profile, one of "
              + String.join(", ", rc.profiles().names())
              + ".",
          "model",
          "unknown_profile");
    }
    RoutingProfile profile = found.get();
    Pool pool = priority.orElse(profile.pool());
    Optional<JsonNode> schema = StructuredOutputFallback.schemaOf(chatRequest);
    boolean downgraded = schema.isPresent() && rc.schemas().wasRejected(schema.get());
    PolicyDecision primary = openAiDecision(policy, profile, chatRequest, downgraded, today);
    if (primary instanceof PolicyDecision.Violation v) {
      return new Vetted.Refused<>(Refusal.policy(Shape.OPENAI, v));
    }
    PolicyDecision.Allowed openAiBody = (PolicyDecision.Allowed) primary;
    long needed = openAiBody.worstCase().inputTokensAssumed();
    if (needed > profile.contextLimit()) {
      return refused(
          400,
          "context_length_exceeded",
          "The request needs about "
              + needed
              + " input tokens; profile '"
              + profile.name()
              + "' allows "
              + profile.contextLimit()
              + "."
              + (needed >= openAiBody.modelInfo().contextLimit()
                  ? " An inline document or content fetched from a URL counts as the model's"
                      + " whole context window: its pages, not its bytes, are billed."
                  : ""),
          "messages",
          "context_length_exceeded");
    }
    Fallback fallback = fallback(policy, profile, chatRequest, today);
    FailoverPlan.Context plan =
        new FailoverPlan.Context(
            profile,
            FailoverPlan.featuresOf(chatRequest),
            fallback.blocker(),
            spend.conversationId().flatMap(rc.stickiness()::find),
            modelOpen,
            today,
            rc.settings().retryPolicy().maxRetryAfter(),
            dataClass.name(),
            dataClass.narrowedTo(profile.narrowingFor(dataClass.name())),
            failoverNever);
    return new Vetted.Ready<>(
        new Routed(
            spend, profile, pool, chatRequest, downgraded, openAiBody, fallback.body(), plan));
  }

  /**
   * The OpenAI body: the profile's primary model in {@code model}, json_object mode once
   * downgraded.
   */
  static PolicyDecision openAiDecision(
      RequestPolicy policy,
      RoutingProfile profile,
      ObjectNode chatRequest,
      boolean downgraded,
      LocalDate today) {
    ObjectNode body = chatRequest.deepCopy();
    body.put("model", profile.primary().name());
    if (downgraded) {
      body = StructuredOutputFallback.toJsonObjectMode(body);
    }
    return policy.openAiChatCompletions(body, RouterJson.bytes(body).length, today);
  }

  /** The Anthropic body with the schema written into its system prompt, vetted. */
  static PolicyDecision schemaInPrompt(
      RequestPolicy policy,
      PolicyDecision.Allowed anthropicBody,
      JsonNode schema,
      LocalDate today) {
    ObjectNode inPrompt =
        StructuredOutputFallback.schemaIntoSystemPrompt(anthropicBody.upstreamBody(), schema);
    return policy.anthropicMessages(inPrompt, RouterJson.bytes(inPrompt).length, today);
  }

  /**
   * The fallback's vetted body, or the reason it cannot serve this request (neither: no fallback).
   */
  private record Fallback(PolicyDecision.Allowed body, Optional<String> blocker) {}

  /** Translates for the fallback and vets it. */
  private static Fallback fallback(
      RequestPolicy policy, RoutingProfile profile, ObjectNode chatRequest, LocalDate today) {
    if (profile.fallback().isEmpty()) {
      return new Fallback(null, Optional.empty());
    }
    var fallback = profile.fallback().get();
    ObjectNode translated;
    try {
      translated =
          ChatToMessages.translate(
              chatRequest,
              new ChatToMessages.Options(
                  fallback.name(), profile.defaultMaxTokens(), fallback.hasFeature("json_schema")));
    } catch (TranslationError e) {
      return new Fallback(null, Optional.of(e.getMessage()));
    }
    PolicyDecision d =
        policy.anthropicMessages(translated, RouterJson.bytes(translated).length, today);
    if (d instanceof PolicyDecision.Violation v) {
      return new Fallback(
          null,
          Optional.of(
              "the translated request breaks policy rule " + v.rule() + " (" + v.message() + ")"));
    }
    return new Fallback((PolicyDecision.Allowed) d, Optional.empty());
  }

  private static Vetted<Routed> refused(
      int status, String type, String message, String param, String errorClass) {
    return new Vetted.Refused<>(Refusal.of(Shape.OPENAI, status, type, message, param, errorClass));
  }
}
