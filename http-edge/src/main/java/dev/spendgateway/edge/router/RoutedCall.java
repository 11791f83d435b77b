package dev.spendgateway.edge.router;

import dev.spendgateway.edge.body.BodyType;
import dev.spendgateway.edge.body.CallerBodies;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.edge.call.BudgetRefusal;
import dev.spendgateway.edge.call.CallAttempt;
import dev.spendgateway.edge.call.CallCore;
import dev.spendgateway.edge.call.CallLine;
import dev.spendgateway.edge.call.CallerJsonBody;
import dev.spendgateway.edge.call.Settlement;
import dev.spendgateway.edge.call.UpstreamOutcome;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.log.AccessLine;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.metrics.UsageTelemetry;
import dev.spendgateway.edge.provider.DataClassHeader;
import dev.spendgateway.edge.provider.SpendHeaders;
import dev.spendgateway.policy.dataclass.DataClass;
import dev.spendgateway.policy.dataclass.DataClasses;
import dev.spendgateway.policy.failover.ErrorClassifier;
import dev.spendgateway.upstream.client.RateLimitHeaders;
import dev.spendgateway.edge.provider.SpendHeaders.SpendContext;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.cost.UsageParsers;
import dev.spendgateway.policy.cost.UsageReport;
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
import dev.spendgateway.upstream.failover.RoutingProfile;
import dev.spendgateway.upstream.failover.StructuredOutputFallback;
import dev.spendgateway.upstream.stream.BodyCollector;
import dev.spendgateway.upstream.stream.CollectedBody;
import dev.spendgateway.upstream.stream.MeteredStream;
import dev.spendgateway.upstream.stream.StreamOutcome;
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
import java.util.function.Function;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.pattern.CircuitBreakerOpenException;
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
 * {@link CallCore} like a pass-through call: it reserves its own worst case, is closed once by the
 * shared {@link Settlement} rule and writes its own access line. This class keeps only what is the
 * router's: choosing the next target, translating to and from it, and the call's own line when no
 * attempt answers it. Attempts run one after another, so the loop's fields are only touched by one
 * stage at a time; they are volatile because those stages run on different threads.
 */
final class RoutedCall {
  static final String ROUTE = "/v1/chat/completions";
  static final String PROVIDER_HEADER = "x-gateway-provider";
  static final String FAILOVER_HEADER = "x-gateway-failover";

  private static final Logger log = LoggerFactory.getLogger(RoutedCall.class);
  private static final long MAX_ERROR_BODY_BYTES = 1 << 20;
  private static final ContentType EVENT_STREAM = ContentTypes.create(MediaTypes.TEXT_EVENT_STREAM);

  private final RouterContext rc;
  private final HttpRequest request;
  private final Instant started;
  private final long startedNanos;
  private final LocalDate today;
  private final CallCore core;
  /** The call's own line: written when no attempt answers the call (refusals, gateway-made errors). */
  private final CallLine callLine;

  private volatile SpendContext spend;
  private volatile DataClass dataClass;
  private volatile RoutingProfile profile;
  private volatile Pool pool;
  private volatile AttemptBudget budget;
  private volatile FailoverPlan.Context plan;
  private volatile ObjectNode chatRequest;
  private volatile PolicyDecision.Allowed openAiBody;
  private volatile PolicyDecision.Allowed anthropicBody;
  private volatile boolean downgraded;
  private volatile Target current;
  private volatile int retriesHere;
  private volatile int lastStatus = -1;

  /** Where an attempt goes; {@code failover} is the {@code x-gateway-failover} value. */
  record Target(Provider provider, String model, boolean failover) {}

  /** One attempt in flight: its target, body, admission permit and the core's held attempt. */
  private record Run(Target target, PolicyDecision.Allowed body, Permit permit, CallAttempt held) {}

  /** A failed attempt, as the plan and (for Deliver) the caller see it. */
  private record Failure(int status, ByteString body, List<HttpHeader> headers, Optional<Duration> retryAfter) {
    static Failure connection() {
      return new Failure(0, ByteString.emptyByteString(), List.of(), Optional.empty());
    }
  }

