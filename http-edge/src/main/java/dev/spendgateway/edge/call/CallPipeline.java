package dev.spendgateway.edge.call;

import dev.spendgateway.edge.body.BodyMemory;
import dev.spendgateway.edge.body.BodyType;
import dev.spendgateway.edge.body.CallerBodies;
import dev.spendgateway.edge.call.SpendHeaders.SpendContext;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.log.AccessLine;
import dev.spendgateway.policy.dataclass.DataClass;
import dev.spendgateway.policy.dataclass.DataClasses;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.LongSupplier;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one call pipeline every provider call goes through, a pass-through route's and a routed one
 * alike; what differs is its {@link CallTarget}. In order:
 *
 * <ol>
 *   <li>the spend headers (400 {@code bad_header}), the request id learned first so every answer
 *       and line carries it;
 *   <li>the data class ({@code x-data-class}, 400; the target may refuse it, 403);
 *   <li>the body's declared type (415) and the node's body memory (503 {@code body_memory}): both
 *       before the body is read, which is then read and dropped before the answer;
 *   <li>the target's body and policy, then its attempts ({@link Call#attempt}: guards, reserve,
 *       exchange) and its answer;
 *   <li>the answer: the request id on every one; the call's own line when the gateway answered
 *       itself (an attempt's line records the others); the gateway's own share of the call ({@code
 *       gateway_overhead}); a failure inside the gateway as a 500 with its cause logged.
 * </ol>
 */
public final class CallPipeline<P> {
  private static final Logger log = LoggerFactory.getLogger(CallPipeline.class);

  private final CallTarget<P> target;
  private final CallServices services;
  private final ProviderGuards guards;
  private final LongSupplier nanoTime;

  public CallPipeline(
      CallTarget<P> target, CallServices services, ProviderGuards guards, LongSupplier nanoTime) {
    this.target = target;
    this.services = services;
    this.guards = guards;
    this.nanoTime = nanoTime;
  }

  /** Runs one call; the returned response is what the caller gets (never a failed stage). */
  public CompletionStage<HttpResponse> run(HttpRequest request) {
    Instant started = services.clock().instant();
    long startedNanos = nanoTime.getAsLong();
    CallLine line =
        new CallLine(
            target.arrived(AccessLine.arrived(started, startedNanos, target.route())), nanoTime);
    Shape shape = target.errorShape();
    SpendHeaders.Result headers = SpendHeaders.readAll(request);
    String requestId =
        headers
            .context()
            .map(SpendContext::requestId)
            .orElseGet(
                () ->
                    SpendHeaders.requestId(name -> request.getHeader(name).map(HttpHeader::value)));
    line.learn(l -> l.withRequestId(requestId));
    Ending ending = new Ending(line, startedNanos, requestId);
    if (headers.violation().isPresent()) {
      SpendHeaders.HeaderViolation v = headers.violation().get();
      return ending.now(
          Refusal.of(shape, 400, "invalid_request_error", v.message(), v.header(), "bad_header"));
    }
    SpendContext spend = headers.context().get();
    line.learn(l -> l.withSpend(spend.lane().wireName(), spend.subject()));
    DataClassHeader.Read classRead = DataClassHeader.read(request, services.dataClasses());
    if (classRead.refusal().isPresent()) {
      return ending.now(
          Refusal.of(
              shape,
              400,
              "invalid_request_error",
              classRead.refusal().get(),
              DataClasses.HEADER,
              "bad_header"));
    }
    DataClass dataClass = classRead.dataClass().get();
    line.learn(l -> l.withDataClass(dataClass.name()));
    Optional<Refusal> classRefusal = target.refusesDataClass(dataClass, services.metrics());
    if (classRefusal.isPresent()) {
      return ending.now(classRefusal.get());
    }
    if (!target.bodyType().accepts(request.entity())) {
      return ending.afterDrain(
          request,
          Refusal.of(
              shape,
              415,
              "invalid_request_error",
              target.bodyType().refusal(request.entity()),
              BodyType.HEADER,
              "unsupported_media_type"));
    }
    // The body is held from its read until the answer is handed over (see BodyMemory).
    Optional<BodyMemory.Lease> bodyHeld =
        services.bodyMemory().take(request.entity(), target.bodyLimit());
    if (bodyHeld.isEmpty()) {
      return ending.afterDrain(
          request,
          new Refusal(
              Overload.refusal(shape, Overload.BODY_MEMORY, services.metrics()),
              Overload.BODY_MEMORY));
    }
    Call call =
        new Call(
            request.withEntity(
                bodyHeld.get().entity()), // the lease trims itself to the body's size
            spend,
            dataClass,
            line,
            started,
            startedNanos,
            shape,
            services,
            guards,
            nanoTime);
    return target
        .prepare(call)
        .thenCompose(
            vetted ->
                vetted instanceof CallTarget.Vetted.Ready<P> ready
                    ? target.run(call, ready.prepared())
                    : CompletableFuture.completedFuture(
                        (CallEnd)
                            new CallEnd.Refused(((CallTarget.Vetted.Refused<P>) vetted).refusal())))
        .exceptionally(failure -> internalError(shape, failure))
        .thenApply(end -> ending.answer(end, call))
        .whenComplete((response, failure) -> bodyHeld.get().release());
  }

  /**
   * A failure inside the gateway: a 500, and its cause logged with its stack (the stage's wrapper
   * says nothing).
   */
  private static CallEnd internalError(Shape shape, Throwable failure) {
    Throwable cause =
        failure instanceof CompletionException && failure.getCause() != null
            ? failure.getCause()
            : failure;
    log.error("provider call failed inside the gateway: {}", cause.getClass().getName(), cause);
    return new CallEnd.Refused(Refusal.internal(shape));
  }

  /** Where a call ends: its answer's headers, its line, its overhead. */
  private final class Ending {
    private final CallLine line;
    private final long startedNanos;
    private final String requestId;

    Ending(CallLine line, long startedNanos, String requestId) {
      this.line = line;
      this.startedNanos = startedNanos;
      this.requestId = requestId;
    }

    /** A refusal before the body was touched. */
    CompletionStage<HttpResponse> now(Refusal refusal) {
      return CompletableFuture.completedFuture(answer(new CallEnd.Refused(refusal), null));
    }

    /**
     * A refusal whose body is read and dropped first, never held: answering while the client still
     * uploads makes some clients see a reset instead. Nothing is reserved or sent.
     */
    CompletionStage<HttpResponse> afterDrain(HttpRequest request, Refusal refusal) {
      return CallerBodies.discard(request.entity(), services.materializer())
          .thenApply(drained -> answer(new CallEnd.Refused(refusal), null));
    }

    /** What the caller gets, the call's line when the gateway answered itself, the overhead. */
    HttpResponse answer(CallEnd end, Call call) {
      HttpResponse response;
      if (end instanceof CallEnd.Refused refused) {
        line.write(refused.refusal().status(), refused.refusal().errorClass())
            .ifPresent(record -> overhead(call == null ? () -> 0 : call.upstreamNanos()));
        response = refused.refusal().response();
      } else {
        CallEnd.Answered answered = (CallEnd.Answered) end;
        // The attempt's line is the call's: the overhead once it is written (a stream's end).
        LongSupplier upstream = call.upstreamNanos();
        answered.attempt().written().thenAccept(record -> overhead(upstream));
        response = answered.response();
      }
      return response
          .addHeaders(end.headers())
          .addHeader(RawHeader.create(SpendHeaders.REQUEST_ID, requestId));
    }

    /**
     * The gateway's own share of the call: its time less its exchanges' upstream time ({@code
     * upstream}, which keeps the exchanges, not the call and its request body).
     */
    private void overhead(LongSupplier upstream) {
      services
          .metrics()
          .gatewayOverhead(
              target.route(),
              Duration.ofNanos(
                  Math.max(0, (nanoTime.getAsLong() - startedNanos) - upstream.getAsLong())));
    }
  }
}
