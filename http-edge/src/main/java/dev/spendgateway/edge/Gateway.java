package dev.spendgateway.edge;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import dev.spendgateway.edge.admin.AdminRoutes;
import dev.spendgateway.edge.admin.OpsAdminRoutes;
import dev.spendgateway.edge.alerts.WebhookAlarms;
import dev.spendgateway.edge.auth.GatewayAuth;
import dev.spendgateway.edge.body.BodyMemory;
import dev.spendgateway.edge.call.CallServices;
import dev.spendgateway.edge.call.GuardAlarms;
import dev.spendgateway.edge.call.InFlightCalls;
import dev.spendgateway.edge.call.Overload;
import dev.spendgateway.edge.call.ProviderGuards;
import dev.spendgateway.edge.errors.GatewayErrors;
import dev.spendgateway.edge.ledger.LedgerRoutes;
import dev.spendgateway.edge.media.MediaPoller;
import dev.spendgateway.edge.media.MediaRoutes;
import dev.spendgateway.edge.media.MediaSettings;
import dev.spendgateway.edge.metrics.GatewayMetrics;
import dev.spendgateway.edge.metrics.MetricsRoutes;
import dev.spendgateway.edge.metrics.MicrometerMediaMetrics;
import dev.spendgateway.edge.metrics.MicrometerRouterListener;
import dev.spendgateway.edge.metrics.SpendTagLabels;
import dev.spendgateway.edge.ops.FailureRates;
import dev.spendgateway.edge.ops.HealthRoutes;
import dev.spendgateway.edge.ops.JournalSpendRebuild;
import dev.spendgateway.edge.ops.LedgerObservers;
import dev.spendgateway.edge.ops.OpsData;
import dev.spendgateway.edge.ops.OpsRoutes;
import dev.spendgateway.edge.ops.SpendBreakdown;
import dev.spendgateway.edge.ops.SpendPerHour;
import dev.spendgateway.edge.provider.ProviderRoutes;
import dev.spendgateway.edge.router.FailoverRouter;
import dev.spendgateway.edge.router.RouterListener;
import dev.spendgateway.ledger.Ledger;
import dev.spendgateway.ledger.LedgerAccess;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerObserver;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.ledger.cluster.ClusterMode;
import dev.spendgateway.ledger.cluster.LedgerStandby;
import dev.spendgateway.policy.caps.WindowCalendar;
import dev.spendgateway.policy.catalog.ModelCatalog;
import dev.spendgateway.policy.cost.CostCalculator;
import dev.spendgateway.policy.dataclass.DataClasses;
import dev.spendgateway.policy.media.MediaCatalog;
import dev.spendgateway.policy.request.MediaRules;
import dev.spendgateway.policy.request.PolicyLimits;
import dev.spendgateway.policy.request.RequestPolicy;
import dev.spendgateway.upstream.client.UpstreamClient;
import dev.spendgateway.upstream.client.UpstreamSettings;
import dev.spendgateway.upstream.failover.AdmissionPools;
import dev.spendgateway.upstream.failover.ConversationStickiness;
import dev.spendgateway.upstream.failover.FailoverSettings;
import dev.spendgateway.upstream.failover.ModelCircuits;
import dev.spendgateway.upstream.failover.ProviderBreakers;
import dev.spendgateway.upstream.failover.ProviderRateLimits;
import dev.spendgateway.upstream.failover.cluster.ClusterRouting;
import dev.spendgateway.upstream.stream.StreamMeter;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.stream.Materializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root: builds every component from the resolved config and binds the HTTP edge.
 * The edge reaches the ledger only through the {@link ActorRef} it is given here: a local actor in
 * one process, the cluster singleton's proxy (behind this node's gate) on a cluster node.
 */
public final class Gateway {
  private static final Logger log = LoggerFactory.getLogger(Gateway.class);

  private final GatewaySettings settings;
  private final LedgerClient ledger;
  private final CompletableFuture<Done> ledgerReady;

