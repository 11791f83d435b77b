package dev.spendgateway.edge.call;

import dev.spendgateway.edge.call.SpendHeaders.SpendContext;
import dev.spendgateway.edge.connection.CallerConnection;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.log.AccessLine;
import dev.spendgateway.ledger.Reservation;
import dev.spendgateway.ledger.ReserveRequest;
import dev.spendgateway.policy.catalog.ModelInfo;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.policy.cost.WorstCase;
import dev.spendgateway.policy.dataclass.DataClass;
import dev.spendgateway.upstream.client.UpstreamRequest;
import dev.spendgateway.upstream.failover.AdmissionPools.Permit;
import dev.spendgateway.upstream.failover.Pool;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.apache.pekko.Done;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One call as the {@link CallPipeline} hands it to its {@link CallTarget}: what the pipeline has
 * learned (request, spend, data class, the call's line so far), and the step every provider attempt
 * takes ({@link #attempt}): the guards, the reserve, the exchange.
 */
public final class Call {
  private static final Logger log = LoggerFactory.getLogger(Call.class);

  private final HttpRequest request;
  private final SpendContext spend;
  private final DataClass dataClass;
  private final CallLine line;
  private final Instant started;
  private final long startedNanos;
  private final Shape shape;
  private final CallServices services;
  private final ProviderGuards guards;
  private final LongSupplier nanoTime;
  private final CallCore core;

  /** The exchanges made so far: their upstream time is not the gateway's overhead. */
  private final List<UpstreamExchange> exchanges = new CopyOnWriteArrayList<>();

  Call(
      HttpRequest request,
      SpendContext spend,
      DataClass dataClass,
      CallLine line,
      Instant started,
      long startedNanos,
      Shape shape,
      CallServices services,
      ProviderGuards guards,
      LongSupplier nanoTime) {
    this.request = request;
    this.spend = spend;
    this.dataClass = dataClass;
    this.line = line;
    this.started = started;
    this.startedNanos = startedNanos;
    this.shape = shape;
    this.services = services;
    this.guards = guards;
    this.nanoTime = nanoTime;
    this.core = new CallCore(services, nanoTime);
  }

  public HttpRequest request() {
    return request;
  }

  public SpendContext spend() {
    return spend;
  }

  public DataClass dataClass() {
    return dataClass;
  }

  /** The call's own line: a target adds what it learns (model, profile, last provider). */
  public CallLine line() {
    return line;
  }

  public Instant started() {
    return started;
  }

  public long startedNanos() {
    return startedNanos;
  }

  /** The UTC day the call arrived (the catalog's lifecycle checks). */
  public LocalDate today() {
    return LocalDate.ofInstant(started, ZoneOffset.UTC);
  }

  public CallServices services() {
    return services;
  }

  public ProviderGuards guards() {
    return guards;
  }

  public LongSupplier nanoTime() {
    return nanoTime;
  }

  /** Completes when the caller's connection has ended (empty where that is not known). */
  public Optional<CompletionStage<Done>> callerGone() {
    return CallerConnection.gone(request);
  }

  /** Whether the caller has hung up already. */
  public boolean isCallerGone() {
    return CallerConnection.isGone(request);
  }

  /** The upstream time of every exchange of this call, sent to answer over, when asked. */
  LongSupplier upstreamNanos() {
    List<UpstreamExchange> made = exchanges;
    return () -> made.stream().mapToLong(UpstreamExchange::upstreamNanos).sum();
  }

  /**
   * One provider attempt as the target planned it.
   *
   * @param line the attempt's own line so far (written by the attempt once it holds money)
   * @param profile the routing profile, for the spend metrics ({@link UsageTelemetry#NO_PROFILE} on
   *     a pass-through route)
   * @param onHeld told of the held attempt before it is sent (e.g. the router's attempt counter)
   */
  public record AttemptPlan(
      Provider provider,
      String model,
      ModelInfo modelInfo,
      WorstCase worstCase,
      Pool pool,
      AccessLine line,
      String profile,
      UpstreamExchange.Target target,
      UpstreamRequest upstreamRequest,
      Consumer<CallAttempt> onHeld) {}

  /** What an attempt came to. */
  public sealed interface Attempted {
    /** Sent and answered (or not): the attempt has ended, or ends with its stream. */
    record Exchanged(UpstreamExchange.Exchanged result, CallAttempt attempt) implements Attempted {}

    /** Not sent, nothing held: a guard or the ledger refused it. No attempt line. */
    record Refused(Refusal refusal) implements Attempted {}

    /**
     * The ledger held the worst case but the caller had gone: released at once, not sent; the
     * attempt's own line records it.
     */
    record CallerGone(Refusal refusal, CallAttempt attempt) implements Attempted {}
  }

  /**
   * The step every provider attempt takes, pass-through or routed: the pace's turn and a slot in
   * its pool (either may wait, and the caller may hang up meanwhile), then the reserve of its worst
   * case, then the exchange through the provider's breaker.
   */
  public CompletionStage<Attempted> attempt(AttemptPlan plan) {
    long tokens = plan.worstCase().inputTokensAssumed() + plan.worstCase().outputTokensAssumed();
    return guards
        .clear(plan.provider(), tokens, plan.pool(), plan.profile(), callerGone())
        .thenCompose(
            clearance -> {
              if (clearance instanceof ProviderGuards.Clearance.Cleared cleared) {
                return reserve(plan, cleared.permit());
              }
              return CompletableFuture.completedFuture(
                  (Attempted)
                      new Attempted.Refused(refused(plan.provider(), plan.profile(), clearance)));
            });
  }

  private Refusal refused(Provider provider, String profile, ProviderGuards.Clearance clearance) {
    if (clearance instanceof ProviderGuards.Clearance.RateLimited limited) {
      return Refusal.rateLimited(shape, provider.wireName(), limited.refused());
    }
    if (clearance instanceof ProviderGuards.Clearance.PoolRefused full) {
      guards.listener().poolFull(full.full().pool(), full.full().provider(), profile);
      return Refusal.poolFull(shape, full.full());
    }
    String when = ((ProviderGuards.Clearance.CallerGone) clearance).when();
    log.info(
        "request {}: the caller hung up {}; nothing was reserved or sent to {}",
        spend.requestId(),
        when,
        provider.wireName());
    return Refusal.callerGone(
        shape, "The caller hung up " + when + "; nothing was reserved or sent.");
  }

  private CompletionStage<Attempted> reserve(AttemptPlan plan, Permit permit) {
    String provider = plan.provider().wireName();
    // Each attempt reserves on its own, so a fallback's reservation names the fallback's model.
    ReserveRequest reserve =
        spend
            .reserve(Reservation.Owner.newGatewayId(), plan.worstCase().micros())
            .forModel(plan.model(), provider);
    // The pricing lives as long as the reservation (a stream's whole life): it keeps the model and
    // the worst case, never the call (which holds the caller's request) or the vetted bodies.
    var cost = services.cost();
    var modelInfo = plan.modelInfo();
    var worstCase = plan.worstCase();
    Settlement.Pricing pricing =
        UsageTelemetry.counting(
            usage -> cost.settlement(modelInfo, worstCase, usage),
            services.metrics(),
            provider,
            plan.model(),
            plan.profile());
    return core.reserve(reserve, shape, pricing, plan.line(), callerGone())
        .thenCompose(
            reserving -> {
              if (reserving instanceof CallCore.Reserving.Held held) {
                UsageTelemetry.countSpend(
                    held.attempt(),
                    services.metrics(),
                    provider,
                    plan.model(),
                    plan.profile(),
                    spend.tag());
                plan.onHeld().accept(held.attempt());
                return send(plan, held.attempt(), permit);
              }
              permit.close();
              if (reserving instanceof CallCore.Reserving.CallerGone gone) {
                guards.listener().callerGone(plan.provider(), "reserve", plan.profile());
                log.info(
                    "request {}: the caller hung up while its reserve was decided; released, {}"
                        + " was not called",
                    spend.requestId(),
                    provider);
                return CompletableFuture.completedFuture(
                    new Attempted.CallerGone(
                        Refusal.callerGone(
                            shape,
                            "The caller hung up while its reserve was decided; released, nothing"
                                + " sent."),
                        gone.attempt()));
              }
              BudgetRefusal refusal = ((CallCore.Reserving.NotHeld) reserving).refusal();
              return CompletableFuture.completedFuture(
                  new Attempted.Refused(new Refusal(refusal.response(), refusal.errorClass())));
            });
  }

  private CompletionStage<Attempted> send(AttemptPlan plan, CallAttempt held, Permit permit) {
    UpstreamExchange exchange =
        new UpstreamExchange(services, held, plan.target(), plan.profile(), nanoTime);
    exchanges.add(exchange);
    return exchange
        .send(plan.upstreamRequest(), guards.breaker(), permit::close)
        .thenApply(result -> new Attempted.Exchanged(result, held));
  }
}
