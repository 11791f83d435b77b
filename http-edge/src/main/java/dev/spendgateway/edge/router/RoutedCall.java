package dev.spendgateway.edge.router;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.edge.CallerConnection;
import dev.spendgateway.edge.body.BodyMemory;
import dev.spendgateway.edge.body.BodyType;
import dev.spendgateway.edge.body.CallerBodies;
import dev.spendgateway.edge.call.BudgetRefusal;
import dev.spendgateway.edge.call.CallAttempt;
import dev.spendgateway.edge.call.CallCore;
import dev.spendgateway.edge.call.CallLine;
import dev.spendgateway.edge.call.CallerJsonBody;
import dev.spendgateway.edge.call.ProviderGuards;
import dev.spendgateway.edge.call.Settlement;
import dev.spendgateway.edge.call.UpstreamExchange;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.log.AccessLine;
import dev.spendgateway.edge.metrics.UsageTelemetry;
import dev.spendgateway.edge.provider.DataClassHeader;
import dev.spendgateway.edge.provider.Overload;
import dev.spendgateway.edge.provider.SpendHeaders;
import dev.spendgateway.edge.provider.SpendHeaders.SpendContext;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.cost.WorstCase;
import dev.spendgateway.policy.dataclass.DataClass;
import dev.spendgateway.policy.dataclass.DataClasses;
import dev.spendgateway.policy.request.PolicyDecision;
import dev.spendgateway.upstream.client.UpstreamBody;
import dev.spendgateway.upstream.client.UpstreamRequest;
import dev.spendgateway.upstream.client.UpstreamResult;
import dev.spendgateway.upstream.failover.AdmissionPools.Permit;
import dev.spendgateway.upstream.failover.AttemptBudget;
import dev.spendgateway.upstream.failover.FailoverPlan;
import dev.spendgateway.upstream.failover.FailoverPlan.Attempt;
import dev.spendgateway.upstream.failover.FailoverPlan.Decision;
import dev.spendgateway.upstream.failover.FailoverPlan.Step;
import dev.spendgateway.upstream.failover.Pool;
import dev.spendgateway.upstream.failover.PoolFull;
import dev.spendgateway.upstream.failover.ProviderRateLimits;
import dev.spendgateway.upstream.failover.RoutingProfile;
import dev.spendgateway.upstream.failover.StructuredOutputFallback;
import dev.spendgateway.upstream.stream.UsageChunkFilter;
import dev.spendgateway.upstream.translate.AnthropicSseToChatChunks;
import dev.spendgateway.upstream.translate.ChatToMessages;
import dev.spendgateway.upstream.translate.MessagesToChat;
import dev.spendgateway.upstream.translate.OpenAiChunks;
import dev.spendgateway.upstream.translate.TranslationError;
import dev.spendgateway.upstream.usage.ApiKind;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.http.javadsl.model.ResponseEntity;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One routed {@code POST /v1/chat/completions} call: spend headers, body type (415 for multipart),
 * strict body, profile, policy on the body actually sent to each provider, then the failover loop
 * as {@link FailoverPlan} directs. Each attempt is admitted by its pool and then runs through the
 * {@link CallCore} and an {@link UpstreamExchange} like a pass-through call: it reserves its own
 * worst case, is sent, read and closed once by the shared rules and writes its own access line.
 * This class keeps only what is the router's: choosing the next target, translating to and from it,
 * and the call's own line when no attempt answers it.
 *
 * <p>State: what the call learned before its first attempt is one immutable {@link Prepared}; the
 * loop's state (target, retries there, the bodies as last downgraded) is one immutable {@link Loop}
 * handed from attempt to attempt, so no field is written by one stage and read by another.
 */
final class RoutedCall {
  static final String ROUTE = "/v1/chat/completions";
  static final String PROVIDER_HEADER = "x-gateway-provider";
  static final String FAILOVER_HEADER = "x-gateway-failover";

  private static final Logger log = LoggerFactory.getLogger(RoutedCall.class);
  private static final ContentType EVENT_STREAM = ContentTypes.create(MediaTypes.TEXT_EVENT_STREAM);

  private final RouterContext rc;
  private final HttpRequest request;
  private final Instant started;
  private final long startedNanos;
  private final LocalDate today;
  private final CallCore core;
  private final ProviderGuards guards;

  /**
   * The call's own line: written when no attempt answers the call (refusals, gateway-made errors).
   */
  private final CallLine callLine;

  /** Where an attempt goes; {@code failover} is the {@code x-gateway-failover} value. */
  record Target(Provider provider, String model, boolean failover) {}

  /** What the call learned before its first attempt; never changes after. */
  private record Prepared(
      SpendContext spend,
      RoutingProfile profile,
      Pool pool,
      ObjectNode chatRequest,
      AttemptBudget budget,
      FailoverPlan.Context plan) {}