  RoutedCall(RouterContext rc, HttpRequest request) {
    this.rc = rc;
    this.request = request;
    this.started = rc.services().clock().instant();
    this.startedNanos = rc.nanoTime().getAsLong();
    this.today = LocalDate.ofInstant(started, ZoneOffset.UTC);
    this.core = new CallCore(rc.services(), rc.nanoTime());
    this.callLine = new CallLine(AccessLine.arrived(started, startedNanos, ROUTE), rc.nanoTime());
  }

  /** Runs the call; the returned response is what the caller gets (never a failed stage). */
  CompletionStage<HttpResponse> run() {
    // The pass-through routes' reader: a spend header sent twice is refused, never resolved by picking one.
    SpendHeaders.Result headers = SpendHeaders.readAll(request);
    if (headers.violation().isPresent()) {
      SpendHeaders.HeaderViolation v = headers.violation().get();
      return done(callError(400, "invalid_request_error", v.message(), v.header(), "bad_header"));
    }
    spend = headers.context().get();
    callLine.learn(l -> l.withRequestId(spend.requestId()).withSpend(spend.lane().wireName(), spend.subject()));
    DataClassHeader.Read classRead = DataClassHeader.read(request, rc.services().dataClasses());
    if (classRead.refusal().isPresent()) {
      return done(callError(400, "invalid_request_error", classRead.refusal().get(), DataClasses.HEADER, "bad_header"));
    }
    dataClass = classRead.dataClass().get();
    callLine.learn(l -> l.withDataClass(dataClass.name()));
    if (!BodyType.JSON.accepts(request.entity())) {
      // Before the body is read: nothing reserved, nothing sent upstream.
      HttpResponse refused = callError(415, "invalid_request_error", BodyType.JSON.refusal(request.entity()), BodyType.HEADER,
          "unsupported_media_type");
      return CallerBodies.discard(request.entity(), rc.services().materializer())
          .thenApply(drained -> withCallHeaders(refused));
    }
    return CallerJsonBody.read(request.entity(), rc.services())
        .thenCompose(this::withBody)
        .exceptionally(this::internalError)
        .thenApply(this::withCallHeaders);
  }

  // --- preparing the call ---------------------------------------------------------------------

  private CompletionStage<HttpResponse> withBody(CallerJsonBody.Read body) {
    if (body instanceof CallerJsonBody.Refused refused) {
      return done(callError(refused.status(), "invalid_request_error", refused.message(), refused.field(), refused.errorClass()));
    }
    ObjectNode object = ((CallerJsonBody.Json) body).object();
    chatRequest = object;
    String name = object.path("model").asText("");
    Optional<RoutingProfile> found = rc.profiles().find(name);
    if (found.isEmpty()) {
      return done(callError(400, "invalid_request_error",
          "Unknown profile '" + name + "': `model` must name a routing profile, one of "
              + String.join(", ", rc.profiles().names()) + ".", "model", "unknown_profile"));
    }
    profile = found.get();
    callLine.learn(l -> l.withProfile(profile.name()));
    Optional<String> priority = request.getHeader(SpendHeaders.PRIORITY).map(HttpHeader::value);
    pool = priority.map(Pool::fromWireName).orElse(profile.pool()); // SpendHeaders validated it
    return prepared();
  }

  private CompletionStage<HttpResponse> prepared() {
    Optional<JsonNode> schema = StructuredOutputFallback.schemaOf(chatRequest);
    downgraded = schema.isPresent() && rc.schemas().wasRejected(schema.get());
    PolicyDecision primary = openAiDecision();
    if (primary instanceof PolicyDecision.Violation v) {
      return done(callError(v.httpStatus(), "invalid_request_error", v.message(), v.field(), "policy:" + v.rule()));
    }
    openAiBody = (PolicyDecision.Allowed) primary;
    if (openAiBody.worstCase().inputTokensAssumed() > profile.contextLimit()) {
      return done(callError(400, "context_length_exceeded",
          "The request needs about " + openAiBody.worstCase().inputTokensAssumed() + " input tokens; profile '"
              + profile.name() + "' allows " + profile.contextLimit() + ".", "messages", "context_length_exceeded"));
    }
    Optional<String> blocker = prepareFallback();
    plan = new FailoverPlan.Context(
        profile,
        FailoverPlan.featuresOf(chatRequest),
        blocker,
        spend.conversationId().flatMap(rc.stickiness()::find),
        rc.circuits()::isOpen,
        today,
        rc.settings().retryPolicy().maxRetryAfter(),
        dataClass.name(),
        dataClass.narrowedTo(profile.narrowingFor(dataClass.name())));
    budget = AttemptBudget.start(rc.settings().budgets().get(pool), rc.nanoTime());
    Step first = FailoverPlan.start(plan);
    boolean forbidden = first instanceof FailoverPlan.GiveUp g && g.errorType().equals(DataClasses.FORBIDDEN);
    rc.services().metrics().dataClass(dataClass.name(), forbidden ? "forbidden" : "allowed");
    if (first instanceof FailoverPlan.GiveUp g) {
      return done(giveUp(g, Optional.empty()));
    }
    FailoverPlan.Call call = (FailoverPlan.Call) first;
    return attempt(new Target(call.provider(), call.model(), call.failover()));
  }