  /**
   * The providers' connection pools are built. Only a wait: a failed or unanswered check (after 30
   * s) counts as done, since the pools are then built on the first call as before.
   */
  private final CompletableFuture<Integer> poolsReady;

  private final LedgerAccess ledgerAccess;
  private final Route route;
  private final GatewayMetrics metrics = new GatewayMetrics();
  private final InFlightCalls inFlight = new InFlightCalls();
  private final int maxOpenCalls;
  private final MediaPoller mediaPoller;

  /** On a cluster node, the routing state read from the cluster; done at once in one process. */
  private final CompletableFuture<Done> routingCaughtUp;

  private Gateway(ActorSystem<?> system, Config config, Clock clock, LedgerObserver lifecycle) {
    this.settings = GatewaySettings.fromConfig(config);
    this.maxOpenCalls = GatewayKeys.MAX_OPEN_CALLS.get(config);
    settings
        .startupProblem(true)
        .ifPresent(
            problem -> {
              throw new IllegalArgumentException(problem);
            });
    LedgerSettings ledgerSettings = LedgerSettings.fromConfig(config);
    // The screen's spend trend: fed by every durable write, and read back from the journal's last
    // hours once the ledger has recovered.
    JournalSpendRebuild rebuild = new JournalSpendRebuild(system);
    SpendPerHour spendSeries =
        new SpendPerHour(clock, GatewayKeys.OPS_SPEND_HOURS.get(config), rebuild::run);
    // One process: the ledger is a local actor. A cluster node: the cluster's singleton, through a
    // proxy.
    this.ledgerAccess =
        Ledger.start(
            system,
            ledgerSettings,
            clock,
            both(LedgerObservers.both(metrics.ledgerObserver(), spendSeries), lifecycle));
    this.ledger = LedgerClient.of(system, ledgerAccess.ref(), ledgerSettings, clock);
    this.ledgerReady = ledger.awaitReady().toCompletableFuture();
    // The webhook carries the guards' alarms too (a retired model, a deprecated one in use, an
    // open breaker), through the same journaled outbox.
    GuardAlarms alarms =
        dev.spendgateway.edge.alerts.BudgetAlerts.start(
                system,
                ledger,
                dev.spendgateway.edge.alerts.AlertSettings.fromConfig(config),
                clock)
            .<GuardAlarms>map(outbox -> new WebhookAlarms(outbox, clock))
            .orElse(GuardAlarms.NONE);

    PolicyLimits limits = PolicyLimits.fromMap(config.getConfig("policy").root().unwrapped());
    ModelCatalog catalog =
        ModelCatalog.fromMap(config.getConfig("models").root().unwrapped())
            .withWarningDays(GatewayKeys.WARNING_DAYS.get(config));
    DataClasses dataClasses =
        DataClasses.fromMap(config.getConfig("data-classes").root().unwrapped());
    metrics.withLedger(ledger, GatewayKeys.METRICS_SUBJECT_SERIES.get(config));
    metrics.withSpendTags(SpendTagLabels.of(GatewayKeys.METRIC_TAGS.get(config)));
    if (ClusterMode.isClusterNode(system.settings().config())) {
      metrics.withStandby(LedgerStandby.get(Adapter.toClassic(system)));
    }
    UpstreamSettings upstreamSettings = UpstreamSettings.fromConfig(config);
    UpstreamClient upstream = UpstreamClient.create(system, upstreamSettings);
    // Built now, while the ledger recovers, not on the first call (a 10,000-slot pool takes
    // seconds on a busy box); /readyz waits for them too.
    this.poolsReady =
        upstream
            .startPools()
            .toCompletableFuture()
            .completeOnTimeout(-1, 30, java.util.concurrent.TimeUnit.SECONDS);
    // One setting bounds every route's request body: provider routes, router, ledger and admin API.
    Duration bodyReadTimeout = GatewayKeys.BODY_READ_TIMEOUT.get(config);
    CallServices services =
        new CallServices(
            new RequestPolicy(catalog, limits),
            CostCalculator.of(limits),
            ledger,
            upstream,
            StreamMeter.create(
                system, upstreamSettings, GatewayKeys.CLIENT_SUBSCRIBE_TIMEOUT.get(config)),
            clock,
            Materializer.matFromSystem(system),
            bodyReadTimeout,
            metrics.calls(),
            inFlight,
            dataClasses,
            BodyMemory.shareOfHeap(
                GatewayKeys.BODY_MEMORY_SHARE.get(config), Runtime.getRuntime().maxMemory()));

    GatewayAuth auth = new GatewayAuth(settings.token());
    HealthRoutes health = new HealthRoutes(this::isReady, settings.readinessTimeout());
    LedgerRoutes ledgerRoutes =
        new LedgerRoutes(
            ledger,
            new ObjectMapper(),
            GatewayKeys.USAGE_TOP_SUBJECTS.get(config),
            bodyReadTimeout);
    MicrometerRouterListener listener =
        new MicrometerRouterListener(metrics.registry(), metrics.calls());
    // The same pools, pace, breakers and model circuits for every provider call, pass-through and
    // routed: a caller cannot get past a limit by picking a route.
    // On a cluster node the routing state is the cluster's (replicated with Distributed Data, the
    // rate limits shared out among the live nodes); in one process it stays in this JVM.
    Optional<ClusterRouting> shared =
        ClusterMode.isClusterNode(system.settings().config())
            ? Optional.of(
                ClusterRouting.start(system, ClusterRouting.Settings.fromConfig(config), clock))
            : Optional.empty();
    ProviderGuards guards = providerGuards(system, config, listener, alarms, shared);
    FailoverSettings failover = FailoverSettings.fromConfig(config);
    ConversationStickiness stickiness =
        new ConversationStickiness(
            failover.stickinessMaxEntries(),
            failover.stickinessTtl(),
            System::nanoTime,
            shared
                .<ConversationStickiness.Sharing>map(s -> s)
                .orElse(ConversationStickiness.Sharing.NONE));
    // The conversations this node holds switched to a fallback (its own and, in a cluster, the
    // other nodes'): an operator sees that switches happen, and that another node's arrive.
    io.micrometer.core.instrument.Gauge.builder(
            "gateway.router.conversations.switched", stickiness, ConversationStickiness::size)
        .description("conversations held on their fallback on this node")
        .register(metrics.registry());
    // A restarted node is ready only once it has read the cluster's circuits and switches.
    this.routingCaughtUp =
        shared
            .map(s -> s.caughtUp().toCompletableFuture())
            .orElse(CompletableFuture.completedFuture(Done.getInstance()));
    shared.ifPresent(
        s ->
            s.attach(
                new ClusterRouting.Targets(
                    guards.circuits(), guards.breakers(), stickiness, guards.rateLimits())));
    FailoverRouter router =
        FailoverRouter.create(
            system, config, catalog, services, guards, stickiness, auth, listener);
    router.profiles().all().forEach(p -> listener.servedAtZero(p.name()));
    ProviderRoutes providers = new ProviderRoutes(services, auth, guards);
    // Video jobs: off (404) unless media.base-url is set; the poller settles jobs nobody asks
    // about.
    MicrometerMediaMetrics mediaMetrics = metrics.withMedia(ledger);
    MediaRoutes media =
        new MediaRoutes(
            system,
            MediaSettings.fromConfig(config),
            new MediaRules(
                MediaCatalog.fromMap(config.getConfig("media-models").root().unwrapped()),
                limits.transcriptionMaxFileBytes()),
            services,
            auth,
            guards,
            mediaMetrics);
    this.mediaPoller = media.poller(system);
    metrics.withFailover(
        Optional.of(router::laneStats),
        Optional.of(router.breakers()),
        Optional.of(router.modelCircuits()),
        Optional.of(catalog));
    MetricsRoutes metricsRoutes = new MetricsRoutes(metrics);
    // The screen's spend by model and tag: this node's settles, in the window zone's day and month.
    SpendBreakdown spendBreakdown =
        new SpendBreakdown(
            clock,
            WindowCalendar.of(ledgerSettings.windowZone()),
            GatewayKeys.OPS_BREAKDOWN_ROWS.get(config));
    metrics.withSpendBreakdown(spendBreakdown);
    OpsRoutes ops =
        new OpsRoutes(
            new OpsData(
                    ledger,
                    GatewayKeys.OPS_TOP_BRANDS.get(config),
                    spendSeries,
                    new FailureRates(
                        metrics.registry(),
                        GatewayKeys.OPS_FAILURE_WINDOW.get(config),
                        GatewayKeys.OPS_FAILURE_SAMPLE_EVERY.get(config),
                        System::nanoTime),
                    new OpsData.Sources(
                        Optional.of(router::laneStats),
                        Optional.of(router.breakers()),
                        Optional.of(router.modelCircuits()),
                        () -> router.profiles().all()),
                    catalog,
                    metrics.registry(),
                    clock,
                    mediaMetrics::spentMicros)
                .withBreakdown(spendBreakdown));
    // Every answer is counted until its last byte is out, so a shutdown can wait for it.
    this.route =
        inFlight.tracking(
            () ->
                GatewayRoutes.compose(
                    auth,
                    openRoutes(
                        health,
                        ops.page(),
                        adminRoutes(
                            settings, ledger, this::isReady, router, catalog, bodyReadTimeout)),
                    List.of(providers.route(), media.route(), router.route()),
                    List.of(ledgerRoutes.route(), metricsRoutes.route(), ops.data())),
            maxOpenCalls,
            Overload.openCallsRefused(metrics.calls(), clock));
  }