  /**
   * The failover loop's state between attempts.
   *
   * @param target the attempt about to run (or that ran last)
   * @param retriesHere retries already made on this target's provider
   * @param lastStatus the last failed attempt's status (0: no answer; -1: none yet)
   * @param downgraded whether structured output was downgraded (json_object mode or schema in
   *     prompt)
   * @param openAiBody the vetted OpenAI body
   * @param anthropicBody the vetted Anthropic body (null: no usable fallback)
   */
  private record Loop(
      Target target,
      int retriesHere,
      int lastStatus,
      boolean downgraded,
      PolicyDecision.Allowed openAiBody,
      PolicyDecision.Allowed anthropicBody) {

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

    Loop downgradedTo(PolicyDecision.Allowed openAi, PolicyDecision.Allowed anthropic) {
      return new Loop(target, retriesHere, lastStatus, true, openAi, anthropic);
    }

    PolicyDecision.Allowed bodyFor(Provider provider) {
      return provider == Provider.OPENAI ? openAiBody : anthropicBody;
    }
  }

  /** What the caller gets, and the target that answered last (for the call's headers). */
  private record Reply(HttpResponse response, Target last) {}

  /** A failed attempt, as the plan and (for Deliver) the caller see it. */
  private record Failure(
      int status, ByteString body, List<HttpHeader> headers, Optional<Duration> retryAfter) {
    static Failure connection() {
      return new Failure(0, ByteString.emptyByteString(), List.of(), Optional.empty());
    }
  }

  RoutedCall(RouterContext rc, ProviderGuards guards, HttpRequest request) {
    this.rc = rc;
    this.request = request;
    this.started = rc.services().clock().instant();
    this.startedNanos = rc.nanoTime().getAsLong();
    this.today = LocalDate.ofInstant(started, ZoneOffset.UTC);
    this.core = new CallCore(rc.services(), rc.nanoTime());
    this.guards = guards;
    this.callLine = new CallLine(AccessLine.arrived(started, startedNanos, ROUTE), rc.nanoTime());
  }

  /** Runs the call; the returned response is what the caller gets (never a failed stage). */
  CompletionStage<HttpResponse> run() {
    // The pass-through routes' reader: a spend header sent twice is refused, never resolved by
    // picking one.
    SpendHeaders.Result headers = SpendHeaders.readAll(request);
    if (headers.violation().isPresent()) {
      SpendHeaders.HeaderViolation v = headers.violation().get();
      return CompletableFuture.completedFuture(
          withCallHeaders(
              null,
              callError(
                  null,
                  null,
                  400,
                  "invalid_request_error",
                  v.message(),
                  v.header(),
                  "bad_header")));
    }
    SpendContext spend = headers.context().get();
    callLine.learn(
        l ->
            l.withRequestId(spend.requestId()).withSpend(spend.lane().wireName(), spend.subject()));
    DataClassHeader.Read classRead = DataClassHeader.read(request, rc.services().dataClasses());
    if (classRead.refusal().isPresent()) {
      return CompletableFuture.completedFuture(
          withCallHeaders(
              spend,
              callError(
                  null,
                  null,
                  400,
                  "invalid_request_error",
                  classRead.refusal().get(),
                  DataClasses.HEADER,
                  "bad_header")));
    }
    DataClass dataClass = classRead.dataClass().get();
    callLine.learn(l -> l.withDataClass(dataClass.name()));
    if (!BodyType.JSON.accepts(request.entity())) {
      // Before the body is read: nothing reserved, nothing sent upstream.
      HttpResponse refused =
          callError(
              null,
              null,
              415,
              "invalid_request_error",
              BodyType.JSON.refusal(request.entity()),
              BodyType.HEADER,
              "unsupported_media_type");
      return CallerBodies.discard(request.entity(), rc.services().materializer())
          .thenApply(drained -> withCallHeaders(spend, refused));
    }
    // The body is held from its read until the answer is handed over (see BodyMemory).
    Optional<BodyMemory.Lease> bodyHeld =
        rc.services()
            .bodyMemory()
            .take(request.entity(), rc.services().policy().limits().maxBodyBytes());
    if (bodyHeld.isEmpty()) {
      HttpResponse refused =
          Overload.refusal(Shape.OPENAI, Overload.BODY_MEMORY, rc.services().metrics());
      writeCallLine(null, null, 503, Overload.BODY_MEMORY);
      return CallerBodies.discard(request.entity(), rc.services().materializer())
          .thenApply(drained -> withCallHeaders(spend, refused));
    }
    return CallerJsonBody.read(bodyHeld.get().entity(), rc.services())
        .thenCompose(body -> withBody(spend, dataClass, body))
        .exceptionally(this::internalError)
        .whenComplete((reply, failure) -> bodyHeld.get().release())
        .thenApply(reply -> withCallHeaders(spend, reply));
  }

  // --- preparing the call ---------------------------------------------------------------------