  /** The OpenAI body: the profile's primary model in {@code model}, json_object mode once downgraded. */
  private PolicyDecision openAiDecision() {
    ObjectNode body = chatRequest.deepCopy();
    body.put("model", profile.primary().name());
    if (downgraded) {
      body = StructuredOutputFallback.toJsonObjectMode(body);
    }
    return rc.services().policy().openAiChatCompletions(body, RouterJson.bytes(body).length, today);
  }

  /** Translates for the fallback and vets it; the reason it cannot serve this request, if any. */
  private Optional<String> prepareFallback() {
    if (profile.fallback().isEmpty()) {
      return Optional.empty();
    }
    var fallback = profile.fallback().get();
    ObjectNode translated;
    try {
      translated = ChatToMessages.translate(
          chatRequest,
          new ChatToMessages.Options(fallback.name(), profile.defaultMaxTokens(), fallback.hasFeature("json_schema")));
    } catch (TranslationError e) {
      return Optional.of(e.getMessage());
    }
    PolicyDecision d = rc.services().policy().anthropicMessages(translated, RouterJson.bytes(translated).length, today);
    if (d instanceof PolicyDecision.Violation v) {
      return Optional.of("the translated request breaks policy rule " + v.rule() + " (" + v.message() + ")");
    }
    anthropicBody = (PolicyDecision.Allowed) d;
    return Optional.empty();
  }

  // --- one attempt ----------------------------------------------------------------------------

  private CompletionStage<HttpResponse> attempt(Target target) {
    if (current == null || current.provider() != target.provider()) {
      retriesHere = 0;
    }
    current = target;
    if (!budget.tryStartAttempt()) {
      if (lastStatus == 429) {
        return done(callError(429, "rate_limited",
            "The provider kept answering 429 within the call's attempt budget for profile '" + profile.name() + "'.",
            null, "budget_spent"));
      }
      return done(callError(503, "upstream_unavailable",
          "The call's attempt budget (" + budget.limits().maxAttempts() + " attempts, "
              + budget.limits().totalTime().toSeconds() + " s) is spent for profile '" + profile.name() + "'.",
          null, "budget_spent"));
    }
    PolicyDecision.Allowed body = target.provider() == Provider.OPENAI ? openAiBody : anthropicBody;
    return rc.pools().admit(pool, target.provider())
        .handle((permit, failure) -> failure == null
            ? reserve(target, body, permit)
            : admissionRefused(target, failure))
        .thenCompose(s -> s);
  }

  private CompletionStage<HttpResponse> admissionRefused(Target target, Throwable failure) {
    Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    if (!(cause instanceof PoolFull full)) {
      throw new CompletionException(cause);
    }
    rc.listener().poolFull(full.pool(), full.provider());
    return done(callError(429, "rate_limited", full.getMessage(), null, "pool_full",
        List.of(RawHeader.create("retry-after", Long.toString(full.retryAfterSeconds())))));
  }

