package dev.spendgateway.edge.provider;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.edge.CallerConnection;
import dev.spendgateway.edge.body.BodyMemory;
import dev.spendgateway.edge.body.BodyType;
import dev.spendgateway.edge.body.CallerBodies;
import dev.spendgateway.edge.body.CallerJson;
import dev.spendgateway.edge.call.CallAttempt;
import dev.spendgateway.edge.call.CallCore;
import dev.spendgateway.edge.call.CallLine;
import dev.spendgateway.edge.call.ProviderGuards;
import dev.spendgateway.edge.call.Settlement;
import dev.spendgateway.edge.call.UpstreamExchange;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.log.AccessLine;
import dev.spendgateway.edge.metrics.UsageTelemetry;
import dev.spendgateway.edge.provider.SpendHeaders.SpendContext;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.dataclass.DataClass;
import dev.spendgateway.policy.dataclass.DataClasses;
import dev.spendgateway.policy.request.PolicyDecision;
import dev.spendgateway.upstream.client.UpstreamRequest;
import dev.spendgateway.upstream.client.UpstreamResult;
import dev.spendgateway.upstream.failover.AdmissionPools.Permit;
import dev.spendgateway.upstream.failover.Pool;
import dev.spendgateway.upstream.failover.PoolFull;
import dev.spendgateway.upstream.failover.ProviderRateLimits;
import dev.spendgateway.upstream.stream.UsageChunkFilter;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.regex.Pattern;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One pass-through provider call: spend headers, body type, body, policy, then one attempt through
 * the {@link CallCore} (reserve the worst case, call the provider, close the reservation once,
 * write the line). How the reservation closes is {@link Settlement}'s rule, the same for the
 * failover router: a reported usage → its cost; an error status or nothing sent → 0; a cut, a lost
 * answer or a missing usage → the worst case.
 *
 * <p>What the call learns before it reserves (request id, spend, model) goes into its {@link
 * CallLine}, one immutable line swapped atomically; once an attempt holds a reservation, the
 * attempt's line is the call's.
 */
final class ProviderCall {
  private static final Logger log = LoggerFactory.getLogger(ProviderCall.class);

  /**
   * A refused call's model is caller text that no catalog vetted (it can be megabytes, or a prompt
   * pasted into the wrong field): the access log keeps it only when it looks like a model id.
   */
  private static final Pattern LOGGABLE_MODEL = Pattern.compile("[A-Za-z0-9._:/@+-]{1,64}");

  private final CallServices services;
  private final ProviderGuards guards;
  private final CallKind kind;
  private final HttpRequest request;
  private final Instant started;
  private final long startedNanos = System.nanoTime();
  private final CallCore core;
  private final CallLine line;

  ProviderCall(CallServices services, ProviderGuards guards, CallKind kind, HttpRequest request) {
    this.services = services;
    this.guards = guards;
    this.kind = kind;
    this.request = request;
    this.started = services.clock().instant();
    this.core = new CallCore(services, System::nanoTime);
    this.line =
        new CallLine(
            AccessLine.arrived(started, startedNanos, kind.route())
                .withProvider(kind.provider().wireName()),
            System::nanoTime);
  }

  /** Runs the call; the returned response is what the caller gets (never a failed stage). */
  CompletionStage<HttpResponse> run() {
    SpendHeaders.Result headers = SpendHeaders.readAll(this::headerValues);
    String requestId =
        headers
            .context()
            .map(SpendContext::requestId)
            .orElseGet(
                () ->
                    SpendHeaders.requestId(name -> request.getHeader(name).map(HttpHeader::value)));
    line.learn(l -> l.withRequestId(requestId));
    if (headers.violation().isPresent()) {
      SpendHeaders.HeaderViolation v = headers.violation().get();
      return refuse(error(400, "invalid_request_error", v.message(), v.header()), "bad_header")
          .thenApply(r -> withRequestId(r, requestId));
    }
    SpendContext spend = headers.context().get();
    line.learn(l -> l.withSpend(spend.lane().wireName(), spend.subject()));
    Optional<HttpResponse> classRefusal = checkDataClass();
    if (classRefusal.isPresent()) {
      return refuse(
              classRefusal.get(),
              classRefusal.get().status().intValue() == 403 ? DataClasses.FORBIDDEN : "bad_header")
          .thenApply(r -> withRequestId(r, requestId));
    }
    if (!kind.bodyType().accepts(request.entity())) {
      return unsupportedBody().thenApply(r -> withRequestId(r, requestId));
    }
    // The body is held from its read until the answer is handed over (see BodyMemory).
    Optional<BodyMemory.Lease> bodyHeld =
        services.bodyMemory().take(request.entity(), kind.bodyLimit(services));
    if (bodyHeld.isEmpty()) {
      return bodyMemoryFull().thenApply(r -> withRequestId(r, requestId));
    }
    LocalDate today = LocalDate.ofInstant(started, ZoneOffset.UTC);
    return kind.prepare(request.withEntity(bodyHeld.get().entity()), services, today)
        .thenCompose(preparation -> withPreparation(preparation, spend))
        .exceptionally(this::internalError)
        .whenComplete((response, failure) -> bodyHeld.get().release())
        .thenApply(r -> withRequestId(r, requestId));
  }

