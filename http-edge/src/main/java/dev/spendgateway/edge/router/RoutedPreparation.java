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
import java.util.function.Supplier;

/**
 * What a routed call learns before its first attempt, from the caller's chat request alone: its
 * profile, its pool, the vetted OpenAI body, the fallback's translated and vetted body (built when
 * first needed), and the failover plan's context. Pure but for the memories it reads (schemas
 * OpenAI rejected, sticky conversations, open model circuits).
 */
final class RoutedPreparation {
  private RoutedPreparation() {}

  /**
   * A routed call ready for its first attempt; never changes after.
   *
   * @param downgraded whether structured output starts downgraded (json_object mode)
   * @param openAiBody the vetted OpenAI body
   * @param fallbackBody the vetted Anthropic body (null: no usable fallback), translated and vetted
   *     on the first ask and remembered: most calls are answered by their primary and never ask
   */
  record Routed(
      SpendContext spend,
      RoutingProfile profile,
      Pool pool,
      ObjectNode chatRequest,
      boolean downgraded,
      PolicyDecision.Allowed openAiBody,
      Supplier<PolicyDecision.Allowed> fallbackBody,
      FailoverPlan.Context plan) {}

  /** Builds the fallback's body (a seam for counting the builds). */
  @FunctionalInterface
  interface FallbackBuilder {
    Fallback build(
        RequestPolicy policy, RoutingProfile profile, ObjectNode chatRequest, LocalDate today);
  }

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
    return prepare(
        chatRequest,
        spend,
        dataClass,
        priority,
        failoverNever,
        rc,
        modelOpen,
        today,
        RoutedPreparation::fallback);
  }

  /** {@link #prepare}, the fallback's body built by {@code fallbackBuilder} when first asked. */
  static Vetted<Routed> prepare(
      ObjectNode chatRequest,
      SpendContext spend,
      DataClass dataClass,
      Optional<Pool> priority,
      boolean failoverNever,
      RouterContext rc,
      Predicate<String> modelOpen,
      LocalDate today,
      FallbackBuilder fallbackBuilder) {
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
    // The fallback's body is not built here. Nothing about it can refuse the caller: a request the
    // fallback cannot take (untranslatable, or breaking a policy rule once translated) only blocks
    // the switch, and its attempt reserves its own worst case when it is made. So the caller is
    // refused or admitted, and the primary's reservation made, exactly as if it had been built;
    // the plan asks for it (last of the fallback's checks) only when the call would go there.
    Supplier<Fallback> fallback =
        new Remembered<>(() -> fallbackBuilder.build(policy, profile, chatRequest, today));
    FailoverPlan.Context plan =
        new FailoverPlan.Context(
            profile,
            FailoverPlan.featuresOf(chatRequest),
            () -> fallback.get().blocker(),
            spend.conversationId().flatMap(rc.stickiness()::find),
            modelOpen,
            today,
            rc.settings().retryPolicy().maxRetryAfter(),
            dataClass.name(),
            dataClass.narrowedTo(profile.narrowingFor(dataClass.name())),
            failoverNever);
    return new Vetted.Ready<>(
        new Routed(
            spend,
            profile,
            pool,
            chatRequest,
            downgraded,
            openAiBody,
            () -> fallback.get().body(),
            plan));
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
  record Fallback(PolicyDecision.Allowed body, Optional<String> blocker) {}

  /**
   * A value built on the first ask and remembered. A routed call's attempts follow one another, but
   * each continues on whichever thread completed the last, hence the lock.
   */
  private static final class Remembered<T> implements Supplier<T> {
    private Supplier<T> build;
    private T value;

    Remembered(Supplier<T> build) {
      this.build = build;
    }

    @Override
    public synchronized T get() {
      if (build != null) {
        value = build.get();
        build = null; // the request it translated may be collected with the call
      }
      return value;
    }
  }

  /** Translates for the fallback and vets it. */
  static Fallback fallback(
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