  private CompletionStage<Reply> withBody(
      SpendContext spend, DataClass dataClass, CallerJsonBody.Read body) {
    if (body instanceof CallerJsonBody.Refused refused) {
      return refuse(
          callError(
              null,
              null,
              refused.status(),
              "invalid_request_error",
              refused.message(),
              refused.field(),
              refused.errorClass()));
    }
    ObjectNode chatRequest = ((CallerJsonBody.Json) body).object();
    String name = chatRequest.path("model").asText("");
    Optional<RoutingProfile> found = rc.profiles().find(name);
    if (found.isEmpty()) {
      return refuse(
          callError(
              null,
              null,
              400,
              "invalid_request_error",
              "Unknown profile '"
                  + name
                  + "': `model` must name a routing profile, one of "
                  + String.join(", ", rc.profiles().names())
                  + ".",
              "model",
              "unknown_profile"));
    }
    RoutingProfile profile = found.get();
    callLine.learn(l -> l.withProfile(profile.name()));
    Optional<String> priority = request.getHeader(SpendHeaders.PRIORITY).map(HttpHeader::value);
    Pool pool =
        priority.map(Pool::fromWireName).orElse(profile.pool()); // SpendHeaders validated it
    return prepared(spend, dataClass, profile, pool, chatRequest);
  }

  private CompletionStage<Reply> prepared(
      SpendContext spend,
      DataClass dataClass,
      RoutingProfile profile,
      Pool pool,
      ObjectNode chatRequest) {
    Optional<JsonNode> schema = StructuredOutputFallback.schemaOf(chatRequest);
    boolean downgraded = schema.isPresent() && rc.schemas().wasRejected(schema.get());
    PolicyDecision primary = openAiDecision(profile, chatRequest, downgraded);
    if (primary instanceof PolicyDecision.Violation v) {
      return refuse(
          callError(
              null,
              profile,
              v.httpStatus(),
              "invalid_request_error",
              v.message(),
              v.field(),
              "policy:" + v.rule()));
    }
    PolicyDecision.Allowed openAiBody = (PolicyDecision.Allowed) primary;
    if (openAiBody.worstCase().inputTokensAssumed() > profile.contextLimit()) {
      return refuse(
          callError(
              null,
              profile,
              400,
              "context_length_exceeded",
              "The request needs about "
                  + openAiBody.worstCase().inputTokensAssumed()
                  + " input tokens; profile '"
                  + profile.name()
                  + "' allows "
                  + profile.contextLimit()
                  + "."
                  + (openAiBody.worstCase().inputTokensAssumed()
                          >= openAiBody.modelInfo().contextLimit()
                      ? " An inline document or content fetched from a URL counts as the model's"
                          + " whole context window: its pages, not its bytes, are billed."
                      : ""),
              "messages",
              "context_length_exceeded"));
    }
    Fallback fallback = fallback(profile, chatRequest);
    FailoverPlan.Context plan =
        new FailoverPlan.Context(
            profile,
            FailoverPlan.featuresOf(chatRequest),
            fallback.blocker(),
            spend.conversationId().flatMap(rc.stickiness()::find),
            rc.circuits()::isOpen,
            today,
            rc.settings().retryPolicy().maxRetryAfter(),
            dataClass.name(),
            dataClass.narrowedTo(profile.narrowingFor(dataClass.name())));
    Prepared call =
        new Prepared(
            spend,
            profile,
            pool,
            chatRequest,
            AttemptBudget.start(rc.settings().budgets().get(pool), rc.nanoTime()),
            plan);
    Step first = FailoverPlan.start(plan);
    boolean forbidden =
        first instanceof FailoverPlan.GiveUp g && g.errorType().equals(DataClasses.FORBIDDEN);
    rc.services().metrics().dataClass(dataClass.name(), forbidden ? "forbidden" : "allowed");
    if (first instanceof FailoverPlan.GiveUp g) {
      return refuse(giveUp(call, null, g, Optional.empty()));
    }
    FailoverPlan.Call to = (FailoverPlan.Call) first;
    Loop loop = new Loop(null, 0, -1, downgraded, openAiBody, fallback.body());
    return attempt(call, loop.to(new Target(to.provider(), to.model(), to.failover())));
  }

  /**
   * The OpenAI body: the profile's primary model in {@code model}, json_object mode once
   * downgraded.
   */
  private PolicyDecision openAiDecision(
      RoutingProfile profile, ObjectNode chatRequest, boolean downgraded) {
    ObjectNode body = chatRequest.deepCopy();
    body.put("model", profile.primary().name());
    if (downgraded) {
      body = StructuredOutputFallback.toJsonObjectMode(body);
    }
    return rc.services().policy().openAiChatCompletions(body, RouterJson.bytes(body).length, today);
  }

  /**
   * The fallback's vetted body, or the reason it cannot serve this request (neither: no fallback).
   */
  private record Fallback(PolicyDecision.Allowed body, Optional<String> blocker) {}