  private CompletionStage<HttpResponse> reserve(Target target, PolicyDecision.Allowed body, Permit permit) {
    ReserveRequest reserve = new ReserveRequest(
        dev.spendgateway.ledger.Reservation.Owner.newGatewayId(), spend.lane(), spend.subject(),
        body.worstCase().micros(), spend.brandDailyMicros(), spend.brandMonthlyMicros());
    Settlement.Pricing pricing = UsageTelemetry.counting(
        usage -> rc.services().cost().settlement(body.modelInfo(), body.worstCase(), usage),
        rc.services().metrics(), target.provider().wireName(), target.model(), profile.name());
    AccessLine attemptLine = AccessLine.arrived(rc.services().clock().instant(), startedNanos, ROUTE)
        .withRequestId(spend.requestId())
        .withProvider(target.provider().wireName())
        .withSpend(spend.lane().wireName(), spend.subject())
        .withModel(target.model())
        .withFailover(target.failover())
        .withProfile(profile.name())
        .withDataClass(dataClass.name());
    return core.reserve(reserve, Shape.OPENAI, pricing, attemptLine)
        .thenCompose(reserving -> {
          if (reserving instanceof CallCore.Reserving.Held held) {
            UsageTelemetry.countSpend(held.attempt(), rc.services().metrics(), target.provider().wireName(), target.model(),
                profile.name());
            return callUpstream(new Run(target, body, permit, held.attempt()));
          }
          permit.close();
          BudgetRefusal refusal = ((CallCore.Reserving.NotHeld) reserving).refusal();
          callLine.write(refusal.status(), refusal.errorClass());
          return done(refusal.response());
        });
  }

  private CompletionStage<HttpResponse> callUpstream(Run run) {
    Provider provider = run.target().provider();
    if (!rc.breakers().isCallAllowed(provider)) {
      run.permit().close();
      end(run, new UpstreamOutcome.NeverSent("breaker_open"), 0);
      return next(run, Failure.connection());
    }
    UpstreamRequest upstreamRequest = new UpstreamRequest(
        HttpMethods.POST,
        callerHeaders(),
        new UpstreamBody.Strict(ContentTypes.APPLICATION_JSON, ByteString.fromArray(RouterJson.bytes(run.body().upstreamBody()))));
    ApiKind kind = apiKind(provider);
    CompletableFuture<UpstreamResult> raw = new CompletableFuture<>();
    return rc.breakers()
        .withBreaker(
            provider,
            () -> rc.services().upstream().call(provider, kind.path(), upstreamRequest)
                .whenComplete((r, e) -> raw.complete(r)),
            RoutedCall::isProviderFailure)
        .handle((result, failure) -> failure == null ? onUpstream(run, result) : onBreakerFailure(run, raw, failure))
        .thenCompose(s -> s)
        .whenComplete((answer, failure) -> {
          if (failure != null) {
            // A failure inside the gateway: the request may have gone out, so the worst case stays
            // (a no-op when a path already ended the attempt).
            run.permit().close();
            end(run, new UpstreamOutcome.NoAnswer("internal"), 500);
          }
        });
  }

  /** Per attempt, for {@code /metrics}: the upstream's status (or failure) by provider and model. */
  private void reportUpstream(Run run, UpstreamResult result) {
    String provider = run.target().provider().wireName();
    String model = run.target().model();
    if (result instanceof UpstreamResult.Responded responded) {
      rc.services().metrics().upstreamStatus(provider, model, responded.status());
      RateLimitHeaders.Reading limits = RateLimitHeaders.read(responded.headersToPassBack());
      if (!limits.isEmpty()) {
        rc.services().metrics().upstreamRateLimits(provider, limits);
      }
    } else if (result instanceof UpstreamResult.ConnectionFailed failed) {
      rc.services().metrics().upstreamFailure(provider, model, failed.safeErrorClass());
    }
  }

  /** What the breaker counts against a provider: no answer, 5xx, 529. Never a caller error or a 429. */
  private static boolean isProviderFailure(UpstreamResult result) {
    if (result instanceof UpstreamResult.Responded r) {
      return r.status() >= 500;
    }
    return true;
  }

