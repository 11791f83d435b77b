package dev.spendgateway.upstream.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.failover.FailoverPlan.Attempt;
import dev.spendgateway.upstream.failover.FailoverPlan.Call;
import dev.spendgateway.upstream.failover.FailoverPlan.Context;
import dev.spendgateway.upstream.failover.FailoverPlan.CutStream;
import dev.spendgateway.upstream.failover.FailoverPlan.Decision;
import dev.spendgateway.upstream.failover.FailoverPlan.Deliver;
import dev.spendgateway.upstream.failover.FailoverPlan.GiveUp;
import dev.spendgateway.upstream.failover.FailoverPlan.RetryAsJsonObject;
import dev.spendgateway.upstream.failover.FailoverPlan.RetrySame;
import dev.spendgateway.upstream.failover.FailoverPlan.RetryWithSchemaInPrompt;
import dev.spendgateway.upstream.failover.FailoverPlan.Step;
import dev.spendgateway.upstream.failover.FailoverPlan.SwitchTo;
import java.time.Duration;
import java.time.LocalDate;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** (primary fault, fallback state) → decision; every row reads as a sentence. */
class FailoverPlanTest {
  private static final RoutingProfiles PROFILES = RoutingProfiles.fromConfig(Confs.shipped());
  private static final RoutingProfile FAST = PROFILES.find("fast-summary").orElseThrow();
  private static final RoutingProfile STRUCTURED =
      PROFILES.find("structured-analysis").orElseThrow();
  private static final RoutingProfile NO_FALLBACK =
      new RoutingProfile(
          "solo", FAST.primary(), Optional.empty(), 200_000, Set.of(), Pool.INTERACTIVE, 1024);
  private static final LocalDate TODAY = LocalDate.parse("2026-11-30");
  private static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(20);
  private static final Duration ONE_S = Duration.ofSeconds(1);

  private static final String INVALID =
      "{\"error\":{\"message\":\"messages: at least one message is required\",\"type\":\"invalid_request_error\"}}";
  private static final String CREDIT =
      "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.\"}}";
  private static final String STRICT =
      "{\"error\":{\"message\":\"Invalid schema for response_format 'r': In context=(), 'additionalProperties' is required to be supplied and to be false.\",\"type\":\"invalid_request_error\",\"param\":\"response_format\",\"code\":null}}";
  private static final String GRAMMAR =
      "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"The compiled grammar is too large, which would cause performance issues. Simplify your tool schemas or reduce the number of strict tools.\"}}";

  /** The state of the fallback side for one row. */
  enum Fallback {
    HEALTHY,
    NONE,
    MODEL_CIRCUIT_OPEN,
    REQUEST_NEEDS_JSON_SCHEMA_IT_LACKS,
    REQUEST_HAS_TOOLS
  }

  private static final SwitchTo TO_HAIKU = new SwitchTo(Provider.ANTHROPIC, "claude-haiku-5-5");

