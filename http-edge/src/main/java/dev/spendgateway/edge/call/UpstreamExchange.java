package dev.spendgateway.edge.call;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.cost.UsageReport;
import dev.spendgateway.policy.failover.ErrorClassifier;
import dev.spendgateway.upstream.client.RateLimitHeaders;
import dev.spendgateway.upstream.client.UpstreamRequest;
import dev.spendgateway.upstream.client.UpstreamResult;
import dev.spendgateway.upstream.stream.BodyCollector;
import dev.spendgateway.upstream.stream.CollectedBody;
import dev.spendgateway.upstream.stream.MeteredStream;
import dev.spendgateway.upstream.usage.ApiKind;
import dev.spendgateway.upstream.usage.UsageView;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.pekko.pattern.CircuitBreakerOpenException;
import org.apache.pekko.util.ByteString;

/**
 * One request of a held attempt to its provider, and what came back, read the same way for every
 * route: the pass-through routes' single attempt and each of the failover router's. It sends
 * through the attempt's {@link Guard} (the router's breaker, or none), records the upstream
 * metrics, reads a whole answer or meters a stream, and <em>ends the attempt</em> by the one {@link
 * Settlement} rule — so no route can forget a path or close one twice. What the caller gets from
 * the result (pass through, translate, fail over) stays the route's.
 *
 * <p>Whether an answer "reached the caller" decides the status the attempt's line records: a
 * pass-through attempt always answers its caller; a router attempt that failed may be followed by
 * another one, and then its line records 0.
 */
public final class UpstreamExchange {
  /** Bound on an error answer's body read for the failover decision (error bodies are small). */
  public static final long MAX_ERROR_BODY_BYTES = 1 << 20;

  private final CallServices services;
  private final CallAttempt held;
  private final Target target;

  /** The routing profile, for the metrics' {@code profile} label (empty on a provider route). */
  private final String profile;

  private final LongSupplier nanoTime;
  private final long sentNanos;

  /** When the upstream answer was over; 0 until then (for the overhead metric). */
  private final AtomicLong endedNanos = new AtomicLong();

  /**
   * Where the attempt goes and how its answer is read.
   *
   * @param path the provider's path, e.g. {@code /v1/chat/completions}
   * @param streamKind how a streamed answer is metered; empty: the route does not stream
   * @param usageOfAnswer the usage of a whole JSON answer (for a target that does not need JSON, of
   *     its {@link UsageView}, which holds every field a usage rule reads)
   * @param usageOfStream the usage of a stream's final usage document
   * @param needsJson whether a whole answer that is not a JSON object is unreadable (the router
   *     must parse it to translate); a pass-through forwards it as it is and keeps the worst case
   * @param answersCaller whether a failed attempt's error reaches the caller (pass-through) or
   *     another attempt may follow (router): the status a not-delivered attempt's line records
   */
  public record Target(
      Provider provider,
      String model,
      String path,
      Optional<ApiKind> streamKind,
      Function<JsonNode, UsageReport> usageOfAnswer,
      Function<JsonNode, UsageReport> usageOfStream,
      boolean needsJson,
      boolean answersCaller) {}

  /**
   * What guards a provider's calls. The router's is its per-provider breaker; pass-through routes
   * use {@link #NONE}.
   */
  public interface Guard {
    /** False while the provider's breaker is open: the call is not sent. */
    boolean allows(Provider provider);

    /**
     * Runs {@code call} (to the response headers) under the guard; {@code isFailure} counts
     * answers.
     */
    <T> CompletionStage<T> around(
        Provider provider, Supplier<CompletionStage<T>> call, Predicate<T> isFailure);

    /** A stream that did not end cleanly counts against the provider. */
    void streamCut(Provider provider);

