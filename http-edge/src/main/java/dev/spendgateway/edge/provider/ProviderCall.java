package dev.spendgateway.edge.provider;

import dev.spendgateway.edge.body.BodyType;
import dev.spendgateway.edge.body.CallerBodies;
import dev.spendgateway.edge.body.CallerJson;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.log.AccessLog;
import dev.spendgateway.edge.log.AccessRecord;
import dev.spendgateway.edge.provider.SpendHeaders.SpendContext;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.cost.CostCalculator;
import dev.spendgateway.policy.cost.UsageReport;
import dev.spendgateway.policy.money.Micros;
import dev.spendgateway.policy.request.PolicyDecision;
import dev.spendgateway.upstream.client.UpstreamRequest;
import dev.spendgateway.upstream.client.UpstreamResult;
import dev.spendgateway.upstream.stream.BodyCollector;
import dev.spendgateway.upstream.stream.CollectedBody;
import dev.spendgateway.upstream.stream.MeteredStream;
import dev.spendgateway.upstream.stream.StreamOutcome;
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
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.util.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One provider call, start to end: spend headers, body type, body, policy, worst-case reserve, upstream,
 * settle, access log. The reservation is always made before the provider is called and always
 * closed afterwards (settled, voided, or left at its worst case) — or, if the gateway dies in
 * between, expired by the ledger at its worst case.
 *
 * <p>Settlement rules (issue 5): success with usage → actual cost; upstream error status → 0 (not
 * billed); connection failure before the request was sent → 0; a cut stream, a failure after the
 * request may have reached the provider, or an unreadable success → worst case.
 */
final class ProviderCall {
  private static final Logger log = LoggerFactory.getLogger(ProviderCall.class);

  private final CallServices services;
  private final CallKind kind;
  private final HttpRequest request;
  private final Instant started;
  private final long startedNanos = System.nanoTime();

  // Filled in as the call proceeds (on whichever thread runs the next stage); read by the access
  // log line, which is written exactly once: when the reservation is closed, or at the refusal.
  private volatile SpendContext spend;
  private volatile String requestId;
  private volatile String model;
  private volatile int status;
  private volatile long reservedMicros = -1;
  private volatile long settledMicros = -1;
  private volatile String errorClass;
  private final AtomicBoolean logged = new AtomicBoolean();
  /** When the upstream request went out, and how long the upstream took (for the overhead metric). */
  private volatile long upstreamSentNanos;
  private volatile long upstreamNanos;

  ProviderCall(CallServices services, CallKind kind, HttpRequest request) {
    this.services = services;
    this.kind = kind;
    this.request = request;
    this.started = services.clock().instant();
  }

  /** Runs the call; the returned response is what the caller gets (never a failed stage). */
  CompletionStage<HttpResponse> run() {
    java.util.function.Function<String, Optional<String>> lookup = name -> request.getHeader(name).map(HttpHeader::value);
    SpendHeaders.Result headers = SpendHeaders.readAll(this::headerValues);
    this.requestId =
        headers.context().map(SpendContext::requestId).orElseGet(() -> SpendHeaders.requestId(lookup));
    if (headers.violation().isPresent()) {
      SpendHeaders.HeaderViolation v = headers.violation().get();
      errorClass = "bad_header";
      return finish(error(400, "invalid_request_error", v.message(), v.header())).thenApply(this::withRequestId);
    }
    this.spend = headers.context().get();
    if (!kind.bodyType().accepts(request.entity())) {
      return unsupportedBody().thenApply(this::withRequestId);
    }
    LocalDate today = LocalDate.ofInstant(services.clock().instant(), ZoneOffset.UTC);
    return kind.prepare(request, services, today)
        .thenCompose(this::withPreparation)
        .exceptionally(this::internalError)
        .thenApply(this::withRequestId);
  }

  /**
   * 415: the body is not in the type this route reads. Checked after the token and the spend headers
   * and before the body is read, so nothing is reserved and nothing is sent upstream.
   */
  private CompletionStage<HttpResponse> unsupportedBody() {
    errorClass = "unsupported_media_type";
    HttpResponse refused =
        error(415, "invalid_request_error", kind.bodyType().refusal(request.entity()), BodyType.HEADER);
    return CallerBodies.discard(request.entity(), services.materializer()).thenCompose(drained -> finish(refused));
  }