  private CompletionStage<HttpResponse> onBreakerFailure(Run run, CompletableFuture<UpstreamResult> raw, Throwable failure) {
    run.permit().close();
    Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    if (cause instanceof CircuitBreakerOpenException) {
      end(run, new UpstreamOutcome.NeverSent("breaker_open"), 0);
    } else {
      // The breaker's call timeout: the request may have been processed; keep the worst case and
      // free the connection when the late answer arrives.
      raw.thenAccept(r -> {
        if (r instanceof UpstreamResult.Responded responded) {
          responded.discardBody(rc.services().materializer());
        }
      });
      end(run, new UpstreamOutcome.NoAnswer("breaker_timeout"), 0);
    }
    return next(run, Failure.connection());
  }

  private CompletionStage<HttpResponse> onUpstream(Run run, UpstreamResult result) {
    reportUpstream(run, result);
    if (result instanceof UpstreamResult.ConnectionFailed failed) {
      run.permit().close();
      String word = "upstream_" + failed.safeErrorClass();
      end(run, failed.mayHaveReachedProvider() ? new UpstreamOutcome.NoAnswer(word) : new UpstreamOutcome.NeverSent(word), 0);
      return next(run, Failure.connection());
    }
    UpstreamResult.Responded responded = (UpstreamResult.Responded) result;
    if (!responded.isSuccess()) {
      return BodyCollector.collect(responded.body(), MAX_ERROR_BODY_BYTES, rc.services().materializer())
          .thenCompose(body -> {
            run.permit().close();
            // The provider does not bill an error answer: close at 0.
            end(run, new UpstreamOutcome.ErrorStatus(responded.status()), responded.status());
            ByteString bytes = body instanceof CollectedBody.Complete c ? c.bytes() : ByteString.emptyByteString();
            if (responded.status() == 429) {
              rc.services().metrics().upstreamTooManyRequests(run.target().provider().wireName(), run.target().model(),
                  ErrorClassifier.kindOf429(UpstreamErrors.text(bytes)).wireName());
            }
            return next(run, new Failure(
                responded.status(),
                bytes,
                responded.headersToPassBack(),
                UpstreamErrors.retryAfter(responded.headersToPassBack(), rc.services().clock().instant())));
          });
    }
    if (responded.isEventStream()) {
      return streamed(run, responded);
    }
    return collected(run, responded);
  }

  // --- answers --------------------------------------------------------------------------------

  private CompletionStage<HttpResponse> collected(Run run, UpstreamResult.Responded responded) {
    long max = rc.services().upstream().settings().maxResponseBytes();
    return BodyCollector.collect(responded.body(), max, rc.services().materializer())
        .thenCompose(body -> {
          run.permit().close();
          if (body instanceof CollectedBody.Failed) {
            // Cut before anything reached the caller: the attempt keeps its worst case, the call may
            // still fail over.
            end(run, new UpstreamOutcome.Unreadable("upstream_cut"), 0);
            return next(run, Failure.connection());
          }
          Optional<ObjectNode> json = body instanceof CollectedBody.Complete c ? RouterJson.parseObject(c.bytes()) : Optional.empty();
          if (json.isEmpty()) {
            String errorClass = body instanceof CollectedBody.TooLarge ? "upstream_too_large" : "upstream_unreadable";
            end(run, new UpstreamOutcome.Unreadable(errorClass), 502);
            return done(callError(502, "upstream_unreadable", "The provider's answer could not be read to its end.", null, errorClass));
          }
          UsageReport usage = usageOf(run.target().provider(), json.get());
          end(run, new UpstreamOutcome.Answered(usage), 200);
          ObjectNode answer = run.target().provider() == Provider.OPENAI
              ? withModel(json.get())
              : MessagesToChat.translate(json.get(), profile.name(), started.getEpochSecond());
          return CompletableFuture.completedFuture(
              answered(run.target(), responded, HttpEntities.create(ContentTypes.APPLICATION_JSON, RouterJson.bytes(answer))));
        });
  }

