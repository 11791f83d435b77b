package dev.spendgateway.edge.router;

import dev.spendgateway.edge.call.Call;
import dev.spendgateway.edge.call.CallEnd;
import dev.spendgateway.edge.call.ProviderGuards;
import dev.spendgateway.edge.call.Refusal;
import dev.spendgateway.edge.call.UpstreamExchange;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.log.AccessLine;
import dev.spendgateway.edge.router.RoutedAnswers.Failure;
import dev.spendgateway.edge.router.RoutedAnswers.Target;
import dev.spendgateway.edge.router.RoutedPreparation.Routed;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.dataclass.DataClasses;
import dev.spendgateway.policy.request.PolicyDecision;
import dev.spendgateway.upstream.client.UpstreamBody;
import dev.spendgateway.upstream.client.UpstreamRequest;
import dev.spendgateway.upstream.client.UpstreamResult;
import dev.spendgateway.upstream.failover.AttemptBudget;
import dev.spendgateway.upstream.failover.FailoverPlan;
import dev.spendgateway.upstream.failover.FailoverPlan.Decision;
import dev.spendgateway.upstream.failover.FailoverPlan.Step;
import dev.spendgateway.upstream.failover.StructuredOutputFallback;
import dev.spendgateway.upstream.stream.UsageChunkFilter;
import dev.spendgateway.upstream.usage.ApiKind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The failover loop of one routed call: each attempt through {@link Call#attempt} (guards, reserve,
 * exchange, like a pass-through call's one), what came back read by {@link FailoverPlan}: deliver,
 * retry the same provider after a wait, switch to the fallback, downgrade structured output, or
 * give up. Every end is a {@link CallEnd} value; the pipeline answers and writes the line.
 */
final class FailoverLoop {
  private static final Logger log = LoggerFactory.getLogger(FailoverLoop.class);
  private static final ContentType EVENT_STREAM = ContentTypes.create(MediaTypes.TEXT_EVENT_STREAM);

  private final RouterContext rc;

  FailoverLoop(RouterContext rc) {
    this.rc = rc;
  }

  /**
   * The failover loop's state between attempts.
   *
   * @param target the attempt about to run (or that ran last)
   * @param retriesHere retries already made on this target's provider
   * @param lastStatus the last failed attempt's status (0: no answer; -1: none yet)
   * @param downgraded whether structured output was downgraded (json_object mode or schema in
   *     prompt)
   * @param openAiBody the vetted OpenAI body
   * @param anthropicBody the vetted Anthropic body (null: no usable fallback), built on the first
   *     attempt that goes to Anthropic
   */
  record Loop(
      Target target,
      int retriesHere,
      int lastStatus,
      boolean downgraded,
      PolicyDecision.Allowed openAiBody,
      Supplier<PolicyDecision.Allowed> anthropicBody) {

    Loop to(Target next) {
      boolean sameProvider = target != null && target.provider() == next.provider();
      return new Loop(
          next, sameProvider ? retriesHere : 0, lastStatus, downgraded, openAiBody, anthropicBody);
    }

    Loop failedWith(int status) {
      return new Loop(target, retriesHere, status, downgraded, openAiBody, anthropicBody);
    }

    Loop retried() {
      return new Loop(target, retriesHere + 1, lastStatus, downgraded, openAiBody, anthropicBody);
    }

    Loop downgradedTo(PolicyDecision.Allowed openAi, Supplier<PolicyDecision.Allowed> anthropic) {
      return new Loop(target, retriesHere, lastStatus, true, openAi, anthropic);
    }

    PolicyDecision.Allowed bodyFor(Provider provider) {
      return provider == Provider.OPENAI ? openAiBody : anthropicBody.get();
    }
  }

  /** One routed call's own state: its preparation and its attempt budget. */
  record Routing(Call call, Routed routed, AttemptBudget budget) {}

  // --- one attempt ----------------------------------------------------------------------------

  /** The attempt {@code loop} is at, and what follows from it. */
  CompletionStage<CallEnd> attempt(Routing r, Loop loop) {
    if (!r.budget().tryStartAttempt()) {
      return refused(
          r,
          loop,
          RoutedAnswers.budgetSpent(
              r.routed().profile().name(), r.budget(), loop.lastStatus(), defaultRetryAfter()));
    }
    Target target = loop.target();
    Provider provider = target.provider();
    PolicyDecision.Allowed body = loop.bodyFor(provider);
    Call call = r.call();
    String profile = r.routed().profile().name();
    AccessLine attemptLine =
        AccessLine.arrived(rc.services().clock().instant(), call.startedNanos(), RoutedCall.ROUTE)
            .withRequestId(call.spend().requestId())
            .withProvider(provider.wireName())
            .withSpend(call.spend().lane().wireName(), call.spend().subject())
            .withModel(target.model())
            .withFailover(target.failover())
            .withProfile(profile)
            .withDataClass(call.dataClass().name());
    ApiKind kind = apiKind(provider);
    List<HttpHeader> callerHeaders = new ArrayList<>();
    call.request().getHeaders().forEach(callerHeaders::add);
    // fromArrayUnsafe: the array is new and never written again, so it need not be copied.
    UpstreamBody upstreamBody =
        new UpstreamBody.Strict(
            ContentTypes.APPLICATION_JSON,
            ByteString.fromArrayUnsafe(RouterJson.bytes(body.upstreamBody())));
    var listener = rc.listener(); // not this call: the callback may outlive a long stream's request
    Call.AttemptPlan plan =
        new Call.AttemptPlan(
            provider,
            target.model(),
            body.modelInfo(),
            body.worstCase(),
            r.routed().pool(),
            attemptLine,
            profile,
            new UpstreamExchange.Target(
                provider,
                target.model(),
                kind.path(),
                Optional.of(kind),
                kind::usageOfAnswer,
                kind::usageOf,
                true,
                false),
            new UpstreamRequest(HttpMethods.POST, callerHeaders, upstreamBody),
            held ->
                held.decided()
                    .thenAccept(
                        d ->
                            listener.attempt(
                                provider,
                                profile,
                                d.outcomeWord() == null ? "ok" : d.outcomeWord())));
    return call.attempt(plan)
        .thenCompose(
            attempted -> {
              if (attempted instanceof Call.Attempted.Exchanged exchanged) {
                return onExchanged(r, loop, exchanged);
              }
              if (attempted instanceof Call.Attempted.CallerGone gone) {
                return answered(r, loop, gone.refusal().response(), gone.attempt());
              }
              return refused(r, loop, ((Call.Attempted.Refused) attempted).refusal());
            });
  }

  private CompletionStage<CallEnd> onExchanged(
      Routing r, Loop loop, Call.Attempted.Exchanged exchanged) {
    var held = exchanged.attempt();
    UpstreamExchange.Exchanged result = exchanged.result();
    if (result instanceof UpstreamExchange.Exchanged.NoAnswer) {
      return next(r, loop, Failure.connection(), held);
    }
    if (result instanceof UpstreamExchange.Exchanged.ErrorStatus refused) {
      UpstreamResult.Responded responded = refused.responded();
      return next(
          r,
          loop,
          new Failure(
              responded.status(),
              refused.body(),
              responded.headersToPassBack(),
              UpstreamErrors.retryAfter(
                  responded.headersToPassBack(), rc.services().clock().instant())),
          held);
    }
    if (result instanceof UpstreamExchange.Exchanged.Unreadable unreadable) {
      if (unreadable.errorClass().equals("upstream_cut")) {
        // Cut before anything reached the caller: the attempt kept its worst case, the call may
        // still fail over.
        return next(r, loop, Failure.connection(), held);
      }
      return refused(r, loop, RoutedAnswers.unreadable(unreadable.errorClass()));
    }
    Provider provider = loop.target().provider();
    List<String> warnings = loop.bodyFor(provider).warnings();
    if (result instanceof UpstreamExchange.Exchanged.Streaming streaming) {
      return streamed(r, loop, streaming, held, warnings);
    }
    UpstreamExchange.Exchanged.Whole whole = (UpstreamExchange.Exchanged.Whole) result;
    ByteString answer =
        RoutedAnswers.whole(
            provider,
            (com.fasterxml.jackson.databind.node.ObjectNode) whole.json().orElseThrow(),
            r.routed().profile().name(),
            r.call().started().getEpochSecond());
    return answered(
        r,
        loop,
        RoutedAnswers.answered(
            whole.responded().headersToPassBack(),
            warnings,
            HttpEntities.create(ContentTypes.APPLICATION_JSON, answer)),
        held);
  }

  /**
   * A streamed answer. The response is only started once the first upstream bytes are in: a stream
   * that dies before that is an attempt failure like any other (and may fail over); after it, a cut
   * ends the caller's stream with an error event and is never retried.
   */
  private CompletionStage<CallEnd> streamed(
      Routing r,
      Loop loop,
      UpstreamExchange.Exchanged.Streaming streaming,
      dev.spendgateway.edge.call.CallAttempt held,
      List<String> warnings) {
    Provider provider = loop.target().provider();
    var materializer = rc.services().materializer();
    return streaming
        .metered()
        .toClient()
        .prefixAndTail(1)
        .runWith(Sink.head(), materializer)
        .handle(
            (Pair<List<ByteString>, Source<ByteString, NotUsed>> split, Throwable failure) -> {
              if (failure != null) {
                return next(r, loop, Failure.connection(), held);
              }
              if (split.first().isEmpty()) {
                split.second().runWith(Sink.ignore(), materializer);
                return next(r, loop, Failure.connection(), held);
              }
              streaming.delivered();
              Source<ByteString, NotUsed> toClient =
                  Source.from(split.first())
                      .concat(split.second())
                      .via(
                          RoutedAnswers.stream(
                              provider,
                              r.routed().profile().name(),
                              r.call().started().getEpochSecond(),
                              rc.services().upstream().settings().sseLimits(),
                              UsageChunkFilter.callerAskedForUsage(r.routed().chatRequest())));
              return answered(
                  r,
                  loop,
                  RoutedAnswers.answered(
                      streaming.responded().headersToPassBack(),
                      warnings,
                      HttpEntities.create(EVENT_STREAM, toClient)),
                  held);
            })
        .thenCompose(s -> s);
  }

  // --- after a failed attempt -------------------------------------------------------------------

  private CompletionStage<CallEnd> next(
      Routing r, Loop attempted, Failure failure, dev.spendgateway.edge.call.CallAttempt held) {
    Loop loop = attempted.failedWith(failure.status());
    Target target = loop.target();
    Routed routed = r.routed();
    Decision decision = decide(r, loop, failure);
    if (decision.modelGone()) {
      r.call()
          .guards()
          .modelGone(
              target.provider(),
              target.model(),
              RoutedCall.ROUTE,
              "calls in profile '"
                  + routed.profile().name()
                  + "' use the fallback until the catalog is fixed");
    }
    Step step = decision.step();
    if (r.call().isCallerGone()) {
      return callerGone(
          r, loop, failure, held, "before " + target.provider().wireName() + " answered");
    }
    if (step instanceof FailoverPlan.RetrySame retry) {
      return r.call()
          .guards()
          .waitedOut(retry.delay(), r.call().callerGone())
          .thenCompose(
              callerStayed ->
                  callerStayed
                      ? attempt(r, loop.retried())
                      : callerGone(
                          r,
                          loop,
                          failure,
                          held,
                          "during the "
                              + retry.delay().toMillis()
                              + " ms wait before retrying "
                              + target.provider().wireName()));
    }
    if (step instanceof FailoverPlan.SwitchTo to) {
      routed.spend().conversationId().ifPresent(id -> rc.stickiness().stick(id, to.provider()));
      rc.listener().failover(routed.profile().name(), to.provider());
      return attempt(r, loop.to(new Target(to.provider(), to.model(), true)));
    }
    if (step instanceof FailoverPlan.RetryAsJsonObject) {
      StructuredOutputFallback.schemaOf(routed.chatRequest())
          .ifPresent(rc.schemas()::rememberRejected);
      PolicyDecision d =
          RoutedPreparation.openAiDecision(
              rc.services().policy(),
              routed.profile(),
              routed.chatRequest(),
              true,
              r.call().today());
      if (d instanceof PolicyDecision.Allowed allowed) {
        return attempt(r, loop.downgradedTo(allowed, loop.anthropicBody()));
      }
      return deliver(r, loop, failure, held);
    }
    if (step instanceof FailoverPlan.RetryWithSchemaInPrompt) {
      PolicyDecision d =
          RoutedPreparation.schemaInPrompt(
              rc.services().policy(),
              loop.anthropicBody().get(),
              StructuredOutputFallback.schemaOf(routed.chatRequest()).orElseThrow(),
              r.call().today());
      if (d instanceof PolicyDecision.Allowed allowed) {
        return attempt(r, loop.downgradedTo(loop.openAiBody(), () -> allowed));
      }
      return deliver(r, loop, failure, held);
    }
    if (step instanceof FailoverPlan.GiveUp g
        && g.errorType().equals(DataClasses.FALLBACK_NOT_PERMITTED)) {
      rc.services()
          .metrics()
          .dataClass(routed.plan().dataClass(), DataClasses.FALLBACK_NOT_PERMITTED);
      return refused(r, loop, RoutedAnswers.fallbackNotPermitted(target.provider(), g, failure));
    }
    if (step instanceof FailoverPlan.GiveUp g) {
      Optional<String> retryAfter =
          failure.status() == 429
              ? UpstreamErrors.header(failure.headers(), "retry-after")
                  .or(() -> Optional.of(Long.toString(defaultRetryAfter())))
              : Optional.empty();
      return refused(r, loop, RoutedAnswers.giveUp(g, retryAfter));
    }
    if (step instanceof FailoverPlan.CutStream cut) {
      return refused(
          r,
          loop,
          Refusal.of(Shape.OPENAI, 502, cut.errorType(), cut.message(), null, cut.errorType()));
    }
    return deliver(r, loop, failure, held);
  }

  /**
   * Asks the plan. On the primary, with a fallback to go to, retries there may use only half the
   * attempt budget, so the switch always has attempts left ("primary, one retry, fallback, one
   * retry" with the interactive default of 4). When the plan then gives up, it is asked again with
   * the whole budget (the fallback could not be used after all).
   */
  private Decision decide(Routing r, Loop loop, Failure failure) {
    AttemptBudget budget = r.budget();
    var profile = r.routed().profile();
    Optional<Duration> full =
        rc.settings()
            .retryPolicy()
            .affordableWait(loop.retriesHere(), failure.retryAfter(), rc.random().get(), budget);
    boolean keepForSwitch =
        loop.target().provider() == profile.primary().provider()
            && profile.fallback().isPresent()
            && !r.routed().plan().failoverNever();
    int primaryShare = Math.max(1, budget.limits().maxAttempts() / 2);
    Optional<Duration> share = full.filter(w -> !keepForSwitch || budget.attempts() < primaryShare);
    Decision d = FailoverPlan.next(r.routed().plan(), attemptOf(loop, failure, share));
    if (d.step() instanceof FailoverPlan.GiveUp && share.isEmpty() && full.isPresent()) {
      d = FailoverPlan.next(r.routed().plan(), attemptOf(loop, failure, full));
    }
    return d;
  }

  private static FailoverPlan.Attempt attemptOf(
      Loop loop, Failure failure, Optional<Duration> wait) {
    Target target = loop.target();
    return new FailoverPlan.Attempt(
        target.provider(),
        target.model(),
        failure.status(),
        failure.status() == 0 ? null : UpstreamErrors.text(failure.body()),
        failure.retryAfter(),
        wait,
        false,
        loop.downgraded());
  }

  /**
   * The {@code retry-after} of a gateway-made 429 when the provider gave no advice: the longest
   * backoff wait, in whole seconds. Every 429 tells the caller when to come back (docs/ROUTER.md);
   * without one an SDK retries at once on its own schedule, a storm on top of the router's
   * attempts.
   */
  private long defaultRetryAfter() {
    return ProviderGuards.retryAfterSeconds(rc.settings().retryPolicy().backoff().cap());
  }

  /**
   * The failed attempt's own answer and no further attempt, for a caller who hung up ({@code
   * when}): nobody would read another attempt's answer, but the provider would bill it.
   */
  private CompletionStage<CallEnd> callerGone(
      Routing r,
      Loop loop,
      Failure failure,
      dev.spendgateway.edge.call.CallAttempt held,
      String when) {
    log.info(
        "request {}: the caller hung up {}; no further attempt",
        r.routed().spend().requestId(),
        when);
    return deliver(r, loop, failure, held);
  }

  /** The last attempt's failure as the caller's answer (its own line already records it). */
  private CompletionStage<CallEnd> deliver(
      Routing r, Loop loop, Failure failure, dev.spendgateway.edge.call.CallAttempt held) {
    Provider provider = loop.target().provider();
    if (failure.status() == 0) {
      return refused(r, loop, RoutedAnswers.unreachable(provider));
    }
    return answered(r, loop, RoutedAnswers.upstreamError(provider, failure), held);
  }

  /** The chat API the router speaks on each provider. */
  private static ApiKind apiKind(Provider provider) {
    return switch (provider) {
      case OPENAI -> ApiKind.OPENAI_CHAT_COMPLETIONS;
      case ANTHROPIC -> ApiKind.ANTHROPIC_MESSAGES;
    };
  }

  /**
   * The gateway answers the call itself: the call's line names the last target (if any), and the
   * caller's answer says which provider it was.
   */
  static CompletionStage<CallEnd> refused(Routing r, Loop loop, Refusal refusal) {
    Target last = loop.target();
    r.call()
        .line()
        .learn(
            l ->
                l.withProvider(last == null ? null : last.provider().wireName())
                    .withFailover(last != null && last.failover()));
    return CompletableFuture.completedFuture(new CallEnd.Refused(refusal, callHeaders(r, loop)));
  }

  private static CompletionStage<CallEnd> answered(
      Routing r,
      Loop loop,
      org.apache.pekko.http.javadsl.model.HttpResponse response,
      dev.spendgateway.edge.call.CallAttempt held) {
    return CompletableFuture.completedFuture(
        new CallEnd.Answered(response, held, callHeaders(r, loop)));
  }

  /**
   * What the caller is told about the last attempt: provider, model, failover, and how its
   * structured output was asked for (from the body that attempt sent).
   */
  private static List<HttpHeader> callHeaders(Routing r, Loop loop) {
    Target last = loop.target();
    if (last == null) {
      return List.of();
    }
    Optional<String> structured =
        StructuredOutputFallback.enforcement(
            r.routed().chatRequest(),
            last.provider() == Provider.ANTHROPIC,
            loop.bodyFor(last.provider()).upstreamBody());
    return RoutedAnswers.callHeaders(last, structured);
  }
}