  /** Translates for the fallback and vets it. */
  private Fallback fallback(RoutingProfile profile, ObjectNode chatRequest) {
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
        rc.services()
            .policy()
            .anthropicMessages(translated, RouterJson.bytes(translated).length, today);
    if (d instanceof PolicyDecision.Violation v) {
      return new Fallback(
          null,
          Optional.of(
              "the translated request breaks policy rule " + v.rule() + " (" + v.message() + ")"));
    }
    return new Fallback((PolicyDecision.Allowed) d, Optional.empty());
  }

  // --- one attempt ----------------------------------------------------------------------------

  private CompletionStage<Reply> attempt(Prepared call, Loop loop) {
    Target target = loop.target();
    if (!call.budget().tryStartAttempt()) {
      if (loop.lastStatus() == 429) {
        return answer(
            loop,
            callError(
                target,
                call.profile(),
                429,
                "rate_limited",
                "The provider kept answering 429 within the call's attempt budget for profile '"
                    + call.profile().name()
                    + "'.",
                null,
                "budget_spent",
                List.of(RawHeader.create("retry-after", defaultRetryAfter()))));
      }
      return answer(
          loop,
          callError(
              target,
              call.profile(),
              503,
              "upstream_unavailable",
              "The call's attempt budget ("
                  + call.budget().limits().maxAttempts()
                  + " attempts, "
                  + call.budget().limits().totalTime().toSeconds()
                  + " s) is spent for profile '"
                  + call.profile().name()
                  + "'.",
              null,
              "budget_spent"));
    }
    WorstCase worstCase = loop.bodyFor(target.provider()).worstCase();
    return guards
        .clear(
            target.provider(),
            worstCase.inputTokensAssumed() + worstCase.outputTokensAssumed(),
            call.pool(),
            CallerConnection.gone(request))
        .thenCompose(
            clearance -> {
              if (clearance instanceof ProviderGuards.Clearance.Cleared cleared) {
                return reserve(call, loop, cleared.permit());
              }
              if (clearance instanceof ProviderGuards.Clearance.RateLimited limited) {
                return rateLimited(call, loop, limited.refused());
              }
              if (clearance instanceof ProviderGuards.Clearance.PoolRefused full) {
                return poolFull(call, loop, full.full());
              }
              return callerGoneBeforeSent(
                  call, loop, ((ProviderGuards.Clearance.CallerGone) clearance).when());
            });
  }

  private CompletionStage<Reply> rateLimited(
      Prepared call, Loop loop, ProviderRateLimits.Turn.Refused refused) {
    Target target = loop.target();
    long retryAfter = ProviderGuards.retryAfterSeconds(refused.retryAfter());
    return answer(
        loop,
        callError(
            target,
            call.profile(),
            429,
            "rate_limited",
            target.provider().wireName()
                + " is over this gateway's "
                + refused.limit()
                + "; nothing was sent or reserved, retry after "
                + retryAfter
                + " s.",
            null,
            "rate_limited",
            List.of(RawHeader.create("retry-after", Long.toString(retryAfter)))));
  }

  private CompletionStage<Reply> poolFull(Prepared call, Loop loop, PoolFull full) {
    rc.listener().poolFull(full.pool(), full.provider());
    return answer(
        loop,
        callError(
            loop.target(),
            call.profile(),
            429,
            "rate_limited",
            full.getMessage(),
            null,
            "pool_full",
            List.of(RawHeader.create("retry-after", Long.toString(full.retryAfterSeconds())))));
  }

  /**
   * The caller hung up while this attempt waited for its turn or its slot ({@code when}): it is not
   * sent and nothing is reserved for it; the call's line records 499 {@code caller_gone}.
   */
  private CompletionStage<Reply> callerGoneBeforeSent(Prepared call, Loop loop, String when) {
    log.info(
        "request {}: the caller hung up {}; {} was not called",
        call.spend().requestId(),
        when,
        loop.target().provider().wireName());
    return answer(
        loop,
        callError(
            loop.target(),
            call.profile(),
            GatewayErrors.CALLER_GONE,
            "caller_gone",
            "The caller hung up " + when + "; nothing was reserved or sent.",
            null,
            "caller_gone"));
  }

  /** The router's guards, shared with the pass-through routes. */
  static ProviderGuards guards(RouterContext rc) {
    return new ProviderGuards(
        rc.pools(),
        rc.rateLimits(),
        rc.breakers(),
        rc.circuits(),
        rc.settings().breaker().resetTimeout(),
        rc.delayer()::after,
        new ProviderGuards.Listener() {
          @Override
          public void poolFull(Pool pool, Provider provider) {
            rc.listener().poolFull(pool, provider);
          }

          @Override
          public void rateLimited(Provider provider) {
            rc.listener().rateLimited(provider);
          }

          @Override
          public void callerGone(Provider provider, String wait) {
            rc.listener().callerGone(provider, wait);
          }
        });
  }