  /**
   * A streamed answer. The response is only started once the first upstream bytes are in: a stream
   * that dies before that is an attempt failure like any other (and may fail over); after it, a cut
   * ends the caller's stream with an error event and is never retried.
   */
  private CompletionStage<HttpResponse> streamed(Run run, UpstreamResult.Responded responded) {
    Provider provider = run.target().provider();
    MeteredStream metered = rc.services().meter().meter(responded.body(), apiKind(provider));
    AtomicBoolean delivered = new AtomicBoolean();
    rc.services().metrics().streamOpened(provider.wireName());
    metered.outcome().thenAccept(outcome -> {
      rc.services().metrics().streamClosed(provider.wireName());
      streamEnded(run, outcome, delivered.get());
    });
    return metered.toClient()
        .prefixAndTail(1)
        .runWith(Sink.head(), rc.services().materializer())
        .handle((Pair<List<ByteString>, Source<ByteString, NotUsed>> split, Throwable failure) -> {
          if (failure != null) {
            return next(run, Failure.connection());
          }
          if (split.first().isEmpty()) {
            split.second().runWith(Sink.ignore(), rc.services().materializer());
            return next(run, Failure.connection());
          }
          delivered.set(true);
          Source<ByteString, NotUsed> toClient =
              Source.from(split.first()).concat(split.second()).via(translation(provider));
          return CompletableFuture.completedFuture(
              answered(run.target(), responded, HttpEntities.create(EVENT_STREAM, toClient)));
        })
        .thenCompose(s -> s);
  }

  private Flow<ByteString, ByteString, NotUsed> translation(Provider provider) {
    boolean usageChunk = UsageChunkFilter.callerAskedForUsage(chatRequest);
    if (provider == Provider.OPENAI) {
      return OpenAiChunks.flow(profile.name(), rc.services().upstream().settings().sseLimits(), usageChunk);
    }
    return AnthropicSseToChatChunks.flow(profile.name(), started.getEpochSecond(), usageChunk);
  }

  private void streamEnded(Run run, StreamOutcome outcome, boolean delivered) {
    run.permit().close();
    if (!outcome.cleanEnd()) {
      rc.breakers().onFailure(run.target().provider());
    }
    Function<JsonNode, UsageReport> usageOf =
        run.target().provider() == Provider.OPENAI ? UsageParsers::openAiChat : UsageParsers::anthropic;
    end(run, new UpstreamOutcome.StreamEnded(outcome, usageOf), delivered ? 200 : 0);
  }

  private HttpResponse answered(Target target, UpstreamResult.Responded responded, org.apache.pekko.http.javadsl.model.ResponseEntity entity) {
    List<HttpHeader> headers = new ArrayList<>(UpstreamErrors.passBack(responded.headersToPassBack()));
    List<String> warnings = (target.provider() == Provider.OPENAI ? openAiBody : anthropicBody).warnings();
    for (String w : warnings) {
      headers.add(RawHeader.create("x-gateway-warning", w));
    }
    return HttpResponse.create().withStatus(StatusCodes.OK).addHeaders(headers).withEntity(entity);
  }

  private ObjectNode withModel(ObjectNode openAiAnswer) {
    ObjectNode copy = openAiAnswer.deepCopy();
    copy.put("model", profile.name());
    return copy;
  }

  // --- after a failed attempt -------------------------------------------------------------------