    Guard NONE =
        new Guard() {
          @Override
          public boolean allows(Provider provider) {
            return true;
          }

          @Override
          public <T> CompletionStage<T> around(
              Provider provider, Supplier<CompletionStage<T>> call, Predicate<T> isFailure) {
            return call.get();
          }

          @Override
          public void streamCut(Provider provider) {}
        };
  }

  /** What the exchange came to; the attempt has ended (or, for a stream, ends when it does). */
  public sealed interface Exchanged {
    /**
     * No answer: not sent (breaker open, connect/handshake failed) or lost on the way. The attempt
     * ended at 0 or at its worst case, as {@link Settlement} rules.
     *
     * @param errorClass the safe class of why, e.g. {@code connect_failed}, {@code breaker_open}
     */
    record NoAnswer(String errorClass) implements Exchanged {}

    /** The provider answered an error status (read up to {@link #MAX_ERROR_BODY_BYTES}). */
    record ErrorStatus(UpstreamResult.Responded responded, ByteString body) implements Exchanged {}

    /**
     * A whole answer; {@code json} is its object when the target needs JSON (the router, which
     * translates it), else empty (a pass-through forwards {@code bytes} and reads only the usage).
     */
    record Whole(UpstreamResult.Responded responded, ByteString bytes, Optional<JsonNode> json)
        implements Exchanged {}

    /**
     * An answer that could not be read to its end ({@code upstream_cut}, {@code
     * upstream_too_large}, {@code upstream_unreadable}); the attempt kept its worst case.
     */
    record Unreadable(String errorClass) implements Exchanged {}

    /**
     * A streamed answer, already metered; the attempt ends when the stream does. Call {@link
     * #delivered} once its first bytes are on their way to the caller (a pass-through does at
     * once).
     */
    record Streaming(
        UpstreamResult.Responded responded, MeteredStream metered, AtomicBoolean deliveredFlag)
        implements Exchanged {
      public void delivered() {
        deliveredFlag.set(true);
      }
    }
  }

  public UpstreamExchange(
      CallServices services,
      CallAttempt held,
      Target target,
      String profile,
      LongSupplier nanoTime) {
    this.services = services;
    this.held = held;
    this.target = target;
    this.profile = profile;
    this.nanoTime = nanoTime;
    this.sentNanos = nanoTime.getAsLong();
  }

  /**
   * Sends {@code request} and reads the answer. Never fails: a failure inside the gateway ends the
   * attempt at its worst case (the request may have gone out) and is then passed on.
   *
   * @param onUpstreamEnded run once when the upstream side is over (e.g. the router's pool permit)
   */
  public CompletionStage<Exchanged> send(
      UpstreamRequest request, Guard guard, Runnable onUpstreamEnded) {
    Provider provider = target.provider();
    if (!guard.allows(provider)) {
      return CompletableFuture.completedFuture(
          notAnswered(
              new UpstreamOutcome.NeverSent("breaker_open"), "breaker_open", onUpstreamEnded));
    }
    CompletableFuture<UpstreamResult> raw = new CompletableFuture<>();
    return guard
        .around(
            provider,
            () ->
                services
                    .upstream()
                    .call(provider, target.path(), request)
                    .whenComplete((r, e) -> raw.complete(r)),
            UpstreamExchange::countsAgainstProvider)
        .handle(
            (result, failure) ->
                failure == null
                    ? onUpstream(result, guard, onUpstreamEnded)
                    : CompletableFuture.completedFuture(guardFailed(raw, failure, onUpstreamEnded)))
        .thenCompose(s -> s)
        .whenComplete(
            (exchanged, failure) -> {
              if (failure != null) {
                // A failure inside the gateway: the request may have gone out, so the worst case
                // stays
                // (a no-op when a path already ended the attempt).
                upstreamEnded(onUpstreamEnded);
                held.end(new UpstreamOutcome.NoAnswer("internal"), 500);
              }
            });
  }

  /** The upstream's own time, sent to answer over; 0 while it is not over. */
  public long upstreamNanos() {
    long ended = endedNanos.get();
    return ended == 0 ? 0 : ended - sentNanos;
  }