  /**
   * 503 {@code body_memory}: the bodies in memory would pass the node's limit with this one. Its
   * body is read and dropped, never held, before the answer (answering while the client still
   * uploads makes some clients see a reset instead); nothing is reserved or sent.
   */
  private CompletionStage<HttpResponse> bodyMemoryFull() {
    HttpResponse refused =
        Overload.refusal(kind.errorShape(), Overload.BODY_MEMORY, services.metrics());
    return CallerBodies.discard(request.entity(), services.materializer())
        .thenCompose(drained -> refuse(refused, Overload.BODY_MEMORY));
  }

  /**
   * The call's data class ({@code x-data-class} or the default) must allow this route's provider:
   * else 403 {@code data_class_forbidden}, before the body is read, so nothing is reserved or sent.
   * The class name goes on the access line and into the count; the request's content never does.
   */
  private Optional<HttpResponse> checkDataClass() {
    DataClassHeader.Read read = DataClassHeader.read(request, services.dataClasses());
    if (read.refusal().isPresent()) {
      return Optional.of(
          error(400, "invalid_request_error", read.refusal().get(), DataClasses.HEADER));
    }
    DataClass dataClass = read.dataClass().get();
    line.learn(l -> l.withDataClass(dataClass.name()));
    if (DataClasses.direct(dataClass, kind.provider()) instanceof DataClasses.Forbidden forbidden) {
      services.metrics().dataClass(dataClass.name(), "forbidden");
      return Optional.of(
          error(403, DataClasses.FORBIDDEN, forbidden.message(), DataClasses.HEADER));
    }
    services.metrics().dataClass(dataClass.name(), "allowed");
    return Optional.empty();
  }

  /**
   * 415: the body is not in the type this route reads. Checked after the token and the spend
   * headers and before the body is read, so nothing is reserved and nothing is sent upstream.
   */
  private CompletionStage<HttpResponse> unsupportedBody() {
    HttpResponse refused =
        error(
            415,
            "invalid_request_error",
            kind.bodyType().refusal(request.entity()),
            BodyType.HEADER);
    return CallerBodies.discard(request.entity(), services.materializer())
        .thenCompose(drained -> refuse(refused, "unsupported_media_type"));
  }

  private CompletionStage<HttpResponse> withPreparation(
      Preparation preparation, SpendContext spend) {
    if (preparation instanceof Preparation.Unreadable unreadable) {
      return refuse(
          error(unreadable.status(), "invalid_request_error", unreadable.message(), "body"),
          unreadable.rule());
    }
    if (preparation instanceof Preparation.Rejected rejected) {
      String model = loggableModel(rejected.model());
      line.learn(l -> l.withModel(model));
      if (rejected.violation().rule().equals("model_retired") && model != null) {
        services.metrics().modelLifecycleAlarm(model, "retired");
      }
      return refuse(policyError(rejected.violation()), "policy:" + rejected.violation().rule());
    }
    return reserveAndCall((Preparation.Prepared) preparation, spend);
  }