  private CompletionStage<HttpResponse> next(Run run, Failure failure) {
    Target target = run.target();
    lastStatus = failure.status();
    Decision decision = decide(target, failure);
    if (decision.modelGone() && rc.circuits().onModelGone(target.model())) {
      log.error("ALARM model retired: {} answered 410 Gone for model '{}' (profile '{}'); its circuit is open,"
          + " calls use the fallback until the catalog is fixed", target.provider().wireName(), target.model(), profile.name());
    }
    Step step = decision.step();
    if (step instanceof FailoverPlan.RetrySame retry) {
      retriesHere++;
      return rc.delayer().after(retry.delay()).thenCompose(v -> attempt(target));
    }
    if (step instanceof FailoverPlan.SwitchTo to) {
      spend.conversationId().ifPresent(id -> rc.stickiness().stick(id, to.provider()));
      rc.listener().failover(profile.name(), to.provider());
      return attempt(new Target(to.provider(), to.model(), true));
    }
    if (step instanceof FailoverPlan.RetryAsJsonObject) {
      StructuredOutputFallback.schemaOf(chatRequest).ifPresent(rc.schemas()::rememberRejected);
      downgraded = true;
      PolicyDecision d = openAiDecision();
      if (d instanceof PolicyDecision.Allowed allowed) {
        openAiBody = allowed;
        return attempt(target);
      }
      return done(deliver(target, failure));
    }
    if (step instanceof FailoverPlan.RetryWithSchemaInPrompt) {
      downgraded = true;
      ObjectNode inPrompt = StructuredOutputFallback.schemaIntoSystemPrompt(
          anthropicBody.upstreamBody(), StructuredOutputFallback.schemaOf(chatRequest).orElseThrow());
      PolicyDecision d = rc.services().policy().anthropicMessages(inPrompt, RouterJson.bytes(inPrompt).length, today);
      if (d instanceof PolicyDecision.Allowed allowed) {
        anthropicBody = allowed;
        return attempt(target);
      }
      return done(deliver(target, failure));
    }
    if (step instanceof FailoverPlan.GiveUp g && g.errorType().equals(DataClasses.FALLBACK_NOT_PERMITTED)) {
      rc.services().metrics().dataClass(dataClass.name(), DataClasses.FALLBACK_NOT_PERMITTED);
      return done(fallbackNotPermitted(g, target, failure));
    }
    if (step instanceof FailoverPlan.GiveUp g) {
      return done(giveUp(g, failure.status() == 429 ? UpstreamErrors.header(failure.headers(), "retry-after") : Optional.empty()));
    }
    if (step instanceof FailoverPlan.CutStream cut) {
      return done(callError(502, cut.errorType(), cut.message(), null, cut.errorType()));
    }
    return done(deliver(target, failure));
  }

  /**
   * Asks the plan. On the primary, with a fallback to go to, retries there may use only half the
   * attempt budget, so the switch always has attempts left ("primary, one retry, fallback, one
   * retry" with the interactive default of 4). When the plan then gives up, it is asked again with
   * the whole budget (the fallback could not be used after all).
   */
  private Decision decide(Target target, Failure failure) {
    Optional<Duration> full = rc.settings().retryPolicy()
        .affordableWait(retriesHere, failure.retryAfter(), rc.random().get(), budget);
    boolean keepForSwitch = target.provider() == profile.primary().provider() && profile.fallback().isPresent();
    int primaryShare = Math.max(1, budget.limits().maxAttempts() / 2);
    Optional<Duration> share = full.filter(w -> !keepForSwitch || budget.attempts() < primaryShare);
    Decision d = FailoverPlan.next(plan, attemptOf(target, failure, share));
    if (d.step() instanceof FailoverPlan.GiveUp && share.isEmpty() && full.isPresent()) {
      d = FailoverPlan.next(plan, attemptOf(target, failure, full));
    }
    return d;
  }

  private Attempt attemptOf(Target target, Failure failure, Optional<Duration> wait) {
    return new Attempt(
        target.provider(), target.model(), failure.status(),
        failure.status() == 0 ? null : UpstreamErrors.text(failure.body()),
        failure.retryAfter(), wait, false, downgraded);
  }