  /** What a breaker counts against a provider: {@link ErrorClassifier#countsAgainstProvider}. */
  static boolean countsAgainstProvider(UpstreamResult result) {
    int status =
        result instanceof UpstreamResult.Responded r
            ? r.status()
            : ErrorClassifier.CONNECTION_ERROR;
    return ErrorClassifier.countsAgainstProvider(status);
  }

  private CompletionStage<Exchanged> onUpstream(
      UpstreamResult result, Guard guard, Runnable onUpstreamEnded) {
    String provider = target.provider().wireName();
    if (result instanceof UpstreamResult.ConnectionFailed failed) {
      services
          .metrics()
          .upstreamFailure(provider, target.model(), profile, failed.safeErrorClass());
      if (failed.isOverload()) {
        // Refused for capacity before anything was sent: voided, and a caller it answers gets a
        // 503.
        upstreamEnded(onUpstreamEnded);
        held.end(
            new UpstreamOutcome.NeverSent(failed.safeErrorClass()),
            target.answersCaller() ? 503 : 0);
        return CompletableFuture.completedFuture(new Exchanged.NoAnswer(failed.safeErrorClass()));
      }
      String word = "upstream_" + failed.safeErrorClass();
      UpstreamOutcome outcome =
          failed.mayHaveReachedProvider()
              ? new UpstreamOutcome.NoAnswer(word)
              : new UpstreamOutcome.NeverSent(word);
      return CompletableFuture.completedFuture(
          notAnswered(outcome, failed.safeErrorClass(), onUpstreamEnded));
    }
    UpstreamResult.Responded responded = (UpstreamResult.Responded) result;
    services.metrics().upstreamStatus(provider, target.model(), profile, responded.status());
    RateLimitHeaders.Reading limits = RateLimitHeaders.read(responded.headersToPassBack());
    if (!limits.isEmpty()) {
      services.metrics().upstreamRateLimits(provider, limits);
    }
    services
        .metrics()
        .timeToFirstByte(
            provider, target.model(), profile, Duration.ofNanos(nanoTime.getAsLong() - sentNanos));
    if (!responded.isSuccess()) {
      return BodyCollector.collect(responded.body(), MAX_ERROR_BODY_BYTES, services.materializer())
          .thenApply(
              body -> {
                upstreamEnded(onUpstreamEnded);
                // The provider does not bill an error answer: close at 0.
                held.end(new UpstreamOutcome.ErrorStatus(responded.status()), responded.status());
                ByteString bytes =
                    body instanceof CollectedBody.Complete c
                        ? c.bytes()
                        : ByteString.emptyByteString();
                if (responded.status() == 429) {
                  // Counted apart: a quota 429 needs someone to pay, a rate limit only time.
                  services
                      .metrics()
                      .upstreamTooManyRequests(
                          provider,
                          target.model(),
                          profile,
                          ErrorClassifier.kindOf429(bytes.take(64 * 1024).utf8String()).wireName());
                }
                return new Exchanged.ErrorStatus(responded, bytes);
              });
    }
    if (responded.isEventStream() && target.streamKind().isPresent()) {
      return CompletableFuture.completedFuture(streaming(responded, guard, onUpstreamEnded));
    }
    return whole(responded, onUpstreamEnded);
  }

  private Exchanged streaming(
      UpstreamResult.Responded responded, Guard guard, Runnable onUpstreamEnded) {
    MeteredStream metered = services.meter().meter(responded.body(), target.streamKind().get());
    AtomicBoolean delivered = new AtomicBoolean();
    String provider = target.provider().wireName();
    services.metrics().streamOpened(provider);
    metered
        .outcome()
        .thenAccept(
            outcome -> {
              services.metrics().streamClosed(provider);
              upstreamEnded(onUpstreamEnded);
              if (!outcome.cleanEnd()) {
                guard.streamCut(target.provider());
              }
              held.end(
                  new UpstreamOutcome.StreamEnded(outcome, target.usageOfStream()),
                  delivered.get() ? responded.status() : notDeliveredStatus());
            });
    return new Exchanged.Streaming(responded, metered, delivered);
  }