  /**
   * The guards every provider call passes, in the router's order: a model whose circuit a 410
   * opened is refused; the call waits for its admission pool ({@code x-priority}) before it holds
   * money; then it reserves and goes out through the provider's breaker.
   */
  private CompletionStage<HttpResponse> reserveAndCall(
      Preparation.Prepared prepared, SpendContext spend) {
    AccessLine known = line.learn(l -> l.withModel(prepared.model()));
    // Deprecated, or active and near its end of support: the same alarm either way.
    if (services
        .policy()
        .catalog()
        .needsWarning(prepared.modelInfo(), LocalDate.ofInstant(started, ZoneOffset.UTC))) {
      services.metrics().modelLifecycleAlarm(prepared.model(), "deprecated");
    }
    if (guards.circuits().isOpen(prepared.model())) {
      return refuse(
          error(
              410,
              "invalid_request_error",
              "Model '"
                  + prepared.model()
                  + "' answered 410 Gone: "
                  + provider()
                  + " retired it. Calls to it are refused"
                  + " without reaching the provider until its circuit closes or an operator resets it.",
              "model"),
          "model_circuit_open");
    }
    Pool pool = spend.priority() == SpendHeaders.Priority.BATCH ? Pool.BATCH : Pool.INTERACTIVE;
    long tokens =
        prepared.worstCase().inputTokensAssumed() + prepared.worstCase().outputTokensAssumed();
    return guards
        .clear(kind.provider(), tokens, pool, CallerConnection.gone(request))
        .thenCompose(
            clearance -> {
              if (clearance instanceof ProviderGuards.Clearance.Cleared cleared) {
                return reserve(prepared, spend, known, cleared.permit());
              }
              if (clearance instanceof ProviderGuards.Clearance.RateLimited limited) {
                return rateLimited(limited.refused());
              }
              if (clearance instanceof ProviderGuards.Clearance.PoolRefused full) {
                return poolFull(full.full());
              }
              return callerGone(spend, ((ProviderGuards.Clearance.CallerGone) clearance).when());
            });
  }

  /**
   * The caller hung up before its call was sent: nothing reserved, nothing sent. Nobody reads the
   * answer; the access line records 499 (the convention for a client that closed its request) with
   * {@code caller_gone}.
   */
  private CompletionStage<HttpResponse> callerGone(SpendContext spend, String when) {
    log.info(
        "request {}: the caller hung up {}; nothing was reserved or sent", spend.requestId(), when);
    return refuse(
        error(
            GatewayErrors.CALLER_GONE,
            "caller_gone",
            "The caller hung up " + when + "; nothing was reserved or sent.",
            null),
        "caller_gone");
  }

  private CompletionStage<HttpResponse> rateLimited(ProviderRateLimits.Turn.Refused refused) {
    long retryAfter = ProviderGuards.retryAfterSeconds(refused.retryAfter());
    HttpResponse response =
        error(
                429,
                kind.errorShape() == GatewayErrors.Shape.ANTHROPIC
                    ? "rate_limit_error"
                    : "rate_limited",
                provider()
                    + " is over this gateway's "
                    + refused.limit()
                    + "; nothing was sent or reserved, retry after "
                    + retryAfter
                    + " s.",
                null)
            .addHeader(RawHeader.create("retry-after", Long.toString(retryAfter)));
    return refuse(response, "rate_limited");
  }

  private CompletionStage<HttpResponse> poolFull(PoolFull full) {
    guards.listener().poolFull(full.pool(), full.provider());
    HttpResponse refused =
        error(
                429,
                kind.errorShape() == GatewayErrors.Shape.ANTHROPIC
                    ? "rate_limit_error"
                    : "rate_limited",
                full.getMessage(),
                null)
            .addHeader(RawHeader.create("retry-after", Long.toString(full.retryAfterSeconds())));
    return refuse(refused, "pool_full");
  }