  private CompletionStage<Reply> reserve(Prepared call, Loop loop, Permit permit) {
    Target target = loop.target();
    PolicyDecision.Allowed body = loop.bodyFor(target.provider());
    SpendContext spend = call.spend();
    ReserveRequest reserve =
        new ReserveRequest(
            dev.spendgateway.ledger.Reservation.Owner.newGatewayId(),
            spend.lane(),
            spend.subject(),
            body.worstCase().micros(),
            spend.brandDailyMicros(),
            spend.brandMonthlyMicros());
    String profile = call.profile().name();
    // The pricing lives as long as the reservation (a stream's whole life): it keeps the model and
    // the worst case, never this call (which holds the caller's request) or the vetted bodies.
    var cost = rc.services().cost();
    var modelInfo = body.modelInfo();
    var worstCase = body.worstCase();
    Settlement.Pricing pricing =
        UsageTelemetry.counting(
            usage -> cost.settlement(modelInfo, worstCase, usage),
            rc.services().metrics(),
            target.provider().wireName(),
            target.model(),
            profile);
    AccessLine attemptLine =
        AccessLine.arrived(rc.services().clock().instant(), startedNanos, ROUTE)
            .withRequestId(spend.requestId())
            .withProvider(target.provider().wireName())
            .withSpend(spend.lane().wireName(), spend.subject())
            .withModel(target.model())
            .withFailover(target.failover())
            .withProfile(profile)
            .withDataClass(call.plan().dataClass());
    return core.reserve(reserve, Shape.OPENAI, pricing, attemptLine, CallerConnection.gone(request))
        .thenCompose(
            reserving -> {
              if (reserving instanceof CallCore.Reserving.CallerGone) {
                permit.close(); // the ended attempt wrote its line: no call line
                rc.listener().callerGone(target.provider(), "reserve");
                log.info(
                    "request {}: the caller hung up while its reserve was decided; released, {}"
                        + " was not called",
                    spend.requestId(),
                    target.provider().wireName());
                return answer(
                    loop,
                    GatewayErrors.error(
                        Shape.OPENAI,
                        GatewayErrors.CALLER_GONE,
                        "caller_gone",
                        "The caller hung up while its reserve was decided; released, nothing sent."));
              }
              if (reserving instanceof CallCore.Reserving.Held held) {
                UsageTelemetry.countSpend(
                    held.attempt(),
                    rc.services().metrics(),
                    target.provider().wireName(),
                    target.model(),
                    profile);
                return send(call, loop, body, permit, held.attempt());
              }
              permit.close();
              BudgetRefusal refusal = ((CallCore.Reserving.NotHeld) reserving).refusal();
              callLine.write(refusal.status(), refusal.errorClass());
              return answer(loop, refusal.response());
            });
  }

  private CompletionStage<Reply> send(
      Prepared call, Loop loop, PolicyDecision.Allowed body, Permit permit, CallAttempt held) {
    Provider provider = loop.target().provider();
    var listener = rc.listener(); // not this call: the callback may outlive a long stream's request
    held.decided()
        .thenAccept(
            d -> listener.attempt(provider, d.outcomeWord() == null ? "ok" : d.outcomeWord()));
    ApiKind kind = apiKind(provider);
    UpstreamExchange exchange =
        new UpstreamExchange(
            rc.services(),
            held,
            new UpstreamExchange.Target(
                provider,
                loop.target().model(),
                kind.path(),
                Optional.of(kind),
                kind::usageOfAnswer,
                kind::usageOf,
                true,
                false),
            rc.nanoTime());
    UpstreamRequest upstreamRequest =
        new UpstreamRequest(
            HttpMethods.POST,
            callerHeaders(),
            new UpstreamBody.Strict(
                ContentTypes.APPLICATION_JSON,
                ByteString.fromArray(RouterJson.bytes(body.upstreamBody()))));
    return exchange
        .send(upstreamRequest, guards.breaker(), permit::close)
        .thenCompose(exchanged -> onExchanged(call, loop, exchanged));
  }

  private CompletionStage<Reply> onExchanged(
      Prepared call, Loop loop, UpstreamExchange.Exchanged exchanged) {
    if (exchanged instanceof UpstreamExchange.Exchanged.NoAnswer) {
      return next(call, loop, Failure.connection());
    }
    if (exchanged instanceof UpstreamExchange.Exchanged.ErrorStatus refused) {
      UpstreamResult.Responded responded = refused.responded();
      return next(
          call,
          loop,
          new Failure(
              responded.status(),
              refused.body(),
              responded.headersToPassBack(),
              UpstreamErrors.retryAfter(
                  responded.headersToPassBack(), rc.services().clock().instant())));
    }
    if (exchanged instanceof UpstreamExchange.Exchanged.Unreadable unreadable) {
      if (unreadable.errorClass().equals("upstream_cut")) {
        // Cut before anything reached the caller: the attempt kept its worst case, the call may
        // still fail over.
        return next(call, loop, Failure.connection());
      }
      return answer(
          loop,
          callError(
              loop.target(),
              call.profile(),
              502,
              "upstream_unreadable",
              "The provider's answer could not be read to its end.",
              null,
              unreadable.errorClass()));
    }
    if (exchanged instanceof UpstreamExchange.Exchanged.Streaming streaming) {
      return streamed(call, loop, streaming);
    }
    UpstreamExchange.Exchanged.Whole whole = (UpstreamExchange.Exchanged.Whole) exchanged;
    ObjectNode json = (ObjectNode) whole.json().orElseThrow();
    ObjectNode answer =
        loop.target().provider() == Provider.OPENAI
            ? withModel(json, call.profile())
            : MessagesToChat.translate(json, call.profile().name(), started.getEpochSecond());
    return answer(
        loop,
        answered(
            loop,
            whole.responded(),
            HttpEntities.create(ContentTypes.APPLICATION_JSON, RouterJson.bytes(answer))));
  }