  /**
   * The guards every provider call passes, from the {@code failover} block and the node's provider
   * rate limits; {@code listener} counts their refusals and the models a 410 retired.
   */
  private static ProviderGuards providerGuards(
      ActorSystem<?> system,
      Config config,
      RouterListener listener,
      GuardAlarms alarms,
      Optional<ClusterRouting> shared) {
    FailoverSettings settings = FailoverSettings.fromConfig(config);
    ProviderRateLimits pace = ProviderRateLimits.fromConfig(config, System::nanoTime);
    // The shipped limits are the providers' lowest paid tier: the line shows an operator which
    // limits this node keeps to, so one who never set theirs sees it.
    log.info("provider rate limits (failover.rate-limits, set your tier): {}", pace.describe());
    return new ProviderGuards(
        new AdmissionPools(settings.pools(), System::nanoTime),
        pace,
        ProviderBreakers.create(
            system,
            settings.breaker(),
            (provider, state) -> {
              log.warn("provider circuit breaker {} is now {}", provider.wireName(), state);
              if (state == ProviderBreakers.State.OPEN) {
                alarms.circuitOpened(provider);
              }
            },
            shared.<ProviderBreakers.Sharing>map(s -> s).orElse(ProviderBreakers.Sharing.NONE)),
        new ModelCircuits(
            settings.modelGoneOpenFor(),
            System::nanoTime,
            listener::modelRetired,
            shared.<ModelCircuits.Sharing>map(s -> s).orElse(ModelCircuits.Sharing.NONE)),
        settings.breaker().resetTimeout(),
        delay -> {
          CompletableFuture<Void> elapsed = new CompletableFuture<>();
          system
              .scheduler()
              .scheduleOnce(delay, () -> elapsed.complete(null), system.executionContext());
          return elapsed;
        },
        listener,
        alarms);
  }