  private CompletionStage<HttpResponse> reserve(
      Preparation.Prepared prepared, SpendContext spend, AccessLine known, Permit permit) {
    ReserveRequest reserve =
        new ReserveRequest(
            dev.spendgateway.ledger.Reservation.Owner.newGatewayId(),
            spend.lane(),
            spend.subject(),
            prepared.worstCase().micros(),
            spend.brandDailyMicros(),
            spend.brandMonthlyMicros());
    // The pricing lives as long as the reservation (a stream's whole life): it keeps the model and
    // the worst case, never the call (which holds the request) or the prepared body.
    var cost = services.cost();
    var modelInfo = prepared.modelInfo();
    var worstCase = prepared.worstCase();
    Settlement.Pricing pricing =
        UsageTelemetry.counting(
            usage -> cost.settlement(modelInfo, worstCase, usage),
            services.metrics(),
            provider(),
            prepared.model(),
            UsageTelemetry.NO_PROFILE);
    return core.reserve(reserve, kind.errorShape(), pricing, known, CallerConnection.gone(request))
        .thenCompose(
            reserving -> {
              if (reserving instanceof CallCore.Reserving.CallerGone) {
                permit.close();
                line.handOver(); // the ended attempt wrote the call's line
                guards.listener().callerGone(kind.provider(), "reserve");
                log.info(
                    "request {}: the caller hung up while its reserve was decided; released,"
                        + " nothing sent",
                    spend.requestId());
                return CompletableFuture.completedFuture(
                    error(
                        GatewayErrors.CALLER_GONE,
                        "caller_gone",
                        "The caller hung up while its reserve was decided; released, nothing sent.",
                        null));
              }
              if (reserving instanceof CallCore.Reserving.Held held) {
                line.handOver();
                UsageTelemetry.countSpend(
                    held.attempt(),
                    services.metrics(),
                    provider(),
                    prepared.model(),
                    UsageTelemetry.NO_PROFILE);
                return new Attempt(held.attempt(), prepared, permit)
                    .call()
                    .thenApply(r -> withWarnings(r, prepared.warnings()));
              }
              permit.close();
              var refusal = ((CallCore.Reserving.NotHeld) reserving).refusal();
              return refuse(refusal.response(), refusal.errorClass());
            });
  }

  /** The one attempt a pass-through call makes, holding its reservation. */
  private final class Attempt {
    private final Preparation.Prepared prepared;
    private final Permit permit;
    private final UpstreamExchange exchange;

    Attempt(CallAttempt held, Preparation.Prepared prepared, Permit permit) {
      this.prepared = prepared;
      this.permit = permit;
      this.exchange =
          new UpstreamExchange(
              services,
              held,
              new UpstreamExchange.Target(
                  kind.provider(),
                  prepared.model(),
                  kind.upstreamPath(),
                  kind.streamKind(),
                  kind::usageOfAnswer,
                  kind::usageOfStream,
                  false,
                  true),
              System::nanoTime);
      // The gateway's own share of the call, once its line is written (at the stream's end): the
      // callback keeps what it needs, not this attempt, which holds the prepared request body.
      var metrics = services.metrics();
      String route = kind.route();
      long callStarted = startedNanos;
      UpstreamExchange upstream = exchange;
      held.written()
          .thenAccept(
              record ->
                  metrics.gatewayOverhead(
                      route,
                      Duration.ofNanos(
                          Math.max(
                              0, (System.nanoTime() - callStarted) - upstream.upstreamNanos()))));
    }

    CompletionStage<HttpResponse> call() {
      UpstreamRequest upstreamRequest =
          new UpstreamRequest(HttpMethods.POST, headerList(), prepared.upstreamBody());
      return exchange
          .send(upstreamRequest, guards.breaker(), permit::close)
          .thenApply(this::answer);
    }

    /** What the caller gets: the provider's answer as it is, or a gateway 502. */
    private HttpResponse answer(UpstreamExchange.Exchanged exchanged) {
      if (exchanged instanceof UpstreamExchange.Exchanged.NoAnswer none
          && new UpstreamResult.ConnectionFailed(none.errorClass()).isOverload()) {
        // Refused for capacity before anything was sent (the attempt voided it): retry shortly.
        return Overload.refusal(kind.errorShape(), none.errorClass(), services.metrics());
      }
      if (exchanged instanceof UpstreamExchange.Exchanged.NoAnswer none
          && none.errorClass().equals("breaker_open")) {
        long retryAfter = Math.max(1, guards.breakerRetryAfter().toSeconds());
        return error(
                503,
                "upstream_unavailable",
                provider()
                    + " has been failing: the gateway's circuit breaker for it is"
                    + " open, nothing was sent or billed; retry after "
                    + retryAfter
                    + " s.",
                null)
            .addHeader(RawHeader.create("retry-after", Long.toString(retryAfter)));
      }
      if (exchanged instanceof UpstreamExchange.Exchanged.NoAnswer none) {
        return error(
            502,
            "upstream_unavailable",
            "The provider could not be reached (" + none.errorClass() + ").",
            null);
      }
      if (exchanged instanceof UpstreamExchange.Exchanged.ErrorStatus refused) {
        if (refused.responded().status() == 410
            && guards.circuits().onModelGone(prepared.model())) {
          log.error(
              "ALARM model retired: {} answered 410 Gone for model '{}'; its circuit is open, calls to it are"
                  + " refused until it closes or an operator resets it",
              provider(),
              prepared.model());
        }
        return passThrough(refused.responded(), refused.body());
      }
      if (exchanged instanceof UpstreamExchange.Exchanged.Whole whole) {
        return passThrough(whole.responded(), whole.bytes());
      }
      if (exchanged instanceof UpstreamExchange.Exchanged.Streaming streaming) {
        streaming.delivered();
        // The usage chunk the gateway asked for is counted; the caller sees it only if it asked.
        return passThrough(
            streaming.responded(),
            streaming
                .metered()
                .toClient()
                .via(
                    UsageChunkFilter.forCaller(
                        prepared.forwardUsageChunk(), services.upstream().settings().sseLimits())));
      }
      return error(
          502, "upstream_unreadable", "The provider's answer could not be read to its end.", null);
    }
  }