  static Stream<Arguments> afterPrimaryAttempt() {
    return Stream.of(
        row("OpenAI 200 is delivered", openAi(200, null), Fallback.HEALTHY, new Deliver()),
        row("OpenAI connection error fails over", openAi(0, null), Fallback.HEALTHY, TO_HAIKU),
        row("OpenAI 401 fails over", openAi(401, null), Fallback.HEALTHY, TO_HAIKU),
        row("OpenAI 402 fails over", openAi(402, null), Fallback.HEALTHY, TO_HAIKU),
        row("OpenAI 403 fails over", openAi(403, null), Fallback.HEALTHY, TO_HAIKU),
        row("OpenAI 408 fails over", openAi(408, null), Fallback.HEALTHY, TO_HAIKU),
        row("OpenAI 409 fails over", openAi(409, null), Fallback.HEALTHY, TO_HAIKU),
        row("OpenAI 500 fails over", openAi(500, null), Fallback.HEALTHY, TO_HAIKU),
        row("OpenAI 502 fails over", openAi(502, null), Fallback.HEALTHY, TO_HAIKU),
        row("OpenAI 503 fails over", openAi(503, null), Fallback.HEALTHY, TO_HAIKU),
        row("OpenAI 504 fails over", openAi(504, null), Fallback.HEALTHY, TO_HAIKU),
        row(
            "OpenAI 429 with an affordable wait retries here",
            openAi(429, null).waitAllowed(ONE_S),
            Fallback.HEALTHY,
            new RetrySame(ONE_S)),
        row(
            "OpenAI 429 with the budget spent fails over",
            openAi(429, null),
            Fallback.HEALTHY,
            TO_HAIKU),
        row(
            "OpenAI 429 asking 120 s (over the max) fails over",
            openAi(429, null).retryAfter(Duration.ofSeconds(120)),
            Fallback.HEALTHY,
            TO_HAIKU),
        row(
            "OpenAI 400 invalid request is the caller's",
            openAi(400, INVALID),
            Fallback.HEALTHY,
            new Deliver()),
        row("OpenAI 404 is the caller's", openAi(404, null), Fallback.HEALTHY, new Deliver()),
        row("OpenAI 413 is the caller's", openAi(413, null), Fallback.HEALTHY, new Deliver()),
        row(
            "OpenAI 422 content refusal is the caller's",
            openAi(422, null),
            Fallback.HEALTHY,
            new Deliver()),
        row(
            "OpenAI 400 saying credit balance is too low is the caller's on the OpenAI side",
            openAi(400, CREDIT),
            Fallback.HEALTHY,
            new Deliver()),
        row("OpenAI 410 switches to the fallback", openAi(410, null), Fallback.HEALTHY, TO_HAIKU),
        row(
            "OpenAI 410 with no fallback is model_retired",
            openAi(410, null),
            Fallback.NONE,
            new GiveUp(503, "model_retired", "")),
        row(
            "OpenAI 410 with the fallback's circuit open is model_retired",
            openAi(410, null),
            Fallback.MODEL_CIRCUIT_OPEN,
            new GiveUp(503, "model_retired", "")),
        row(
            "OpenAI 503 with no fallback retries while the budget allows",
            openAi(503, null).waitAllowed(ONE_S),
            Fallback.NONE,
            new RetrySame(ONE_S)),
        row(
            "OpenAI 503 with no fallback and no budget gives up",
            openAi(503, null),
            Fallback.NONE,
            new GiveUp(503, "upstream_unavailable", "")),
        row(
            "OpenAI 401 with no fallback gives up without retrying",
            openAi(401, null).waitAllowed(ONE_S),
            Fallback.NONE,
            new GiveUp(503, "upstream_unavailable", "")),
        row(
            "OpenAI 429 with no fallback and no budget is rate_limited",
            openAi(429, null),
            Fallback.NONE,
            new GiveUp(429, "rate_limited", "")),
        row(
            "OpenAI 503 for a json_schema request the fallback lacks is a clear error",
            openAi(503, null),
            Fallback.REQUEST_NEEDS_JSON_SCHEMA_IT_LACKS,
            new GiveUp(503, "fallback_unsupported", "")),
        row(
            "OpenAI 503 for a request with tools is a clear error",
            openAi(503, null),
            Fallback.REQUEST_HAS_TOOLS,
            new GiveUp(503, "fallback_unsupported", "")),
        row(
            "OpenAI cut after the first byte ends the stream",
            openAi(0, null).sent(),
            Fallback.HEALTHY,
            new CutStream("upstream_cut", "")),
        row(
            "OpenAI 200 after bytes were sent is delivered",
            openAi(200, null).sent(),
            Fallback.HEALTHY,
            new Deliver()),
        row(
            "Claude 529 after the switch retries there while the budget allows",
            claude(529, null).waitAllowed(ONE_S),
            Fallback.HEALTHY,
            new RetrySame(ONE_S)),
        row(
            "Claude 529 after the switch with no budget gives up",
            claude(529, null),
            Fallback.HEALTHY,
            new GiveUp(503, "upstream_unavailable", "")),
        row(
            "Claude 'credit balance is too low' gives up, never switches back",
            claude(400, CREDIT).waitAllowed(ONE_S),
            Fallback.HEALTHY,
            new GiveUp(503, "upstream_unavailable", "")),
        row(
            "Claude 400 invalid request is the caller's",
            claude(400, INVALID),
            Fallback.HEALTHY,
            new Deliver()),
        row(
            "Claude 429 with an affordable wait retries there",
            claude(429, null).waitAllowed(ONE_S),
            Fallback.HEALTHY,
            new RetrySame(ONE_S)),
        row(
            "Claude 429 with no budget is rate_limited",
            claude(429, null),
            Fallback.HEALTHY,
            new GiveUp(429, "rate_limited", "")),
        row(
            "Claude connection error with no budget gives up",
            claude(0, null),
            Fallback.HEALTHY,
            new GiveUp(503, "upstream_unavailable", "")),
        row(
            "Claude cut after the first byte ends the stream",
            claude(0, null).sent(),
            Fallback.HEALTHY,
            new CutStream("upstream_cut", "")),
        row(
            "Claude 410 after the switch is model_retired",
            claude(410, null),
            Fallback.HEALTHY,
            new GiveUp(503, "model_retired", "")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("afterPrimaryAttempt")
  void decidesAfterAnAttempt(
      String sentence, AttemptRow attempt, Fallback fallback, Step expected) {
    Decision d = FailoverPlan.next(context(FAST, fallback, Optional.empty()), attempt.build(FAST));
    assertSameStep(expected, d.step(), sentence);
    assertEquals(attempt.status == 410, d.modelGone(), "only a 410 opens a model circuit");
  }

  static Stream<Arguments> structuredOutput() {
    return Stream.of(
        row(
            "OpenAI strict schema rejected retries in json_object mode",
            openAi(400, STRICT),
            false,
            new RetryAsJsonObject()),
        row(
            "OpenAI strict schema rejected twice is the caller's",
            openAi(400, STRICT),
            true,
            new Deliver()),
        row(
            "Claude grammar too large retries with the schema in the prompt",
            claude(400, GRAMMAR),
            false,
            new RetryWithSchemaInPrompt()),
        row(
            "Claude grammar too large twice is the caller's",
            claude(400, GRAMMAR),
            true,
            new Deliver()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("structuredOutput")
  void downgradesStructuredOutputOnce(
      String sentence, AttemptRow attempt, boolean alreadyDone, Step expected) {
    Context ctx =
        new Context(
            STRUCTURED,
            Set.of("json_schema"),
            Optional.empty(),
            Optional.empty(),
            m -> false,
            TODAY,
            MAX_RETRY_AFTER);
    AttemptRow row = alreadyDone ? attempt.downgraded() : attempt;
    assertSameStep(expected, FailoverPlan.next(ctx, row.build(STRUCTURED)).step(), sentence);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("structuredOutput")
  void noDowngradeWithoutASchema(
      String sentence, AttemptRow attempt, boolean alreadyDone, Step ignored) {
    Context ctx =
        new Context(
            STRUCTURED,
            Set.of(),
            Optional.empty(),
            Optional.empty(),
            m -> false,
            TODAY,
            MAX_RETRY_AFTER);
    assertSameStep(
        new Deliver(), FailoverPlan.next(ctx, attempt.build(STRUCTURED)).step(), sentence);
  }

  static Stream<Arguments> firstAttempt() {
    return Stream.of(
        Arguments.of(
            "a fresh call goes to the primary",
            FAST,
            Fallback.HEALTHY,
            Optional.empty(),
            Set.of(),
            new Call(Provider.OPENAI, "gpt-6.1-sol-mini", false)),
        Arguments.of(
            "a conversation stuck to Claude stays there",
            FAST,
            Fallback.HEALTHY,
            Optional.of(Provider.ANTHROPIC),
            Set.of(),
            new Call(Provider.ANTHROPIC, "claude-haiku-5-5", true)),
        Arguments.of(
            "a stuck conversation needing json_schema the fallback lacks goes to the primary",
            FAST,
            Fallback.REQUEST_NEEDS_JSON_SCHEMA_IT_LACKS,
            Optional.of(Provider.ANTHROPIC),
            Set.of(),
            new Call(Provider.OPENAI, "gpt-6.1-sol-mini", false)),
        Arguments.of(
            "a retired primary (circuit open) goes straight to the fallback",
            FAST,
            Fallback.HEALTHY,
            Optional.empty(),
            Set.of("gpt-6.1-sol-mini"),
            new Call(Provider.ANTHROPIC, "claude-haiku-5-5", true)),
        Arguments.of(
            "a retired primary with no fallback is model_retired",
            NO_FALLBACK,
            Fallback.NONE,
            Optional.empty(),
            Set.of("gpt-6.1-sol-mini"),
            new GiveUp(503, "model_retired", "")),
        Arguments.of(
            "both models' circuits open is model_retired",
            FAST,
            Fallback.HEALTHY,
            Optional.empty(),
            Set.of("gpt-6.1-sol-mini", "claude-haiku-5-5"),
            new GiveUp(503, "model_retired", "")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("firstAttempt")
  void choosesTheFirstTarget(
      String sentence,
      RoutingProfile profile,
      Fallback fallback,
      Optional<Provider> sticky,
      Set<String> openModels,
      Step expected) {
    Context base = context(profile, fallback, sticky);
    Context ctx =
        new Context(
            profile,
            base.requestFeatures(),
            base.fallbackBlocker().get(),
            sticky,
            openModels::contains,
            TODAY,
            MAX_RETRY_AFTER);
    assertSameStep(expected, FailoverPlan.start(ctx), sentence);
  }

  private static final String QUOTA =
      "{\"error\":{\"message\":\"You exceeded your current quota, please check your plan and billing details.\","
          + "\"type\":\"insufficient_quota\",\"param\":null,\"code\":\"insufficient_quota\"}}";
  private static final String CLAUDE_BILLING =
      "{\"type\":\"error\",\"error\":{\"type\":\"billing_error\",\"message\":\"Your organization has no credits.\"}}";
  private static final Set<Provider> BOTH = Set.of(Provider.OPENAI, Provider.ANTHROPIC);
  private static final Set<Provider> OPENAI_ONLY = Set.of(Provider.OPENAI);
  private static final Set<Provider> ANTHROPIC_ONLY = Set.of(Provider.ANTHROPIC);

  static Stream<Arguments> quotaAndDataClass() {
    return Stream.of(
        row(
            "an OpenAI quota 429 fails over at once, even with a wait the budget allows",
            openAi(429, QUOTA).waitAllowed(ONE_S),
            FAST,
            BOTH,
            TO_HAIKU),
        row(
            "an OpenAI quota 429 with no fallback is handed back at once, never retried",
            openAi(429, QUOTA).waitAllowed(ONE_S),
            NO_FALLBACK,
            BOTH,
            new Deliver()),
        row(
            "a Claude billing 429 after the switch is handed back at once",
            claude(429, CLAUDE_BILLING).waitAllowed(ONE_S),
            FAST,
            BOTH,
            new Deliver()),
        row(
            "a rate-limit 429 on a class without the fallback still retries here",
            openAi(429, null).waitAllowed(ONE_S),
            FAST,
            OPENAI_ONLY,
            new RetrySame(ONE_S)),
        row(
            "an OpenAI 503 on a class without the fallback retries here while the budget allows",
            openAi(503, null).waitAllowed(ONE_S),
            FAST,
            OPENAI_ONLY,
            new RetrySame(ONE_S)),
        row(
            "an OpenAI 503 on a class without the fallback and no budget is fallback_not_permitted",
            openAi(503, null),
            FAST,
            OPENAI_ONLY,
            new GiveUp(503, "fallback_not_permitted", "")),
        row(
            "an OpenAI rate-limit 429 on a class without the fallback and no budget is fallback_not_permitted",
            openAi(429, null),
            FAST,
            OPENAI_ONLY,
            new GiveUp(503, "fallback_not_permitted", "")),
        row(
            "an OpenAI quota 429 on a class without the fallback is fallback_not_permitted at once",
            openAi(429, QUOTA).waitAllowed(ONE_S),
            FAST,
            OPENAI_ONLY,
            new GiveUp(503, "fallback_not_permitted", "")),
        row(
            "an OpenAI 401 on a class without the fallback is fallback_not_permitted",
            openAi(401, null).waitAllowed(ONE_S),
            FAST,
            OPENAI_ONLY,
            new GiveUp(503, "fallback_not_permitted", "")),
        row(
            "an OpenAI 410 on a class without the fallback is fallback_not_permitted (circuit still opens)",
            openAi(410, null),
            FAST,
            OPENAI_ONLY,
            new GiveUp(503, "fallback_not_permitted", "")),
        row(
            "a caller error on a class without the fallback is still the caller's",
            openAi(400, INVALID),
            FAST,
            OPENAI_ONLY,
            new Deliver()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("quotaAndDataClass")
  void quota429sAndDataClassesDecideTheSwitch(
      String sentence,
      AttemptRow attempt,
      RoutingProfile profile,
      Set<Provider> permitted,
      Step expected) {
    Context ctx =
        new Context(
            profile,
            Set.of(),
            Optional.empty(),
            Optional.empty(),
            m -> false,
            TODAY,
            MAX_RETRY_AFTER,
            "c",
            permitted);
    Decision d = FailoverPlan.next(ctx, attempt.build(profile));
    assertSameStep(expected, d.step(), sentence);
    assertEquals(
        attempt.status == 410, d.modelGone(), "a 410 opens the model circuit whatever the class");
  }

  static Stream<Arguments> firstAttemptByDataClass() {
    return Stream.of(
        row(
            "a class allowing both starts on the primary",
            FAST,
            BOTH,
            new Call(Provider.OPENAI, "gpt-6.1-sol-mini", false)),
        row(
            "a class allowing only the primary starts on it",
            FAST,
            OPENAI_ONLY,
            new Call(Provider.OPENAI, "gpt-6.1-sol-mini", false)),
        row(
            "a class allowing only the fallback's provider starts there, and that is no failover",
            FAST,
            ANTHROPIC_ONLY,
            new Call(Provider.ANTHROPIC, "claude-haiku-5-5", false)),
        row(
            "a class allowing no provider of the profile is data_class_forbidden",
            NO_FALLBACK,
            ANTHROPIC_ONLY,
            new GiveUp(403, "data_class_forbidden", "")),
        row(
            "a profile narrowing the class to nothing is data_class_forbidden",
            FAST,
            Set.of(),
            new GiveUp(403, "data_class_forbidden", "")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("firstAttemptByDataClass")
  void theDataClassChoosesWhereTheFirstAttemptMayGo(
      String sentence, RoutingProfile profile, Set<Provider> permitted, Step expected) {
    Context ctx =
        new Context(
            profile,
            Set.of(),
            Optional.empty(),
            Optional.empty(),
            m -> false,
            TODAY,
            MAX_RETRY_AFTER,
            "restricted",
            permitted);
    assertSameStep(expected, FailoverPlan.start(ctx), sentence);
  }

  @org.junit.jupiter.api.Test
  void fallbackNotPermittedNamesTheClassAndTheProvider() {
    Context ctx =
        new Context(
            FAST,
            Set.of(),
            Optional.empty(),
            Optional.empty(),
            m -> false,
            TODAY,
            MAX_RETRY_AFTER,
            "restricted",
            OPENAI_ONLY);
    GiveUp g = (GiveUp) FailoverPlan.next(ctx, openAi(503, null).build(FAST)).step();
    assertEquals(
        "openai answered HTTP 503 for profile 'fast-summary' and there is no failover: data class"
            + " 'restricted' may not be sent to anthropic",
        g.message());
  }

  /**
   * The fallback's blocker is its translated body: a call its primary serves must never ask for it,
   * and a call that switches asks for it only when the switch is otherwise allowed.
   */
  @org.junit.jupiter.api.Test
  void theFallbackBlockerIsAskedOnlyWhenTheCallWouldSwitch() {
    java.util.concurrent.atomic.AtomicInteger asked =
        new java.util.concurrent.atomic.AtomicInteger();
    Context ctx =
        new Context(
            FAST,
            Set.of(),
            () -> {
              asked.incrementAndGet();
              return Optional.of("tools are not translated to the Claude fallback");
            },
            Optional.empty(),
            m -> false,
            TODAY,
            MAX_RETRY_AFTER,
            "internal",
            BOTH,
            false);

    assertSameStep(
        new Call(Provider.OPENAI, "gpt-6.1-sol-mini", false), FailoverPlan.start(ctx), "");
    assertSameStep(new Deliver(), FailoverPlan.next(ctx, openAi(200, null).build(FAST)).step(), "");
    assertSameStep(
        new Deliver(),
        FailoverPlan.next(ctx, openAi(400, null).build(FAST)).step(),
        "caller error");
    assertSameStep(
        new RetrySame(Duration.ofMillis(10)),
        FailoverPlan.next(ctx, openAi(429, null).waitAllowed(Duration.ofMillis(10)).build(FAST))
            .step(),
        "a rate limit with an affordable wait");
    assertEquals(0, asked.get(), "no switch considered: the fallback's body is never asked for");

    GiveUp g = (GiveUp) FailoverPlan.next(ctx, openAi(503, null).build(FAST)).step();
    assertEquals("fallback_unsupported", g.errorType());
    assertTrue(asked.get() > 0, "the switch was refused on the blocker's word");
  }

  @org.junit.jupiter.api.Test
  void modelRetiredNamesModelAndProfile() {
    Step step =
        FailoverPlan.next(
                context(NO_FALLBACK, Fallback.NONE, Optional.empty()),
                openAi(410, null).build(NO_FALLBACK))
            .step();
    GiveUp g = (GiveUp) step;
    assertEquals(
        "model 'gpt-6.1-sol-mini' of profile 'solo' is retired and the profile has no fallback",
        g.message());
  }

  static Stream<Arguments> pinnedToThePrimary() {
    return Stream.of(
        row("a 200 is delivered", openAi(200, null), new Deliver()),
        row("a 503 is the caller's answer, not a switch", openAi(503, null), new Deliver()),
        row("no answer is the caller's answer (502)", openAi(0, null), new Deliver()),
        row("a 401 is the caller's answer", openAi(401, null), new Deliver()),
        row(
            "a 410 is the caller's answer (and opens the model's circuit)",
            openAi(410, null),
            new Deliver()),
        row(
            "a 503 with budget left retries on the primary",
            openAi(503, null).waitAllowed(ONE_S),
            new RetrySame(ONE_S)),
        row(
            "a 429 with an affordable wait retries on the primary",
            openAi(429, null).waitAllowed(ONE_S),
            new RetrySame(ONE_S)),
        row("a 429 past the budget is the provider's 429", openAi(429, null), new Deliver()),
        row(
            "a quota 429 is delivered at once, never retried",
            openAi(429, QUOTA).waitAllowed(ONE_S),
            new Deliver()),
        row("a cut stream is still cut", openAi(0, null).sent(), new CutStream("upstream_cut", "")),
        row(
            "OpenAI's strict-schema refusal still downgrades on the primary",
            openAi(400, STRICT).needs("json_schema"),
            new RetryAsJsonObject()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pinnedToThePrimary")
  void aCallPinnedToItsPrimaryNeverSwitches(String sentence, AttemptRow attempt, Step expected) {
    Decision d =
        FailoverPlan.next(
            pinned(attempt.features, Optional.empty(), Set.of()), attempt.build(FAST));
    assertSameStep(expected, d.step(), sentence);
    assertEquals(attempt.status == 410, d.modelGone(), sentence);
  }

  static Stream<Arguments> pinnedFirstAttempt() {
    return Stream.of(
        row(
            "a healthy primary is the first attempt",
            Optional.empty(),
            Set.of(),
            BOTH,
            new Call(Provider.OPENAI, "gpt-6.1-sol-mini", false)),
        row(
            "a conversation stuck to the fallback stays on the primary",
            Optional.of(Provider.ANTHROPIC),
            Set.of(),
            BOTH,
            new Call(Provider.OPENAI, "gpt-6.1-sol-mini", false)),
        row(
            "a primary whose circuit is open is model_retired, not the fallback",
            Optional.empty(),
            Set.of("gpt-6.1-sol-mini"),
            BOTH,
            new GiveUp(503, "model_retired", "")),
        row(
            "a class allowing only the fallback's provider is data_class_forbidden",
            Optional.empty(),
            Set.of(),
            ANTHROPIC_ONLY,
            new GiveUp(403, "data_class_forbidden", "")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("pinnedFirstAttempt")
  void aCallPinnedToItsPrimaryStartsThereOrNowhere(
      String sentence,
      Optional<Provider> sticky,
      Set<String> openModels,
      Set<Provider> permitted,
      Step expected) {
    Context ctx =
        new Context(
            FAST,
            Set.of(),
            Optional::empty,
            sticky,
            openModels::contains,
            TODAY,
            MAX_RETRY_AFTER,
            "c",
            permitted,
            true);
    Step step = FailoverPlan.start(ctx);
    assertSameStep(expected, step, sentence);
    if (step instanceof GiveUp g) {
      assertTrue(g.message().contains("x-failover: never"), g.message());
    }
  }

  private static Context pinned(
      Set<String> features, Optional<Provider> sticky, Set<String> openModels) {
    return new Context(
        FAST,
        features,
        Optional::empty,
        sticky,
        openModels::contains,
        TODAY,
        MAX_RETRY_AFTER,
        "c",
        BOTH,
        true);
  }

  @org.junit.jupiter.api.Test
  void featuresOfARequest() {
    assertEquals(
        Set.of("streaming", "json_schema"),
        FailoverPlan.featuresOf(
            dev.spendgateway.upstream.translate.JsonForTests.parse(
                "{\"stream\":true,\"response_format\":{\"type\":\"json_schema\"}}")));
  }

  // ---- helpers ----

  private static Context context(
      RoutingProfile profile, Fallback fallback, Optional<Provider> sticky) {
    RoutingProfile p = fallback == Fallback.NONE ? NO_FALLBACK : profile;
    Set<String> features =
        fallback == Fallback.REQUEST_NEEDS_JSON_SCHEMA_IT_LACKS ? Set.of("json_schema") : Set.of();
    Optional<String> blocker =
        fallback == Fallback.REQUEST_HAS_TOOLS
            ? Optional.of("tools are not translated to the Claude fallback")
            : Optional.empty();
    Set<String> open =
        fallback == Fallback.MODEL_CIRCUIT_OPEN ? Set.of("claude-haiku-5-5") : Set.of();
    return new Context(p, features, blocker, sticky, open::contains, TODAY, MAX_RETRY_AFTER);
  }

  /**
   * Compares the step kind and its status/type/targets; free-text messages are checked separately.
   */
  private static void assertSameStep(Step expected, Step actual, String sentence) {
    if (expected instanceof GiveUp e && actual instanceof GiveUp a) {
      assertEquals(
          e.status() + " " + e.errorType(),
          a.status() + " " + a.errorType(),
          sentence + " — " + a.message());
    } else if (expected instanceof CutStream e && actual instanceof CutStream a) {
      assertEquals(e.errorType(), a.errorType(), sentence);
    } else {
      assertEquals(expected, actual, sentence);
    }
  }

  private static Arguments row(String sentence, Object... rest) {
    Object[] all = new Object[rest.length + 1];
    all[0] = sentence;
    System.arraycopy(rest, 0, all, 1, rest.length);
    return Arguments.of(all);
  }

  private static AttemptRow openAi(int status, String body) {
    return new AttemptRow(Provider.OPENAI, status, body);
  }

  private static AttemptRow claude(int status, String body) {
    return new AttemptRow(Provider.ANTHROPIC, status, body);
  }

  /** A readable attempt builder for the rows. */
  static final class AttemptRow {
    final Provider provider;
    final int status;
    final String body;
    Optional<Duration> retryAfter = Optional.empty();
    Optional<Duration> affordable = Optional.empty();
    boolean sent;
    boolean downgraded;
    Set<String> features = Set.of();

    AttemptRow(Provider provider, int status, String body) {
      this.provider = provider;
      this.status = status;
      this.body = body;
    }

    AttemptRow waitAllowed(Duration d) {
      affordable = Optional.of(d);
      return this;
    }

    AttemptRow retryAfter(Duration d) {
      retryAfter = Optional.of(d);
      return this;
    }

    /** The request uses these catalog features (for the plan's context). */
    AttemptRow needs(String... requestFeatures) {
      features = Set.of(requestFeatures);
      return this;
    }

    AttemptRow sent() {
      sent = true;
      return this;
    }

    AttemptRow downgraded() {
      AttemptRow copy = new AttemptRow(provider, status, body);
      copy.retryAfter = retryAfter;
      copy.affordable = affordable;
      copy.sent = sent;
      copy.downgraded = true;
      return copy;
    }

    Attempt build(RoutingProfile profile) {
      String model = profile.modelOn(provider).map(m -> m.name()).orElse("unknown");
      return new Attempt(provider, model, status, body, retryAfter, affordable, sent, downgraded);
    }

    @Override
    public String toString() {
      return provider.wireName() + " " + status;
    }
  }
}