  private CompletionStage<HttpResponse> withPreparation(Preparation preparation) {
    if (preparation instanceof Preparation.Unreadable unreadable) {
      errorClass = unreadable.body().rule();
      return finish(error(unreadable.body().status(), "invalid_request_error", unreadable.body().message(), "body"));
    }
    if (preparation instanceof Preparation.Rejected rejected) {
      model = loggableModel(rejected.model());
      if (rejected.violation().rule().equals("model_retired") && model != null) {
        services.metrics().modelLifecycleAlarm(model, "retired");
      }
      return finish(policyError(rejected.violation()));
    }
    return reserveAndCall((Preparation.Prepared) preparation);
  }

  private CompletionStage<HttpResponse> reserveAndCall(Preparation.Prepared prepared) {
    model = prepared.model();
    if (prepared.modelInfo().isDeprecatedOn(LocalDate.ofInstant(started, ZoneOffset.UTC))) {
      services.metrics().modelLifecycleAlarm(model, "deprecated");
    }
    String reservationId = dev.spendgateway.ledger.Reservation.Owner.newGatewayId();
    ReserveRequest reserve =
        new ReserveRequest(
            reservationId,
            spend.lane(),
            spend.subject(),
            prepared.worstCase().micros(),
            spend.brandDailyMicros(),
            spend.brandMonthlyMicros());
    return services
        .ledger()
        .reserve(reserve)
        .handle((reply, failure) -> failure == null ? reply : null)
        .thenCompose(
            reply -> {
              if (reply instanceof GlobalBudget.Reserved reserved) {
                reservedMicros = reserved.amountMicros();
                Reservation held = new Reservation(reservationId, prepared, reservedMicros);
                return callUpstream(held).thenApply(r -> withWarnings(r, prepared.warnings()));
              }
              return finish(refusal(reply));
            });
  }

  /** A reservation this call holds and must close. */
  private record Reservation(String id, Preparation.Prepared prepared, long worstCaseMicros) {}

  private CompletionStage<HttpResponse> callUpstream(Reservation held) {
    UpstreamRequest upstreamRequest =
        new UpstreamRequest(HttpMethods.POST, headerList(), held.prepared().upstreamBody());
    upstreamSentNanos = System.nanoTime();
    return services
        .upstream()
        .call(kind.provider(), kind.upstreamPath(), upstreamRequest)
        .thenCompose(result -> onUpstream(held, result));
  }

  private CompletionStage<HttpResponse> onUpstream(Reservation held, UpstreamResult result) {
    if (result instanceof UpstreamResult.ConnectionFailed failed) {
      services.metrics().upstreamFailure(provider(), model, failed.safeErrorClass());
      upstreamEnded();
      errorClass = "upstream_" + failed.safeErrorClass();
      HttpResponse response =
          error(502, "upstream_unavailable", "The provider could not be reached (" + failed.safeErrorClass() + ").", null);
      if (failed.mayHaveReachedProvider()) {
        settle(held, held.worstCaseMicros());
      } else {
        voidReservation(held);
      }
      return CompletableFuture.completedFuture(response);
    }
    UpstreamResult.Responded responded = (UpstreamResult.Responded) result;
    status = responded.status();
    services.metrics().upstreamStatus(provider(), model, status);
    services.metrics().timeToFirstByte(provider(), model, Duration.ofNanos(System.nanoTime() - upstreamSentNanos));
    if (!responded.isSuccess()) {
      upstreamEnded();
      // The provider does not bill an error answer: close at 0 and pass it through as it is.
      errorClass = "upstream_" + responded.status();
      voidReservation(held);
      return CompletableFuture.completedFuture(passThrough(responded, responded.body()));
    }
    if (responded.isEventStream() && kind.streamKind().isPresent()) {
      return CompletableFuture.completedFuture(streamed(held, responded));
    }
    return collected(held, responded);
  }

  private HttpResponse streamed(Reservation held, UpstreamResult.Responded responded) {
    MeteredStream metered = services.meter().meter(responded.body(), kind.streamKind().get());
    services.metrics().streamOpened(provider());
    Runnable settleStarted = services.inFlight().settlementExpected();
    metered.outcome()
        .thenAccept(outcome -> {
          services.metrics().streamClosed(provider());
          upstreamEnded();
          settleStream(held, outcome);
        })
        .whenComplete((ignored, failure) -> settleStarted.run());
    // The usage chunk the gateway asked for is counted above; the caller sees it only if it asked.
    return passThrough(responded, metered.toClient().via(UsageChunkFilter.forCaller(
        held.prepared().forwardUsageChunk(), services.upstream().settings().sseLimits())));
  }

