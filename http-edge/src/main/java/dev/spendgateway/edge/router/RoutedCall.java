package dev.spendgateway.edge.router;

import dev.spendgateway.edge.body.BodyType;
import dev.spendgateway.edge.call.Call;
import dev.spendgateway.edge.call.CallEnd;
import dev.spendgateway.edge.call.CallMetrics;
import dev.spendgateway.edge.call.CallTarget;
import dev.spendgateway.edge.call.CallerJsonBody;
import dev.spendgateway.edge.call.Refusal;
import dev.spendgateway.edge.call.SpendHeaders;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.router.RoutedAnswers.Target;
import dev.spendgateway.edge.router.RoutedPreparation.Routed;
import dev.spendgateway.policy.dataclass.DataClass;
import dev.spendgateway.policy.dataclass.DataClasses;
import dev.spendgateway.upstream.failover.AttemptBudget;
import dev.spendgateway.upstream.failover.FailoverPlan;
import dev.spendgateway.upstream.failover.FailoverPlan.Step;
import dev.spendgateway.upstream.failover.Pool;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * The failover router's target in the {@link dev.spendgateway.edge.call.CallPipeline}: {@code POST
 * /v1/chat/completions}, whose body names a routing profile. The pipeline does what every call
 * does; this is the router's own part: the preparation ({@link RoutedPreparation}), the failover
 * loop over {@link FailoverPlan} ({@link FailoverLoop}) and the answers ({@link RoutedAnswers}).
 */
final class RoutedCall implements CallTarget<Routed> {
  static final String ROUTE = "/v1/chat/completions";

  /** The caller's header that keeps a call on the profile's primary: {@code never}. */
  static final String FAILOVER = "x-failover";

  private final RouterContext rc;

  RoutedCall(RouterContext rc) {
    this.rc = rc;
  }

  @Override
  public String route() {
    return ROUTE;
  }

  @Override
  public Shape errorShape() {
    return Shape.OPENAI;
  }

  @Override
  public BodyType bodyType() {
    return BodyType.JSON;
  }

  @Override
  public long bodyLimit() {
    return rc.services().policy().limits().maxBodyBytes();
  }

  /** Decided per target by the plan (a class may narrow the profile, or forbid its fallback). */
  @Override
  public Optional<Refusal> refusesDataClass(DataClass dataClass, CallMetrics metrics) {
    return Optional.empty();
  }

  @Override
  public CompletionStage<Vetted<Routed>> prepare(Call call) {
    return CallerJsonBody.read(call.request().entity(), rc.services())
        .thenApply(
            body -> {
              if (body instanceof CallerJsonBody.Refused refused) {
                return new Vetted.Refused<>(
                    Refusal.of(
                        Shape.OPENAI,
                        refused.status(),
                        "invalid_request_error",
                        refused.message(),
                        refused.field(),
                        refused.errorClass()));
              }
              Optional<Boolean> never = failoverNever(call);
              if (never.isEmpty()) {
                return new Vetted.Refused<>(
                    Refusal.of(
                        Shape.OPENAI,
                        400,
                        "invalid_request_error",
                        "x-failover must be `never` (or absent: the call may fail over).",
                        FAILOVER,
                        "bad_failover_header"));
              }
              Optional<Pool> priority =
                  call.request()
                      .getHeader(SpendHeaders.PRIORITY)
                      .map(h -> Pool.fromWireName(h.value())); // SpendHeaders validated it
              Vetted<Routed> vetted =
                  RoutedPreparation.prepare(
                      ((CallerJsonBody.Json) body).object(),
                      call.spend(),
                      call.dataClass(),
                      priority,
                      never.get(),
                      rc,
                      call.guards().circuits()::isOpen,
                      call.today());
              if (vetted instanceof Vetted.Ready<Routed> ready) {
                String profile = ready.prepared().profile().name();
                call.line().learn(l -> l.withProfile(profile).withModel(profile));
              }
              return vetted;
            });
  }

  /**
   * Whether the caller pinned the call to its primary ({@code x-failover: never}); empty when the
   * header holds anything else, which is refused rather than ignored: a caller that believes it
   * ruled the fallback out must not have its data sent there by a typo.
   */
  private static Optional<Boolean> failoverNever(Call call) {
    Optional<String> value = call.request().getHeader(FAILOVER).map(h -> h.value().trim());
    if (value.isEmpty()) {
      return Optional.of(false);
    }
    return value.get().equalsIgnoreCase("never") ? Optional.of(true) : Optional.empty();
  }

  @Override
  public CompletionStage<CallEnd> run(Call call, Routed routed) {
    FailoverLoop.Routing r =
        new FailoverLoop.Routing(
            call,
            routed,
            AttemptBudget.start(rc.settings().budgets().get(routed.pool()), rc.nanoTime()));
    Step first = FailoverPlan.start(routed.plan());
    boolean forbidden =
        first instanceof FailoverPlan.GiveUp g && g.errorType().equals(DataClasses.FORBIDDEN);
    rc.services().metrics().dataClass(call.dataClass().name(), forbidden ? "forbidden" : "allowed");
    FailoverLoop.Loop loop =
        new FailoverLoop.Loop(
            null, 0, -1, routed.downgraded(), routed.openAiBody(), routed.fallbackBody());
    if (first instanceof FailoverPlan.GiveUp g) {
      return FailoverLoop.refused(r, loop, RoutedAnswers.giveUp(g, Optional.empty()));
    }
    FailoverPlan.Call to = (FailoverPlan.Call) first;
    return new FailoverLoop(rc)
        .attempt(r, loop.to(new Target(to.provider(), to.model(), to.failover())));
  }
}