  private HttpResponse passThrough(UpstreamResult.Responded responded, ByteString body) {
    return HttpResponse.create()
        .withStatus(GatewayErrors.status(responded.status()))
        .addHeaders(responded.headersToPassBack())
        .withEntity(HttpEntities.create(responded.contentType(), body));
  }

  private HttpResponse passThrough(UpstreamResult.Responded responded, Source<ByteString, ?> body) {
    return HttpResponse.create()
        .withStatus(GatewayErrors.status(responded.status()))
        .addHeaders(responded.headersToPassBack())
        .withEntity(HttpEntities.create(responded.contentType(), body));
  }

  private HttpResponse policyError(PolicyDecision.Violation v) {
    String type =
        v.httpStatus() == 413 && kind.errorShape() == GatewayErrors.Shape.ANTHROPIC
            ? "request_too_large"
            : "invalid_request_error";
    return error(v.httpStatus(), type, v.message(), v.field());
  }

  private HttpResponse error(int httpStatus, String type, String message, String param) {
    ObjectNode extra = CallerJson.object();
    if (param != null && kind.errorShape() == GatewayErrors.Shape.OPENAI) {
      extra.put("param", param);
    }
    return GatewayErrors.error(kind.errorShape(), httpStatus, type, message, extra, List.of());
  }

  private HttpResponse internalError(Throwable failure) {
    log.error("provider call failed inside the gateway: {}", failure.getClass().getName());
    HttpResponse response =
        error(500, "internal_error", "The gateway failed to handle this call.", null);
    written(response, "internal");
    return response;
  }

  /** Answers without a reservation: the call's own line says why. */
  private CompletionStage<HttpResponse> refuse(HttpResponse response, String errorClass) {
    written(response, errorClass);
    return CompletableFuture.completedFuture(response);
  }

  private void written(HttpResponse response, String errorClass) {
    line.write(response.status().intValue(), errorClass)
        .ifPresent(
            record ->
                services
                    .metrics()
                    .gatewayOverhead(
                        kind.route(),
                        Duration.ofNanos(Math.max(0, System.nanoTime() - startedNanos))));
  }

  private HttpResponse withWarnings(HttpResponse response, List<String> warnings) {
    if (warnings.isEmpty()) {
      return response;
    }
    List<HttpHeader> headers = new ArrayList<>();
    for (String w : warnings) {
      headers.add(RawHeader.create("x-gateway-warning", w));
    }
    return response.addHeaders(headers);
  }

  private List<String> headerValues(String name) {
    List<String> values = new ArrayList<>(1);
    for (HttpHeader h : request.getHeaders()) {
      if (h.is(name)) {
        values.add(h.value());
      }
    }
    return values;
  }

  private List<HttpHeader> headerList() {
    List<HttpHeader> headers = new ArrayList<>();
    request.getHeaders().forEach(headers::add);
    return headers;
  }

  private static HttpResponse withRequestId(HttpResponse response, String requestId) {
    return response.addHeader(RawHeader.create(SpendHeaders.REQUEST_ID, requestId));
  }

  private static String loggableModel(String requested) {
    if (requested == null) {
      return null;
    }
    return LOGGABLE_MODEL.matcher(requested).matches() ? requested : "(not a model id)";
  }

  private String provider() {
    return kind.provider().wireName();
  }
}