  private CompletionStage<Exchanged> whole(
      UpstreamResult.Responded responded, Runnable onUpstreamEnded) {
    long max = services.upstream().settings().maxResponseBytes();
    return BodyCollector.collect(responded.body(), max, services.materializer())
        .thenApply(
            body -> {
              upstreamEnded(onUpstreamEnded);
              if (body instanceof CollectedBody.Complete complete) {
                // A target that needs the answer's tree parses it whole; a pass-through forwards
                // the bytes and reads only the usage, from a streamed view of the answer.
                Optional<JsonNode> json =
                    target.needsJson()
                        ? complete.json().filter(JsonNode::isObject)
                        : Optional.empty();
                if (json.isEmpty() && target.needsJson()) {
                  held.end(new UpstreamOutcome.Unreadable("upstream_unreadable"), 502);
                  return new Exchanged.Unreadable("upstream_unreadable");
                }
                Optional<JsonNode> usageSource =
                    target.needsJson() ? json : UsageView.of(complete.bytes());
                UsageReport usage =
                    usageSource
                        .map(target.usageOfAnswer())
                        .orElseGet(() -> new UsageReport.NotReported("answer is not JSON"));
                held.end(new UpstreamOutcome.Answered(usage), responded.status());
                return new Exchanged.Whole(responded, complete.bytes(), json);
              }
              if (body instanceof CollectedBody.TooLarge) {
                held.end(new UpstreamOutcome.Unreadable("upstream_too_large"), 502);
                return new Exchanged.Unreadable("upstream_too_large");
              }
              // Cut before anything reached the caller: the worst case stays; a router may fail
              // over.
              held.end(new UpstreamOutcome.Unreadable("upstream_cut"), notDeliveredStatus());
              return new Exchanged.Unreadable("upstream_cut");
            });
  }

  private Exchanged guardFailed(
      CompletableFuture<UpstreamResult> raw, Throwable failure, Runnable onUpstreamEnded) {
    Throwable cause =
        failure instanceof CompletionException && failure.getCause() != null
            ? failure.getCause()
            : failure;
    if (cause instanceof CircuitBreakerOpenException) {
      return notAnswered(
          new UpstreamOutcome.NeverSent("breaker_open"), "breaker_open", onUpstreamEnded);
    }
    // The breaker's call timeout (to the response headers): the request may have been processed;
    // keep the worst case and free the connection when the late answer arrives.
    raw.thenAccept(
        r -> {
          if (r instanceof UpstreamResult.Responded late) {
            late.discardBody(services.materializer());
          }
        });
    return notAnswered(
        new UpstreamOutcome.NoAnswer("breaker_timeout"), "breaker_timeout", onUpstreamEnded);
  }

  private Exchanged notAnswered(
      UpstreamOutcome outcome, String errorClass, Runnable onUpstreamEnded) {
    upstreamEnded(onUpstreamEnded);
    held.end(outcome, notDeliveredStatus());
    return new Exchanged.NoAnswer(errorClass);
  }

  private int notDeliveredStatus() {
    return target.answersCaller() ? 502 : 0;
  }

  /** The upstream answer is over (error, whole body, end of stream, no answer): once. */
  private void upstreamEnded(Runnable onUpstreamEnded) {
    long now = nanoTime.getAsLong();
    if (endedNanos.compareAndSet(0, now)) {
      services
          .metrics()
          .upstreamLatency(
              target.provider().wireName(),
              target.model(),
              profile,
              Duration.ofNanos(now - sentNanos));
      onUpstreamEnded.run();
    }
  }
}
