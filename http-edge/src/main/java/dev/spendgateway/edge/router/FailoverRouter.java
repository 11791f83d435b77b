package dev.spendgateway.edge.router;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequestTimeout;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.post;
import static org.apache.pekko.http.javadsl.server.Directives.withRequestTimeout;
import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import com.typesafe.config.Config;
import dev.spendgateway.edge.auth.GatewayAuth;
import dev.spendgateway.edge.call.CallPipeline;
import dev.spendgateway.edge.call.CallServices;
import dev.spendgateway.edge.call.ProviderGuards;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.errors.GatewayErrors.Shape;
import dev.spendgateway.edge.errors.WrongMethod;
import dev.spendgateway.policy.catalog.ModelCatalog;
import dev.spendgateway.upstream.failover.AdmissionPools;
import dev.spendgateway.upstream.failover.AttemptBudget;
import dev.spendgateway.upstream.failover.ConversationStickiness;
import dev.spendgateway.upstream.failover.FailoverSettings;
import dev.spendgateway.upstream.failover.ModelCircuits;
import dev.spendgateway.upstream.failover.ProviderBreakers;
import dev.spendgateway.upstream.failover.RoutingProfiles;
import dev.spendgateway.upstream.failover.SchemaModeMemory;
import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.server.Route;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The failover router, {@code POST /v1/chat/completions} (docs/ROUTER.md): OpenAI-compatible,
 * {@code model} names a routing profile, OpenAI first and the profile's Claude fallback as backup.
 * Builds the router's own state once (conversation stickiness, schema memory) and runs each call
 * through the {@link CallPipeline} with a {@link RoutedCall} as its target; the guards (admission
 * pools, provider breakers, model circuits) are the ones every provider call shares. Every {@code
 * /v1/...} path answers in the OpenAI error shape (401 and 404 included).
 *
 * <p>See docs/ROUTER.md for the behaviour callers see.
 */
public final class FailoverRouter {
  private static final Logger log = LoggerFactory.getLogger(FailoverRouter.class);

  private final RouterContext context;
  private final GatewayAuth auth;

  /** The guards every provider call goes through, pass-through and routed alike. */
  private final ProviderGuards guards;

  /** The pipeline every routed call runs through. */
  private final CallPipeline<RoutedPreparation.Routed> pipeline;

  /**
   * How much later than one provider call a routed call may start its answer: its last attempt may
   * start as late as the longest attempt budget allows, then wait its turn under the pace.
   */
  private final Duration chainTime;

  private FailoverRouter(RouterContext context, ProviderGuards guards, GatewayAuth auth) {
    this.context = context;
    this.auth = auth;
    this.guards = guards;
    this.pipeline =
        new CallPipeline<>(new RoutedCall(context), context.services(), guards, System::nanoTime);
    this.chainTime = chainTime(context, guards);
  }

  static Duration chainTime(RouterContext context, ProviderGuards guards) {
    Duration longestBudget =
        context.settings().budgets().values().stream()
            .map(AttemptBudget.Limits::totalTime)
            .max(Duration::compareTo)
            .orElse(Duration.ZERO);
    return longestBudget.plus(guards.rateLimits().maxWait());
  }