  private void settleStream(Reservation held, StreamOutcome outcome) {
    if (outcome.usageSettled()) {
      settleFromUsage(held, kind.usageOfStream(outcome.usageDocument().get()));
    } else {
      errorClass = outcome.errorClass().map(c -> "usage_missing:" + c).orElse("usage_missing");
      settle(held, held.worstCaseMicros());
    }
  }

  private CompletionStage<HttpResponse> collected(Reservation held, UpstreamResult.Responded responded) {
    long max = services.upstream().settings().maxResponseBytes();
    return BodyCollector.collect(responded.body(), max, services.materializer())
        .thenApply(
            body -> {
              upstreamEnded();
              if (body instanceof CollectedBody.Complete complete) {
                settleFromUsage(
                    held,
                    complete.json()
                        .map(kind::usageOfAnswer)
                        .orElseGet(() -> new UsageReport.NotReported("answer is not JSON")));
                return HttpResponse.create()
                    .withStatus(GatewayErrors.status(responded.status()))
                    .addHeaders(responded.headersToPassBack())
                    .withEntity(HttpEntities.create(responded.contentType(), complete.bytes()));
              }
              errorClass = body instanceof CollectedBody.TooLarge ? "upstream_too_large" : "upstream_cut";
              // The answer (and so the status the access line records) is decided before the
              // settle starts: its line may be written as soon as the ledger answers.
              HttpResponse unreadable =
                  error(502, "upstream_unreadable", "The provider's answer could not be read to its end.", null);
              settle(held, held.worstCaseMicros());
              return unreadable;
            });
  }

  /**
   * Settles at the reported cost, or at the worst case when the usage is missing or could not come
   * from a real call (the caller still gets the provider's answer, as with any unreadable usage).
   */
  private void settleFromUsage(Reservation held, UsageReport report) {
    CostCalculator.Settlement settlement =
        services.cost().settlement(held.prepared().modelInfo(), held.prepared().worstCase(), report);
    if (settlement instanceof CostCalculator.Settlement.Billed billed) {
      settle(held, billed.micros());
    } else {
      errorClass = ((CostCalculator.Settlement.KeepWorstCase) settlement).errorClass();
      settle(held, held.worstCaseMicros());
    }
  }

  private void settle(Reservation held, long actualMicros) {
    if (actualMicros > held.worstCaseMicros()) {
      services.metrics().settledAboveReserve(provider(), model, actualMicros - held.worstCaseMicros());
      // The request id, not the reservation's: it is what an operator searches the access log by,
      // and a provider call's reservation id appears in no caller-visible answer or other log line.
      log.warn(
          "settled above reserve: request {} reserved {} actual {} (model {})",
          requestId,
          Micros.toUsd(held.worstCaseMicros()),
          Micros.toUsd(actualMicros),
          model);
    }
    services
        .inFlight()
        .track(services.ledger().settle(held.id(), actualMicros))
        .whenComplete((reply, failure) -> closed(held, actualMicros, failure));
  }

  private void voidReservation(Reservation held) {
    services
        .inFlight()
        .track(services.ledger().voidReservation(held.id()))
        .whenComplete((reply, failure) -> closed(held, 0, failure));
  }

  private void closed(Reservation held, long actualMicros, Throwable failure) {
    if (failure != null) {
      // The ledger will expire the reservation at its worst case: money is never under-counted.
      log.warn("could not close the reservation of request {}: {}; it will expire at its worst case", requestId,
          failure.getClass().getSimpleName());
      errorClass = errorClass == null ? "settle_failed" : errorClass;
    } else {
      settledMicros = actualMicros;
    }
    logLine();
  }

  private HttpResponse passThrough(UpstreamResult.Responded responded, org.apache.pekko.stream.javadsl.Source<ByteString, ?> body) {
    return HttpResponse.create()
        .withStatus(GatewayErrors.status(responded.status()))
        .addHeaders(responded.headersToPassBack())
        .withEntity(HttpEntities.create(responded.contentType(), body));
  }

