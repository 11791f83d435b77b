package dev.spendgateway.edge;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import dev.spendgateway.edge.admin.AdminRoutes;
import dev.spendgateway.edge.auth.GatewayAuth;
import dev.spendgateway.edge.ledger.LedgerRoutes;
import dev.spendgateway.edge.metrics.GatewayMetrics;
import dev.spendgateway.edge.metrics.MetricsRoutes;
import dev.spendgateway.edge.metrics.MicrometerRouterListener;
import dev.spendgateway.edge.ops.FailureRates;
import dev.spendgateway.edge.ops.HealthRoutes;
import dev.spendgateway.edge.ops.JournalSpendRebuild;
import dev.spendgateway.edge.ops.LedgerObservers;
import dev.spendgateway.edge.ops.OpsData;
import dev.spendgateway.edge.ops.OpsRoutes;
import dev.spendgateway.edge.ops.SpendPerHour;
import dev.spendgateway.edge.provider.CallServices;
import dev.spendgateway.edge.provider.ProviderRoutes;
import dev.spendgateway.edge.provider.InFlightCalls;
import dev.spendgateway.edge.router.FailoverRouter;
import dev.spendgateway.ledger.Ledger;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerSettings;
import dev.spendgateway.policy.catalog.ModelCatalog;
import dev.spendgateway.policy.cost.CostCalculator;
import dev.spendgateway.policy.dataclass.DataClasses;
import dev.spendgateway.policy.request.PolicyLimits;
import dev.spendgateway.policy.request.RequestPolicy;
import dev.spendgateway.upstream.client.UpstreamClient;
import dev.spendgateway.upstream.client.UpstreamSettings;
import dev.spendgateway.upstream.stream.StreamMeter;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.Done;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.stream.Materializer;

/**
 * The composition root: builds every component from the resolved config and binds the HTTP edge.
 * The edge reaches the ledger only through the {@link ActorRef} it is given here, so a cluster
 * singleton proxy can replace it later (SPEC §9).
 */
public final class Gateway {
  private final GatewaySettings settings;
  private final LedgerClient ledger;
  private final CompletableFuture<Done> ledgerReady;
  private final Route route;
  private final GatewayMetrics metrics = new GatewayMetrics();
  private final InFlightCalls inFlight = new InFlightCalls();

  private Gateway(ActorSystem<?> system, Config config, Clock clock) {
    this.settings = GatewaySettings.fromConfig(config);
    settings.startupProblem(true).ifPresent(problem -> {
      throw new IllegalArgumentException(problem);
    });
    LedgerSettings ledgerSettings = LedgerSettings.fromConfig(config);
    // The screen's spend trend: fed by every durable write, and read back from the journal's last
    // hours once the ledger has recovered.
    JournalSpendRebuild rebuild = new JournalSpendRebuild(system);
    SpendPerHour spendSeries = new SpendPerHour(clock, config.getInt("ops.spend-hours"), rebuild::run);
    ActorRef<dev.spendgateway.ledger.GlobalBudget.Command> ledgerRef =
        Ledger.spawn(system, ledgerSettings, clock, LedgerObservers.both(metrics.ledgerObserver(), spendSeries));
    this.ledger = LedgerClient.of(system, ledgerRef, ledgerSettings, clock);
    this.ledgerReady = ledger.awaitReady().toCompletableFuture();

    PolicyLimits limits = PolicyLimits.fromMap(config.getConfig("policy").root().unwrapped());
    ModelCatalog catalog = ModelCatalog.fromMap(config.getConfig("models").root().unwrapped())
        .withWarningDays(config.getLong("model-lifecycle.warning-days"));
    DataClasses dataClasses = DataClasses.fromMap(config.getConfig("data-classes").root().unwrapped());
    metrics.withLedger(ledger, config.getInt("gateway.metrics-subject-series"));
    UpstreamSettings upstreamSettings = UpstreamSettings.fromConfig(config);
    CallServices services =
        new CallServices(
            new RequestPolicy(catalog, limits),
            CostCalculator.of(limits),
            ledger,
            UpstreamClient.create(system, upstreamSettings),
            StreamMeter.create(
                system, upstreamSettings, config.getDuration("providers.client-subscribe-timeout")),
            clock,
            Materializer.matFromSystem(system),
            config.getDuration("gateway.body-read-timeout"),
            metrics.calls(),
            inFlight,
            dataClasses);

    GatewayAuth auth = new GatewayAuth(settings.token());
    HealthRoutes health = new HealthRoutes(this::isReady, settings.readinessTimeout());
    LedgerRoutes ledgerRoutes = new LedgerRoutes(ledger, new ObjectMapper(), config.getInt("gateway.usage-top-subjects"));
    FailoverRouter router = FailoverRouter.create(system, config, catalog, services, auth,
        new MicrometerRouterListener(metrics.registry(), metrics.calls()));
    // The same pools, breakers and model circuits for the pass-through routes as for the router.
    ProviderRoutes providers = new ProviderRoutes(services, auth, router.guards());
    metrics.withFailover(Optional.of(router::laneStats), Optional.of(router.breakers()),
        Optional.of(router.modelCircuits()), Optional.of(catalog));
    MetricsRoutes metricsRoutes = new MetricsRoutes(metrics);
    OpsRoutes ops = new OpsRoutes(new OpsData(ledger, config.getInt("ops.top-brands"), spendSeries,
        new FailureRates(metrics.registry(), config.getDuration("ops.failure-window"),
            config.getDuration("ops.failure-sample-every"), System::nanoTime),
        new OpsData.Sources(Optional.of(router::laneStats), Optional.of(router.breakers()),
            Optional.of(router.modelCircuits()), () -> router.profiles().all()),
        catalog, metrics.registry(), clock));
    // Every answer is counted until its last byte is out, so a shutdown can wait for it.
    this.route =
        inFlight.tracking(() -> GatewayRoutes.compose(
            auth,
            openRoutes(health, ops.page(), adminRoutes(settings, ledger)),
            List.of(providers.route(), router.route()),
            List.of(ledgerRoutes.route(), metricsRoutes.route(), ops.data())));
  }

  /**
   * The routes ahead of the caller-token check: the health probes, the operations page (it holds no
   * secret; its data endpoint is behind the token), and the admin routes when an
   * operator token is configured. The admin routes check that token themselves: behind the caller
   * token, every caller could credit away the caps.
   */
  private static List<Route> openRoutes(HealthRoutes health, Route opsPage, Optional<AdminRoutes> admin) {
    return admin.map(a -> List.of(health.route(), opsPage, a.route())).orElseGet(() -> List.of(health.route(), opsPage));
  }

  /** Off (empty, so {@code /admin} is an unknown route) unless {@code gateway.admin-token} is set. */
  private static Optional<AdminRoutes> adminRoutes(GatewaySettings settings, LedgerClient ledger) {
    return settings.hasAdminToken()
        ? Optional.of(new AdminRoutes(ledger, new ObjectMapper(), new GatewayAuth(settings.adminToken())))
        : Optional.empty();
  }

  /** Builds the gateway on {@code system} and binds it; completes once listening. */
  public static CompletionStage<ServerBinding> start(ActorSystem<?> system, Config config, Clock clock) {
    Gateway gateway = new Gateway(system, config, clock);
    return GatewayServer.bind(system, gateway.settings, gateway.route, gateway.inFlight);
  }

  private CompletionStage<Boolean> isReady() {
    return CompletableFuture.completedFuture(ledgerReady.isDone() && !ledgerReady.isCompletedExceptionally());
  }
}