  /**
   * A streamed answer. The response is only started once the first upstream bytes are in: a stream
   * that dies before that is an attempt failure like any other (and may fail over); after it, a cut
   * ends the caller's stream with an error event and is never retried.
   */
  private CompletionStage<Reply> streamed(
      Prepared call, Loop loop, UpstreamExchange.Exchanged.Streaming streaming) {
    Provider provider = loop.target().provider();
    return streaming
        .metered()
        .toClient()
        .prefixAndTail(1)
        .runWith(Sink.head(), rc.services().materializer())
        .handle(
            (Pair<List<ByteString>, Source<ByteString, NotUsed>> split, Throwable failure) -> {
              if (failure != null) {
                return next(call, loop, Failure.connection());
              }
              if (split.first().isEmpty()) {
                split.second().runWith(Sink.ignore(), rc.services().materializer());
                return next(call, loop, Failure.connection());
              }
              streaming.delivered();
              Source<ByteString, NotUsed> toClient =
                  Source.from(split.first())
                      .concat(split.second())
                      .via(translation(call, provider));
              return answer(
                  loop,
                  answered(
                      loop, streaming.responded(), HttpEntities.create(EVENT_STREAM, toClient)));
            })
        .thenCompose(s -> s);
  }

  private Flow<ByteString, ByteString, NotUsed> translation(Prepared call, Provider provider) {
    boolean usageChunk = UsageChunkFilter.callerAskedForUsage(call.chatRequest());
    if (provider == Provider.OPENAI) {
      return OpenAiChunks.flow(
          call.profile().name(), rc.services().upstream().settings().sseLimits(), usageChunk);
    }
    return AnthropicSseToChatChunks.flow(
        call.profile().name(), started.getEpochSecond(), usageChunk);
  }

  private HttpResponse answered(
      Loop loop, UpstreamResult.Responded responded, ResponseEntity entity) {
    List<HttpHeader> headers =
        new ArrayList<>(UpstreamErrors.passBack(responded.headersToPassBack()));
    for (String w : loop.bodyFor(loop.target().provider()).warnings()) {
      headers.add(RawHeader.create("x-gateway-warning", w));
    }
    return HttpResponse.create().withStatus(StatusCodes.OK).addHeaders(headers).withEntity(entity);
  }

  private static ObjectNode withModel(ObjectNode openAiAnswer, RoutingProfile profile) {
    ObjectNode copy = openAiAnswer.deepCopy();
    copy.put("model", profile.name());
    return copy;
  }

  // --- after a failed attempt -------------------------------------------------------------------