  /** The upstream's own error (a caller error the other side would refuse too), in the OpenAI shape. */
  private HttpResponse deliver(Target target, Failure failure) {
    if (failure.status() == 0) {
      return callError(502, "upstream_unavailable", target.provider().wireName() + " could not be reached.", null, "upstream_connection");
    }
    // The attempt's own line (status = what the caller gets) already records this answer.
    ByteString body = UpstreamErrors.toOpenAiShape(target.provider(), failure.status(), failure.body());
    return HttpResponse.create()
        .withStatus(dev.spendgateway.edge.errors.GatewayErrors.status(failure.status()))
        .addHeaders(UpstreamErrors.passBack(failure.headers()))
        .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, body));
  }

  /**
   * 503 {@code fallback_not_permitted}: the primary failed and the call's data class does not allow
   * the fallback's provider. The primary's own error rides along ({@code primary}: provider, status,
   * its error in the OpenAI shape, and its Retry-After header), so the caller sees why the primary
   * failed and can decide itself whether to wait or to send the data elsewhere.
   */
  private HttpResponse fallbackNotPermitted(FailoverPlan.GiveUp g, Target target, Failure failure) {
    ObjectNode extra = RouterJson.object();
    ObjectNode primary = extra.putObject("primary");
    primary.put("provider", target.provider().wireName());
    primary.put("status", failure.status());
    if (failure.status() == 0) {
      primary.putObject("error")
          .put("message", target.provider().wireName() + " could not be reached.")
          .put("type", "upstream_unavailable");
    } else {
      RouterJson.parseObject(UpstreamErrors.toOpenAiShape(target.provider(), failure.status(), failure.body()))
          .ifPresent(shaped -> primary.set("error", shaped.path("error")));
    }
    List<HttpHeader> headers = UpstreamErrors.passBack(failure.headers());
    logCall(g.status(), g.errorType());
    return GatewayErrors.error(Shape.OPENAI, g.status(), g.errorType(), g.message(), extra, headers);
  }

  private HttpResponse giveUp(FailoverPlan.GiveUp g, Optional<String> retryAfter) {
    List<HttpHeader> headers = retryAfter.<List<HttpHeader>>map(v -> List.of(RawHeader.create("retry-after", v))).orElse(List.of());
    return callError(g.status(), g.errorType(), g.message(), null, g.errorType(), headers);
  }

  // --- ledger ---------------------------------------------------------------------------------

  private static ApiKind apiKind(Provider provider) {
    return provider == Provider.OPENAI ? ApiKind.OPENAI_CHAT_COMPLETIONS : ApiKind.ANTHROPIC_MESSAGES;
  }

  private static UsageReport usageOf(Provider provider, JsonNode answer) {
    ApiKind kind = apiKind(provider);
    return kind.extractor()
        .fromJsonAnswer(answer)
        .map(u -> provider == Provider.OPENAI ? UsageParsers.openAiChat(u) : UsageParsers.anthropic(u))
        .orElseGet(() -> new UsageReport.NotReported("no usage in the answer"));
  }

  /** Ends the attempt through the core (one close, one line) and tells the listener how it went. */
  private void end(Run run, UpstreamOutcome outcome, int status) {
    Settlement.Decision decision = run.held().end(outcome, status);
    rc.listener().attempt(run.target().provider(), decision.outcomeWord() == null ? "ok" : decision.outcomeWord());
  }

  // --- responses and the call's own log line ----------------------------------------------------

  private HttpResponse callError(int status, String type, String message, String param, String errorClass) {
    return callError(status, type, message, param, errorClass, List.of());
  }

  /** A gateway-made error in the OpenAI shape; logs the call's own line (no reservation on it). */
  private HttpResponse callError(
      int status, String type, String message, String param, String errorClass, List<HttpHeader> headers) {
    ObjectNode extra = RouterJson.object();
    if (param != null) {
      extra.put("param", param);
    }
    logCall(status, errorClass);
    return GatewayErrors.error(Shape.OPENAI, status, type, message, extra, headers);
  }

  /**
   * The call's own access-log line, for a call that ends without an attempt answering it (refused
   * before any attempt, or a gateway-made error after failed attempts). Attempts log themselves.
   */
  private void logCall(int status, String errorClass) {
    Target last = current;
    callLine.learn(l -> l
        .withProvider(last == null ? null : last.provider().wireName())
        .withModel(profile == null ? null : profile.name())
        .withFailover(last != null && last.failover()));
    callLine.write(status, errorClass);
  }

  private HttpResponse internalError(Throwable failure) {
    Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    log.error("routed call failed inside the gateway: {}", cause.getClass().getName(), cause);
    return callError(500, "internal_error", "The gateway failed to handle this call.", null, "internal");
  }

  private CompletionStage<HttpResponse> done(HttpResponse response) {
    return CompletableFuture.completedFuture(response);
  }

  private HttpResponse withCallHeaders(HttpResponse response) {
    List<HttpHeader> headers = new ArrayList<>();
    if (spend != null) {
      headers.add(RawHeader.create(SpendHeaders.REQUEST_ID, spend.requestId()));
    }
    Target last = current;
    if (last != null) {
      headers.add(RawHeader.create(PROVIDER_HEADER, last.provider().wireName()));
      headers.add(RawHeader.create(FAILOVER_HEADER, Boolean.toString(last.failover())));
    }
    return response.addHeaders(headers);
  }

  private List<HttpHeader> callerHeaders() {
    List<HttpHeader> headers = new ArrayList<>();
    request.getHeaders().forEach(headers::add);
    return headers;
  }
}