  /**
   * The routes ahead of the caller-token check: the health probes, the operations page (it holds no
   * secret; its data endpoint is behind the token), and the admin routes when an operator token is
   * configured. The admin routes check that token themselves: behind the caller token, every caller
   * could credit away the caps.
   */
  private static List<Route> openRoutes(
      HealthRoutes health, Route opsPage, Optional<List<Route>> admin) {
    List<Route> routes = new java.util.ArrayList<>(List.of(health.route(), opsPage));
    admin.ifPresent(routes::addAll);
    return routes;
  }

  /**
   * Off (empty, so {@code /admin} is an unknown route) unless {@code gateway.admin-token} is set:
   * the operator's status and circuit reset first (they fall through on any other path), then the
   * ledger writes, which answer everything else under {@code /admin}.
   */
  private static Optional<List<Route>> adminRoutes(
      GatewaySettings settings,
      LedgerClient ledger,
      java.util.function.Supplier<CompletionStage<Boolean>> ready,
      FailoverRouter router,
      ModelCatalog catalog,
      Duration bodyReadTimeout) {
    if (!settings.hasAdminToken()) {
      // Off: every /admin path is a 404 that says so, whatever token came with it (behind the
      // caller token an operator's token got "Missing or wrong gateway token", which sent them
      // looking for a wrong token rather than for the setting).
      return Optional.of(List.of(adminOff()));
    }
    GatewayAuth adminAuth = new GatewayAuth(settings.adminToken());
    return Optional.of(
        List.of(
            new OpsAdminRoutes(
                    ledger,
                    adminAuth,
                    ready,
                    Optional.of(router.breakers()),
                    Optional.of(router.modelCircuits()),
                    model -> catalog.find(model).isPresent())
                .route(),
            new AdminRoutes(ledger, new ObjectMapper(), adminAuth, bodyReadTimeout).route()));
  }

