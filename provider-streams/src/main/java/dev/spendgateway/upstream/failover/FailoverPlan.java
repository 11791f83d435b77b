package dev.spendgateway.upstream.failover;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.dataclass.DataClasses;
import dev.spendgateway.policy.failover.Classification;
import dev.spendgateway.policy.failover.ErrorClassifier;
import java.time.Duration;
import java.time.LocalDate;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The failover router's decisions, as pure functions: where the first attempt goes ({@link #start})
 * and what follows an attempt's outcome ({@link #next}). The router executes the {@link Step};
 * everything stateful (budget, circuits, stickiness, random backoff) is read by the router and
 * handed in as plain values, so every rule here is table-tested.
 *
 * <p>Rules, in order, for {@link #next}:
 *
 * <ol>
 *   <li>2xx → {@link Deliver}.
 *   <li>Bytes already reached the client → {@link CutStream}: no failover after the first byte.
 *   <li>OpenAI rejected the strict schema (400) → {@link RetryAsJsonObject}; Claude's "compiled
 *       grammar is too large" (400) → {@link RetryWithSchemaInPrompt}; once per call each.
 *   <li>Caller error (invalid request, content refusal, any other 4xx) → {@link Deliver}: the other
 *       side would refuse it the same way.
 *   <li>410 → the model is retired ({@link Decision#modelGone()}: open its circuit, alarm); switch
 *       to the fallback if usable, else {@link GiveUp} 503 {@code model_retired} naming model and
 *       profile.
 *   <li>429 with an affordable wait ({@link Attempt#affordableRetryWait()}) → {@link RetrySame};
 *       429 past the wait or the budget, a quota or billing 429 (at once: waiting does not clear
 *       it), and every other failover class (connection error, 401, 402, 403, 408, 409, 500–504,
 *       Anthropic 529 and "credit balance is too low") → {@link SwitchTo} the fallback when the
 *       switch is allowed.
 *   <li>No switch allowed (already on the fallback — a call and a conversation switch at most once
 *       —, no fallback, its model circuit open or retired, or the request needs something the
 *       fallback lacks): a transient fault ({@link ErrorClassifier#isTransient}: no answer, a
 *       rate-limit 429, an outage status) retries here while the budget allows (a quota 429 never
 *       does); otherwise: 503 {@code fallback_not_permitted} when the call's data class does not
 *       allow the fallback's provider (the caller's data must not go there, whatever the outage;
 *       the router hands back the primary's error with it); a quota 429 {@link Deliver}ed as it is;
 *       429 {@code rate_limited} after a 429; 503 {@code fallback_unsupported} naming the missing
 *       feature when the request itself blocked the switch (the outage is transient, so not a 400);
 *       else 503 {@code upstream_unavailable}.
 * </ol>
 *
 * <p>Data classes: {@link Context#permitted()} is the set of providers the call's data class (as
 * narrowed by the profile) allows. A provider outside it is never called: a primary outside it
 * means the call starts on the fallback, and a profile with no permitted provider is refused 403
 * {@code data_class_forbidden} before any attempt.
 *
 * <p>A call whose caller asked {@code x-failover: never} ({@link Context#failoverNever()}) runs on
 * the profile's primary only, whatever its conversation's stickiness: transient faults retry there
 * within the budget, and then the primary's own answer (its error, or 502 when it gave none) is the
 * caller's. A caller that must know which provider saw its data, or that handles an outage itself,
 * gets exactly that.
 */
public final class FailoverPlan {
  /** The caller's request header value that keeps a routed call on its primary. */
  public static final String NEVER = "x-failover: never";

  private FailoverPlan() {}

  /** What the router does next. */
  public sealed interface Step {}

  /**
   * Make the call on this provider and model; {@code failover} is the {@code x-gateway-failover}
   * value.
   */
  public record Call(Provider provider, String model, boolean failover) implements Step {}

  /** Retry on the same provider and model after {@code delay}. */
  public record RetrySame(Duration delay) implements Step {}

  /**
   * Fail over: the same turn on the fallback (translated), after which the call never switches
   * back.
   */
  public record SwitchTo(Provider provider, String model) implements Step {}

  /**
   * OpenAI refused the strict schema: the same turn again in json_object mode; remember the schema.
   */
  public record RetryAsJsonObject() implements Step {}

  /** Claude refused the grammar: the same turn again with the schema in the system prompt. */
  public record RetryWithSchemaInPrompt() implements Step {}

  /** Hand the upstream answer (success or caller error) to the caller as it is. */
  public record Deliver() implements Step {}

  /** Stop with a gateway-made error in the OpenAI error shape. */
  public record GiveUp(int status, String errorType, String message) implements Step {}

  /** Bytes already went out: end the stream with an error event; never retried or switched. */
  public record CutStream(String errorType, String message) implements Step {}

  /**
   * A step plus the classification behind it. {@code modelGone} tells the router to open the
   * attempt model's circuit ({@link ModelCircuits#onModelGone}) before acting.
   */
  public record Decision(Classification classification, boolean modelGone, Step step) {}

  /**
   * What the router knows about the call, fixed for its whole life.
   *
   * @param profile the routing profile
   * @param requestFeatures catalog features the request uses ({@link #featuresOf})
   * @param fallbackBlocker why this request cannot be translated to the fallback (a {@code
   *     TranslationError} message), empty when it can; asked only when the call would go to the
   *     fallback (a call its primary answers never builds the fallback's body), last of the
   *     fallback's checks, so the supplier may translate on demand (it should remember its answer)
   * @param stickyProvider the provider the conversation is stuck to, if any
   * @param modelOpen whether a model's 410 circuit is open
   * @param today for catalog lifecycle (retired / end of support)
   * @param maxRetryAfter the longest Retry-After worth waiting for ({@code
   *     failover.max-retry-after})
   * @param dataClass the name of the call's data class, for messages
   * @param permitted the providers the call's data class allows on this profile (may be empty)
   * @param failoverNever the caller asked {@code x-failover: never}: the call stays on the
   *     profile's primary (a sticky conversation too) and its error is the caller's answer
   */
  public record Context(
      RoutingProfile profile,
      Set<String> requestFeatures,
      Supplier<Optional<String>> fallbackBlocker,
      Optional<Provider> stickyProvider,
      Predicate<String> modelOpen,
      LocalDate today,
      Duration maxRetryAfter,
      String dataClass,
      Set<Provider> permitted,
      boolean failoverNever) {
    /** A call that may fail over, whose fallback blocker is already known. */
    public Context(
        RoutingProfile profile,
        Set<String> requestFeatures,
        Optional<String> fallbackBlocker,
        Optional<Provider> stickyProvider,
        Predicate<String> modelOpen,
        LocalDate today,
        Duration maxRetryAfter,
        String dataClass,
        Set<Provider> permitted) {
      this(
          profile,
          requestFeatures,
          known(fallbackBlocker),
          stickyProvider,
          modelOpen,
          today,
          maxRetryAfter,
          dataClass,
          permitted,
          false);
    }

    /** A call whose data may go to every provider. */
    public Context(
        RoutingProfile profile,
        Set<String> requestFeatures,
        Optional<String> fallbackBlocker,
        Optional<Provider> stickyProvider,
        Predicate<String> modelOpen,
        LocalDate today,
        Duration maxRetryAfter) {
      this(
          profile,
          requestFeatures,
          known(fallbackBlocker),
          stickyProvider,
          modelOpen,
          today,
          maxRetryAfter,
          "internal",
          EnumSet.allOf(Provider.class),
          false);
    }

    private static Supplier<Optional<String>> known(Optional<String> fallbackBlocker) {
      Objects.requireNonNull(fallbackBlocker, "fallbackBlocker");
      return () -> fallbackBlocker;
    }

    public Context {
      Objects.requireNonNull(dataClass, "dataClass");
      permitted = Set.copyOf(permitted);
      Objects.requireNonNull(profile, "profile");
      requestFeatures = Set.copyOf(requestFeatures);
      Objects.requireNonNull(fallbackBlocker, "fallbackBlocker");
      Objects.requireNonNull(stickyProvider, "stickyProvider");
      Objects.requireNonNull(modelOpen, "modelOpen");
      Objects.requireNonNull(today, "today");
      Objects.requireNonNull(maxRetryAfter, "maxRetryAfter");
    }
  }

  /**
   * The outcome of one attempt.
   *
   * @param provider where it went
   * @param model which model
   * @param status HTTP status, or {@link ErrorClassifier#CONNECTION_ERROR} (0) for no answer (an
   *     open provider breaker counts as that too)
   * @param body the error body (null for success); read for credit balance and schema refusals
   * @param retryAfter the answer's parsed Retry-After
   * @param affordableRetryWait the wait {@link RetryPolicy#affordableWait} grants for one more
   *     attempt here; empty when the budget or the advised wait rules a retry out
   * @param bytesSent true when part of the answer already reached the client
   * @param structuredDowngradeDone true when this call already retried with json_object / a prompt
   *     schema
   */
  public record Attempt(
      Provider provider,
      String model,
      int status,
      String body,
      Optional<Duration> retryAfter,
      Optional<Duration> affordableRetryWait,
      boolean bytesSent,
      boolean structuredDowngradeDone) {
    public Attempt {
      Objects.requireNonNull(provider, "provider");
      Objects.requireNonNull(model, "model");
      Objects.requireNonNull(retryAfter, "retryAfter");
      Objects.requireNonNull(affordableRetryWait, "affordableRetryWait");
    }
  }

  /**
   * Catalog features an OpenAI chat request relies on: {@code streaming} for {@code stream: true},
   * {@code json_schema} for a json_schema response format. ({@code json_object} is not listed:
   * Claude serves it by instruction, and the catalog does not list it for Claude models.)
   */
  public static Set<String> featuresOf(JsonNode chatRequest) {
    Set<String> features = new LinkedHashSet<>();
    if (chatRequest.path("stream").asBoolean(false)) {
      features.add("streaming");
    }
    if ("json_schema".equals(chatRequest.path("response_format").path("type").asText())) {
      features.add("json_schema");
    }
    return features;
  }

  /**
   * Where the first attempt goes: the fallback when the conversation is stuck to it (and it can
   * serve this request) or when the primary's model is retired / its circuit open; else the
   * primary. With neither usable: 503 {@code model_retired}.
   */
  public static Step start(Context ctx) {
    RoutingProfile p = ctx.profile();
    boolean primaryPermitted = ctx.permitted().contains(p.primary().provider());
    boolean fallbackPermitted =
        p.fallback().map(f -> ctx.permitted().contains(f.provider())).orElse(false);
    if (!primaryPermitted && !fallbackPermitted) {
      return new GiveUp(
          403,
          DataClasses.FORBIDDEN,
          "data class '"
              + ctx.dataClass()
              + "' may not be sent to any provider of profile '"
              + p.name()
              + "' ("
              + String.join(", ", DataClasses.wireNames(profileProviders(p)))
              + "); it may go to "
              + (ctx.permitted().isEmpty()
                  ? "none of them"
                  : String.join(", ", DataClasses.wireNames(ctx.permitted()))));
    }
    if (ctx.failoverNever()) {
      return startPinned(ctx, primaryPermitted);
    }
    boolean primaryUsable = primaryPermitted && usable(p.primary(), ctx);
    boolean stuckToFallback =
        ctx.stickyProvider().isPresent()
            && p.fallback().map(f -> f.provider() == ctx.stickyProvider().get()).orElse(false);
    if (primaryUsable && !stuckToFallback) {
      // Decided before the fallback is looked at: a call that starts on its primary builds the
      // fallback's body only if it ever switches.
      return new Call(p.primary().provider(), p.primary().name(), false);
    }
    Optional<String> fallbackProblem = fallbackProblem(ctx);
    if (!primaryPermitted && fallbackProblem.isEmpty()) {
      // The class rules the primary out: the fallback is this call's only provider, not a failover.
      ModelInfo f = p.fallback().orElseThrow();
      return new Call(f.provider(), f.name(), false);
    }
    if ((stuckToFallback || !primaryUsable) && fallbackProblem.isEmpty()) {
      ModelInfo f = p.fallback().orElseThrow();
      return new Call(f.provider(), f.name(), true);
    }
    if (primaryUsable) {
      return new Call(p.primary().provider(), p.primary().name(), false);
    }
    return modelRetired(p.primary().name(), ctx, fallbackProblem);
  }

  /**
   * The first attempt of a call pinned to its primary: the primary, or a refusal naming why it
   * cannot be called (the caller ruled the fallback out, so the fallback is never the answer).
   */
  private static Step startPinned(Context ctx, boolean primaryPermitted) {
    ModelInfo primary = ctx.profile().primary();
    if (!primaryPermitted) {
      return new GiveUp(
          403,
          DataClasses.FORBIDDEN,
          "data class '"
              + ctx.dataClass()
              + "' may not be sent to "
              + primary.provider().wireName()
              + ", the primary of profile '"
              + ctx.profile().name()
              + "', and the caller asked "
              + NEVER);
    }
    if (!usable(primary, ctx)) {
      return modelRetired(primary.name(), ctx, Optional.of("the caller asked " + NEVER));
    }
    return new Call(primary.provider(), primary.name(), false);
  }

  /** What to do after {@code attempt}. */
  public static Decision next(Context ctx, Attempt attempt) {
    Classification c =
        attempt.status() == ErrorClassifier.CONNECTION_ERROR
            ? ErrorClassifier.classifyConnectionError(attempt.provider())
            : ErrorClassifier.classify(
                attempt.provider(),
                attempt.status(),
                attempt.body(),
                attempt.retryAfter(),
                ctx.maxRetryAfter());
    boolean gone = c == Classification.MODEL_GONE;
    return new Decision(c, gone, step(ctx, attempt, c));
  }

  private static Step step(Context ctx, Attempt a, Classification c) {
    if (c == Classification.SUCCESS) {
      return new Deliver();
    }
    if (a.bytesSent()) {
      return new CutStream(
          "upstream_cut",
          a.provider().wireName()
              + " stopped mid-answer ("
              + describe(a.status())
              + "); the answer is incomplete");
    }
    if (!a.structuredDowngradeDone() && ctx.requestFeatures().contains("json_schema")) {
      if (a.provider() == Provider.OPENAI
          && StructuredOutputFallback.isStrictSchemaRejection(a.status(), a.body())) {
        return new RetryAsJsonObject();
      }
      if (a.provider() == Provider.ANTHROPIC
          && StructuredOutputFallback.isGrammarTooLarge(a.status(), a.body())) {
        return new RetryWithSchemaInPrompt();
      }
    }
    if (c == Classification.CALLER_ERROR) {
      return new Deliver();
    }
    if (c == Classification.RETRY_THEN_FAILOVER && a.affordableRetryWait().isPresent()) {
      return new RetrySame(a.affordableRetryWait().get());
    }
    if (ctx.failoverNever()) {
      // Retries on the primary as on any call; then its own error is the answer.
      if (ErrorClassifier.isTransient(a.provider(), a.status(), a.body())
          && a.affordableRetryWait().isPresent()) {
        return new RetrySame(a.affordableRetryWait().get());
      }
      return new Deliver();
    }
    Optional<String> switchProblem = switchProblem(ctx, a);
    if (switchProblem.isEmpty()) {
      ModelInfo f = ctx.profile().fallback().orElseThrow();
      return new SwitchTo(f.provider(), f.name());
    }
    boolean classBlocks = isOnPrimary(ctx, a) && classForbidsFallback(ctx);
    if (c == Classification.MODEL_GONE && !classBlocks) {
      return modelRetired(a.model(), ctx, switchProblem);
    }
    if (ErrorClassifier.isTransient(a.provider(), a.status(), a.body())
        && a.affordableRetryWait().isPresent()) {
      return new RetrySame(a.affordableRetryWait().get());
    }
    boolean quota = c == Classification.QUOTA_EXHAUSTED;
    String why =
        a.provider().wireName()
            + " answered "
            + describe(a.status())
            + " for profile '"
            + ctx.profile().name()
            + "' and there is no failover: "
            + switchProblem.get();
    if (classBlocks) {
      return new GiveUp(503, DataClasses.FALLBACK_NOT_PERMITTED, why);
    }
    if (quota) {
      // The provider's own quota error says what the caller (or its operator) must do.
      return new Deliver();
    }
    if (a.status() == 429) {
      return new GiveUp(429, "rate_limited", why);
    }
    boolean blockedByRequest =
        isOnPrimary(ctx, a)
            && ctx.profile().fallback().isPresent()
            && featureOrTranslationBlocked(ctx);
    return new GiveUp(503, blockedByRequest ? "fallback_unsupported" : "upstream_unavailable", why);
  }

  /** Why the call cannot switch now, or empty when it can. */
  private static Optional<String> switchProblem(Context ctx, Attempt a) {
    if (!isOnPrimary(ctx, a)) {
      return Optional.of(
          "the call is already on the fallback (a call switches provider at most once)");
    }
    return fallbackProblem(ctx);
  }

  private static boolean isOnPrimary(Context ctx, Attempt a) {
    return a.provider() == ctx.profile().primary().provider();
  }

  /** Why the profile's fallback cannot serve this request, or empty when it can. */
  private static Optional<String> fallbackProblem(Context ctx) {
    Optional<ModelInfo> fallback = ctx.profile().fallback();
    if (fallback.isEmpty()) {
      return Optional.of("the profile has no fallback");
    }
    ModelInfo f = fallback.get();
    if (!ctx.permitted().contains(f.provider())) {
      return Optional.of(
          "data class '" + ctx.dataClass() + "' may not be sent to " + f.provider().wireName());
    }
    if (!usable(f, ctx)) {
      return Optional.of("the fallback model '" + f.name() + "' is retired");
    }
    for (String feature : ctx.requestFeatures()) {
      if (!f.hasFeature(feature)) {
        return Optional.of(
            "the request uses "
                + feature
                + ", which the fallback model '"
                + f.name()
                + "' does not support");
      }
    }
    return ctx.fallbackBlocker()
        .get()
        .map(reason -> "the request cannot go to the fallback: " + reason);
  }

  private static boolean classForbidsFallback(Context ctx) {
    return ctx.profile().fallback().map(f -> !ctx.permitted().contains(f.provider())).orElse(false);
  }

  private static Set<Provider> profileProviders(RoutingProfile p) {
    Set<Provider> out = EnumSet.of(p.primary().provider());
    p.fallback().ifPresent(f -> out.add(f.provider()));
    return out;
  }

  private static boolean featureOrTranslationBlocked(Context ctx) {
    ModelInfo f = ctx.profile().fallback().orElseThrow();
    return usable(f, ctx)
        && (!ctx.requestFeatures().stream().allMatch(f::hasFeature)
            || ctx.fallbackBlocker().get().isPresent());
  }

  private static boolean usable(ModelInfo model, Context ctx) {
    return !model.isRetiredOn(ctx.today()) && !ctx.modelOpen().test(model.name());
  }

  private static GiveUp modelRetired(String model, Context ctx, Optional<String> fallbackProblem) {
    return new GiveUp(
        503,
        "model_retired",
        "model '"
            + model
            + "' of profile '"
            + ctx.profile().name()
            + "' is retired and "
            + fallbackProblem.orElse("no fallback is usable"));
  }

  private static String describe(int status) {
    return status == ErrorClassifier.CONNECTION_ERROR ? "a connection error" : "HTTP " + status;
  }
}