  private HttpResponse refusal(GlobalBudget.ReserveReply reply) {
    if (reply instanceof GlobalBudget.Refused refused) {
      errorClass = "budget_exceeded";
      status = 402;
      String cap = refused.cap().wireName();
      ObjectNode extra = CallerJson.object();
      extra.put("cap", cap);
      if (refused.subject() == null) {
        extra.putNull("subject");
      } else {
        extra.put("subject", refused.subject());
      }
      extra.put("headroom_usd", Micros.toUsd(refused.headroomMicros()));
      return GatewayErrors.error(
          kind.errorShape(),
          402,
          "budget_exceeded",
          "Budget cap "
              + cap
              + (refused.subject() == null ? "" : " for " + refused.subject())
              + " would be exceeded: $"
              + Micros.toUsd(refused.headroomMicros()).toPlainString()
              + " of headroom left, this call needs up to $"
              + Micros.toUsd(reservedOrZero()).toPlainString()
              + ".",
          extra,
          List.of());
    }
    if (reply == null) {
      errorClass = "ledger_unavailable";
      return error(503, "ledger_unavailable", "The budget ledger did not answer in time; try again shortly.", null);
    }
    errorClass = "ledger_rejected";
    return error(500, "ledger_rejected", "The budget ledger rejected the reservation.", null);
  }

  private long reservedOrZero() {
    return reservedMicros < 0 ? 0 : reservedMicros;
  }

  private HttpResponse policyError(PolicyDecision.Violation v) {
    errorClass = "policy:" + v.rule();
    String type =
        v.httpStatus() == 413 && kind.errorShape() == GatewayErrors.Shape.ANTHROPIC
            ? "request_too_large"
            : "invalid_request_error";
    return error(v.httpStatus(), type, v.message(), v.field());
  }

  private HttpResponse error(int httpStatus, String type, String message, String param) {
    status = httpStatus;
    if (errorClass == null) {
      errorClass = type;
    }
    ObjectNode extra = CallerJson.object();
    if (param != null && kind.errorShape() == GatewayErrors.Shape.OPENAI) {
      extra.put("param", param);
    }
    return GatewayErrors.error(kind.errorShape(), httpStatus, type, message, extra, List.of());
  }

  private HttpResponse internalError(Throwable failure) {
    log.error("provider call failed inside the gateway: {}", failure.getClass().getName());
    errorClass = "internal";
    HttpResponse response = error(500, "internal_error", "The gateway failed to handle this call.", null);
    logLine();
    return response;
  }

  private CompletionStage<HttpResponse> finish(HttpResponse response) {
    status = response.status().intValue();
    logLine();
    return CompletableFuture.completedFuture(response);
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

  private HttpResponse withRequestId(HttpResponse response) {
    return requestId == null
        ? response
        : response.addHeader(RawHeader.create(SpendHeaders.REQUEST_ID, requestId));
  }

  /**
   * A refused call's model is caller text that no catalog vetted (it can be megabytes, or a prompt
   * pasted into the wrong field): the access log keeps it only when it looks like a model id.
   */
  private static String loggableModel(String requested) {
    if (requested == null) {
      return null;
    }
    return LOGGABLE_MODEL.matcher(requested).matches() ? requested : "(not a model id)";
  }

  private static final java.util.regex.Pattern LOGGABLE_MODEL = java.util.regex.Pattern.compile("[A-Za-z0-9._:/@+-]{1,64}");

  private String provider() {
    return kind.provider().wireName();
  }

  /** The upstream answer is over (error, whole body, or end of stream): record its latency. */
  private void upstreamEnded() {
    upstreamNanos = System.nanoTime() - upstreamSentNanos;
    services.metrics().upstreamLatency(provider(), model, Duration.ofNanos(upstreamNanos));
  }

  private void logLine() {
    if (!logged.compareAndSet(false, true)) {
      return;
    }
    long totalNanos = System.nanoTime() - startedNanos;
    services.metrics().gatewayOverhead(kind.route(), Duration.ofNanos(Math.max(0, totalNanos - upstreamNanos)));
    AccessLog.write(
        new AccessRecord(
            started,
            requestId,
            kind.route(),
            kind.provider().wireName(),
            spend == null ? null : spend.lane().wireName(),
            spend == null ? null : spend.subject(),
            model,
            status,
            reservedMicros < 0 ? null : Micros.toUsd(reservedMicros).toPlainString(),
            settledMicros < 0 ? null : Micros.toUsd(settledMicros).toPlainString(),
            (System.nanoTime() - startedNanos) / 1_000_000,
            errorClass,
            false));
  }
}