  private static Route adminOff() {
    return Directives.pathPrefix(
        "admin",
        () ->
            Directives.complete(
                GatewayErrors.notFound(
                    GatewayErrors.Shape.GATEWAY,
                    "The admin routes are off on this gateway: start it with GATEWAY_ADMIN_TOKEN"
                        + " set (the operator's token, not GATEWAY_TOKEN), and give"
                        + " bin/gateway-admin the same GATEWAY_ADMIN_TOKEN.")));
  }

  /** Builds the gateway on {@code system} and binds it; completes once listening. */
  public static CompletionStage<ServerBinding> start(
      ActorSystem<?> system, Config config, Clock clock) {
    return start(system, config, clock, LedgerObserver.NONE);
  }

  /**
   * As above; {@code lifecycle} is also told about the ledger's recovery (the main class stops the
   * process when the ledger cannot recover, rather than serving 503 forever).
   */
  public static CompletionStage<ServerBinding> start(
      ActorSystem<?> system, Config config, Clock clock, LedgerObserver lifecycle) {
    Gateway gateway = new Gateway(system, config, clock, lifecycle);
    return GatewayServer.bind(system, gateway.settings, gateway.route, gateway.inFlight);
  }

  /**
   * Metrics first, then {@code lifecycle}; the ledger calls the observer's methods on its thread.
   */
  private static LedgerObserver both(LedgerObserver metrics, LedgerObserver lifecycle) {
    if (lifecycle == LedgerObserver.NONE) {
      return metrics;
    }
    return new LedgerObserver() {
      @Override
      public void persisted(
          List<dev.spendgateway.ledger.LedgerEvents.Event> events, java.time.Duration writeTime) {
        metrics.persisted(events, writeTime);
      }

      @Override
      public void recovered(java.time.Duration took, int knownReservations, int openReservations) {
        metrics.recovered(took, knownReservations, openReservations);
        lifecycle.recovered(took, knownReservations, openReservations);
      }

      @Override
      public void recoveryFailed(Throwable cause, boolean retrying) {
        metrics.recoveryFailed(cause, retrying);
        lifecycle.recoveryFailed(cause, retrying);
      }

      @Override
      public void droppedPastDeadline(int commands) {
        metrics.droppedPastDeadline(commands);
      }

      @Override
      public void shed(int commands) {
        metrics.shed(commands);
      }
    };
  }

  private CompletionStage<Boolean> isReady() {
    return CompletableFuture.completedFuture(
        ledgerReady.isDone()
            && !ledgerReady.isCompletedExceptionally()
            && poolsReady.isDone()
            && routingCaughtUp.isDone()
            && ledgerAccess.reachable().getAsBoolean());
  }
}