  private CompletionStage<Reply> next(Prepared call, Loop attempted, Failure failure) {
    Loop loop = attempted.failedWith(failure.status());
    Target target = loop.target();
    RoutingProfile profile = call.profile();
    Decision decision = decide(call, loop, failure);
    if (decision.modelGone() && rc.circuits().onModelGone(target.model())) {
      log.error(
          "ALARM model retired: {} answered 410 Gone for model '{}' (profile '{}'); its circuit is open,"
              + " calls use the fallback until the catalog is fixed",
          target.provider().wireName(),
          target.model(),
          profile.name());
    }
    Step step = decision.step();
    if (CallerConnection.isGone(request)) {
      return callerGone(
          call,
          loop,
          failure,
          "before " + target.provider().wireName() + " answered; no further attempt");
    }
    if (step instanceof FailoverPlan.RetrySame retry) {
      Loop again = loop.retried();
      return guards
          .waitedOut(retry.delay(), CallerConnection.gone(request))
          .thenCompose(
              callerStayed ->
                  callerStayed
                      ? attempt(call, again)
                      : callerGone(
                          call,
                          loop,
                          failure,
                          "during the "
                              + retry.delay().toMillis()
                              + " ms wait before retrying "
                              + target.provider().wireName()
                              + "; not retried"));
    }
    if (step instanceof FailoverPlan.SwitchTo to) {
      call.spend().conversationId().ifPresent(id -> rc.stickiness().stick(id, to.provider()));
      rc.listener().failover(profile.name(), to.provider());
      return attempt(call, loop.to(new Target(to.provider(), to.model(), true)));
    }
    if (step instanceof FailoverPlan.RetryAsJsonObject) {
      StructuredOutputFallback.schemaOf(call.chatRequest())
          .ifPresent(rc.schemas()::rememberRejected);
      PolicyDecision d = openAiDecision(profile, call.chatRequest(), true);
      if (d instanceof PolicyDecision.Allowed allowed) {
        return attempt(call, loop.downgradedTo(allowed, loop.anthropicBody()));
      }
      return answer(loop, deliver(call, loop, failure));
    }
    if (step instanceof FailoverPlan.RetryWithSchemaInPrompt) {
      ObjectNode inPrompt =
          StructuredOutputFallback.schemaIntoSystemPrompt(
              loop.anthropicBody().upstreamBody(),
              StructuredOutputFallback.schemaOf(call.chatRequest()).orElseThrow());
      PolicyDecision d =
          rc.services()
              .policy()
              .anthropicMessages(inPrompt, RouterJson.bytes(inPrompt).length, today);
      if (d instanceof PolicyDecision.Allowed allowed) {
        return attempt(call, loop.downgradedTo(loop.openAiBody(), allowed));
      }
      return answer(loop, deliver(call, loop, failure));
    }
    if (step instanceof FailoverPlan.GiveUp g
        && g.errorType().equals(DataClasses.FALLBACK_NOT_PERMITTED)) {
      rc.services()
          .metrics()
          .dataClass(call.plan().dataClass(), DataClasses.FALLBACK_NOT_PERMITTED);
      return answer(loop, fallbackNotPermitted(call, target, g, failure));
    }
    if (step instanceof FailoverPlan.GiveUp g) {
      return answer(
          loop,
          giveUp(
              call,
              target,
              g,
              failure.status() == 429
                  ? UpstreamErrors.header(failure.headers(), "retry-after")
                      .or(() -> Optional.of(defaultRetryAfter()))
                  : Optional.empty()));
    }
    if (step instanceof FailoverPlan.CutStream cut) {
      return answer(
          loop,
          callError(target, profile, 502, cut.errorType(), cut.message(), null, cut.errorType()));
    }
    return answer(loop, deliver(call, loop, failure));
  }

  /**
   * Asks the plan. On the primary, with a fallback to go to, retries there may use only half the
   * attempt budget, so the switch always has attempts left ("primary, one retry, fallback, one
   * retry" with the interactive default of 4). When the plan then gives up, it is asked again with
   * the whole budget (the fallback could not be used after all).
   */
  private Decision decide(Prepared call, Loop loop, Failure failure) {
    AttemptBudget budget = call.budget();
    RoutingProfile profile = call.profile();
    Optional<Duration> full =
        rc.settings()
            .retryPolicy()
            .affordableWait(loop.retriesHere(), failure.retryAfter(), rc.random().get(), budget);
    boolean keepForSwitch =
        loop.target().provider() == profile.primary().provider() && profile.fallback().isPresent();
    int primaryShare = Math.max(1, budget.limits().maxAttempts() / 2);
    Optional<Duration> share = full.filter(w -> !keepForSwitch || budget.attempts() < primaryShare);
    Decision d = FailoverPlan.next(call.plan(), attemptOf(loop, failure, share));
    if (d.step() instanceof FailoverPlan.GiveUp && share.isEmpty() && full.isPresent()) {
      d = FailoverPlan.next(call.plan(), attemptOf(loop, failure, full));
    }
    return d;
  }

  private static Attempt attemptOf(Loop loop, Failure failure, Optional<Duration> wait) {
    Target target = loop.target();
    return new Attempt(
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
  private String defaultRetryAfter() {
    return Long.toString(
        ProviderGuards.retryAfterSeconds(rc.settings().retryPolicy().backoff().cap()));
  }

  /**
   * The upstream's own error (a caller error the other side would refuse too), in the OpenAI shape.
   */
  private HttpResponse deliver(Prepared call, Loop loop, Failure failure) {
    Target target = loop.target();
    if (failure.status() == 0) {
      return callError(
          target,
          call.profile(),
          502,
          "upstream_unavailable",
          target.provider().wireName() + " could not be reached.",
          null,
          "upstream_connection");
    }
    // The attempt's own line (status = what the caller gets) already records this answer.
    ByteString body =
        UpstreamErrors.toOpenAiShape(target.provider(), failure.status(), failure.body());
    return HttpResponse.create()
        .withStatus(GatewayErrors.status(failure.status()))
        .addHeaders(UpstreamErrors.passBack(failure.headers()))
        .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, body));
  }