  /**
   * Reads {@code profiles} and {@code failover} from {@code config} (a bad profile throws, naming
   * it) and builds the router on {@code system}, its attempts through {@code guards}, remembering
   * switched conversations in {@code stickiness} (the cluster's on a cluster node). Logs (and tells
   * {@code listener}) the lifecycle warnings of deprecated profile models, at start and once a day.
   */
  public static FailoverRouter create(
      ActorSystem<?> system,
      Config config,
      ModelCatalog catalog,
      CallServices services,
      ProviderGuards guards,
      ConversationStickiness stickiness,
      GatewayAuth auth,
      RouterListener listener) {
    RoutingProfiles profiles = RoutingProfiles.fromConfig(config, catalog);
    // A narrowing under a misspelt class would silently narrow nothing: refuse to start instead.
    for (var p : profiles.all()) {
      for (String className : p.dataClasses().keySet()) {
        if (services.dataClasses().find(className).isEmpty()) {
          throw new IllegalArgumentException(
              "profile '"
                  + p.name()
                  + "' data-classes."
                  + className
                  + ": no such data class (conf/data-classes.conf has "
                  + services.dataClasses().names()
                  + ")");
        }
      }
    }
    FailoverSettings settings = FailoverSettings.fromConfig(config);
    RouterContext context =
        new RouterContext(
            services,
            profiles,
            settings,
            stickiness,
            new SchemaModeMemory(settings.schemaMemoryMaxEntries()),
            listener,
            System::nanoTime,
            ThreadLocalRandom::current);
    FailoverRouter router = new FailoverRouter(context, guards, auth);
    router.warnLifecycle();
    system
        .scheduler()
        .scheduleAtFixedRate(
            Duration.ofDays(1),
            Duration.ofDays(1),
            router::warnLifecycle,
            system.executionContext());
    return router;
  }

  /**
   * The route: {@code /v1/chat/completions}, behind the gateway token, OpenAI error shape (a wrong
   * method there is a 405 with {@code Allow}).
   */
  public Route route() {
    // Built once, outside the directives' suppliers: those run on every request.
    Route call = call();
    Route post = post(() -> call);
    Route guarded =
        auth.authorized(
            complete(GatewayErrors.unauthorized(Shape.OPENAI)),
            concat(
                WrongMethod.answered(
                    path(segment("chat").slash("completions"), () -> post),
                    allowed -> complete(WrongMethod.answer(Shape.OPENAI, allowed))),
                complete(GatewayErrors.notFound(Shape.OPENAI, "No such route on this gateway."))));
    return pathPrefix("v1", () -> guarded);
  }

  /**
   * The server's request-timeout is sized for one provider call (its response start and a margin;
   * TimeoutBudget). A routed call chains attempts: its last one may start up to {@link #chainTime}
   * in and then take a whole response start, so the router's calls get the server's timeout plus
   * that. Shorter, a failover late in a batch budget ended in Pekko's 503 while the provider
   * generated (and billed) the answer.
   */
  private Route call() {
    Route run = extractRequest(request -> completeWithFuture(pipeline.run(request)));
    return extractRequestTimeout(
        server ->
            server.isFinite()
                ? withRequestTimeout(Duration.ofNanos(server.toNanos()).plus(chainTime), () -> run)
                : run);
  }

  /** Admission lanes' depth, age and in-flight counts, for {@code /metrics}. */
  public List<AdmissionPools.LaneStats> laneStats() {
    return guards.pools().stats();
  }

  /** Provider breaker states, for {@code /metrics} ({@code gateway_circuit_state{provider}}). */
  public ProviderBreakers breakers() {
    return guards.breakers();
  }

  /** The routing profiles (the operations screen counts their models as in use). */
  public RoutingProfiles profiles() {
    return context.profiles();
  }

  /** Models whose 410 circuit is open, and the operator reset. */
  public ModelCircuits modelCircuits() {
    return guards.circuits();
  }

  private void warnLifecycle() {
    LocalDate today = LocalDate.now(context.services().clock().withZone(ZoneOffset.UTC));
    for (RoutingProfiles.LifecycleWarning w : context.profiles().lifecycleWarnings(today)) {
      log.warn(
          "profile '{}' uses deprecated model '{}'{}",
          w.profile(),
          w.model(),
          w.daysLeft().map(d -> ", " + d + " days before its end of support").orElse(""));
      context.listener().modelDeprecated(w.profile(), w.model(), w.daysLeft());
      context
          .services()
          .policy()
          .catalog()
          .find(w.model())
          .ifPresent(model -> guards.alarms().modelDeprecatedInUse(model, today));
    }
  }
}