  /**
   * 503 {@code fallback_not_permitted}: the primary failed and the call's data class does not allow
   * the fallback's provider. The primary's own error rides along ({@code error.primary}: provider,
   * status, its error in the OpenAI shape; its Retry-After as a header), so the caller sees why the
   * primary failed and can decide itself whether to wait or to send the data elsewhere.
   */
  private HttpResponse fallbackNotPermitted(
      Prepared call, Target target, FailoverPlan.GiveUp g, Failure failure) {
    ObjectNode extra = RouterJson.object();
    ObjectNode primary = extra.putObject("primary");
    primary.put("provider", target.provider().wireName());
    primary.put("status", failure.status());
    if (failure.status() == 0) {
      primary
          .putObject("error")
          .put("message", target.provider().wireName() + " could not be reached.")
          .put("type", "upstream_unavailable");
    } else {
      RouterJson.parseObject(
              UpstreamErrors.toOpenAiShape(target.provider(), failure.status(), failure.body()))
          .ifPresent(shaped -> primary.set("error", shaped.path("error")));
    }
    writeCallLine(target, call.profile(), g.status(), g.errorType());
    return GatewayErrors.error(
        Shape.OPENAI,
        g.status(),
        g.errorType(),
        g.message(),
        extra,
        UpstreamErrors.passBack(failure.headers()));
  }

  private HttpResponse giveUp(
      Prepared call, Target last, FailoverPlan.GiveUp g, Optional<String> retryAfter) {
    List<HttpHeader> headers =
        retryAfter
            .<List<HttpHeader>>map(v -> List.of(RawHeader.create("retry-after", v)))
            .orElse(List.of());
    return callError(
        last, call.profile(), g.status(), g.errorType(), g.message(), null, g.errorType(), headers);
  }

  // --- usage ----------------------------------------------------------------------------------

  /** The chat API the router speaks on each provider. */
  private static ApiKind apiKind(Provider provider) {
    return switch (provider) {
      case OPENAI -> ApiKind.OPENAI_CHAT_COMPLETIONS;
      case ANTHROPIC -> ApiKind.ANTHROPIC_MESSAGES;
    };
  }

  // --- responses and the call's own log line ----------------------------------------------------

  private static CompletionStage<Reply> refuse(HttpResponse response) {
    return CompletableFuture.completedFuture(new Reply(response, null));
  }

  /**
   * The failed attempt's own answer and no further attempt, for a caller who hung up ({@code
   * when}): nobody would read another attempt's answer, but the provider would bill it.
   */
  private CompletionStage<Reply> callerGone(
      Prepared call, Loop loop, Failure failure, String when) {
    log.info("request {}: the caller hung up {}", call.spend().requestId(), when);
    return answer(loop, deliver(call, loop, failure));
  }

  private static CompletionStage<Reply> answer(Loop loop, HttpResponse response) {
    return CompletableFuture.completedFuture(new Reply(response, loop.target()));
  }

  private HttpResponse callError(
      Target last,
      RoutingProfile profile,
      int status,
      String type,
      String message,
      String param,
      String errorClass) {
    return callError(last, profile, status, type, message, param, errorClass, List.of());
  }

  /**
   * A gateway-made error in the OpenAI shape; writes the call's own line (no reservation on it) for
   * a call that ends without an attempt answering it (refused before any attempt, or a gateway-made
   * error after failed attempts). Attempts log themselves.
   */
  private HttpResponse callError(
      Target last,
      RoutingProfile profile,
      int status,
      String type,
      String message,
      String param,
      String errorClass,
      List<HttpHeader> headers) {
    ObjectNode extra = RouterJson.object();
    if (param != null) {
      extra.put("param", param);
    }
    writeCallLine(last, profile, status, errorClass);
    return GatewayErrors.error(Shape.OPENAI, status, type, message, extra, headers);
  }

  /** The call's own line, for a call no attempt answered. */
  private void writeCallLine(Target last, RoutingProfile profile, int status, String errorClass) {
    callLine.learn(
        l ->
            l.withProvider(last == null ? null : last.provider().wireName())
                .withModel(profile == null ? null : profile.name())
                .withFailover(last != null && last.failover()));
    callLine.write(status, errorClass);
  }

  private Reply internalError(Throwable failure) {
    Throwable cause =
        failure instanceof CompletionException && failure.getCause() != null
            ? failure.getCause()
            : failure;
    log.error("routed call failed inside the gateway: {}", cause.getClass().getName(), cause);
    return new Reply(
        callError(
            null,
            null,
            500,
            "internal_error",
            "The gateway failed to handle this call.",
            null,
            "internal"),
        null);
  }

  private static HttpResponse withCallHeaders(SpendContext spend, HttpResponse response) {
    return withCallHeaders(spend, new Reply(response, null));
  }

  private static HttpResponse withCallHeaders(SpendContext spend, Reply reply) {
    List<HttpHeader> headers = new ArrayList<>();
    if (spend != null) {
      headers.add(RawHeader.create(SpendHeaders.REQUEST_ID, spend.requestId()));
    }
    Target last = reply.last();
    if (last != null) {
      headers.add(RawHeader.create(PROVIDER_HEADER, last.provider().wireName()));
      headers.add(RawHeader.create(FAILOVER_HEADER, Boolean.toString(last.failover())));
    }
    return reply.response().addHeaders(headers);
  }

  private List<HttpHeader> callerHeaders() {
    List<HttpHeader> headers = new ArrayList<>();
    request.getHeaders().forEach(headers::add);
    return headers;
  }
}
