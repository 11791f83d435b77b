package dev.spendgateway.edge;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import dev.spendgateway.edge.demo.DemoBanner;
import dev.spendgateway.ledger.cluster.ClusterMode;
import dev.spendgateway.sim.ProviderSimulator;
import dev.spendgateway.sim.SimConfig;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code bin/gateway [--demo]}: loads conf/, starts the ledger, the upstream pools and the HTTP
 * edge, and stops them cleanly on SIGTERM (exit 0).
 *
 * <p>{@code --demo} first starts the provider simulator on a free loopback port and points both
 * upstreams at it, generates a throwaway caller token and a different operator (admin) token, keeps
 * its journal apart ({@code <data-dir>/demo}), and prints ready-to-paste commands.
 */
public final class GatewayMain {
  /**
   * The JDK's CompletableFuture runs "async" callbacks on the common ForkJoinPool only when its
   * parallelism is at least 2; below that (any 2-core machine: parallelism = cores - 1) it starts a
   * new OS thread per callback. Pekko's javadsl futures (Scala's FutureConverters) run even plain
   * {@code thenApply}/{@code handle} that way, so on 2 cores every ledger reply and every HTTP
   * future cost a thread start — 3x less throughput in our load tests (docs/BENCHMARKS.md). The
   * property must be set before the pool is first touched, hence the static block at the top of
   * this class (bin/gateway also passes it); an explicit -D from JAVA_OPTS wins.
   */
  static final String COMMON_POOL_PARALLELISM = "java.util.concurrent.ForkJoinPool.common.parallelism";

  static {
    if (System.getProperty(COMMON_POOL_PARALLELISM) == null) {
      System.setProperty(
          COMMON_POOL_PARALLELISM, Integer.toString(Math.max(4, Runtime.getRuntime().availableProcessors())));
    }
  }

  private static final Logger log = LoggerFactory.getLogger(GatewayMain.class);

  private GatewayMain() {}

  public static void main(String[] args) {
    List<String> argList = List.of(args);
    if (argList.contains("--help") || argList.contains("-h")) {
      System.out.println("usage: bin/gateway [--demo]   (environment and conf/: see README.md)");
      return;
    }
    boolean demo = argList.contains("--demo");
    Config config = ConfigFactory.load();
    Config loaded = config;
    Optional<String> problem = ClusterMode.startupProblem(loaded)
        .or(() -> GatewaySettings.fromConfig(loaded).startupProblem(demo));
    if (problem.isPresent()) {
      System.err.println("gateway: " + problem.get());
      System.exit(2);
    }
    ProviderSimulator simulator = null;
    DemoTokens demoTokens = null;
    if (demo) {
      simulator = ProviderSimulator.start(SimConfig.defaults());
      demoTokens = DemoTokens.generate();
      config = demoConfig(config, simulator.baseUrl(), demoTokens);
    }
    // The PostgreSQL journal and the cluster settings (when their env is set) before the actor system starts.
    start(ClusterMode.configure(config, SYSTEM_NAME), simulator, demoTokens);
  }

  /** The actor system's name: part of every cluster node's address, so the same on all of them. */
  static final String SYSTEM_NAME = "gateway";

  /** The throwaway pair {@code --demo} prints: a caller token and, different, an operator token. */
  record DemoTokens(String caller, String admin) {
    static DemoTokens generate() {
      return new DemoTokens("demo-" + randomToken(), "demo-admin-" + randomToken());
    }
  }

  private static void start(Config config, ProviderSimulator simulator, DemoTokens demoTokens) {
    GatewaySettings settings = GatewaySettings.fromConfig(config);
    if (settings.bindsBeyondLoopback()) {
      log.warn(
          "binding {} — reachable beyond this machine; the gateway holds real provider keys, make sure that is intended",
          settings.host());
    }
    // A timer that had to be raised to cover what it times (e.g. a breaker shorter than a provider's
    // response start) is not fatal, but the operator should see the value actually used.
    settings.startupWarnings().forEach(warning -> log.warn("{}", warning));
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), SYSTEM_NAME, config);
    installSignalHandlers(system);
    if (simulator != null) {
      ProviderSimulator sim = simulator;
      CoordinatedShutdown.get(system)
          .addTask(
              CoordinatedShutdown.PhaseBeforeActorSystemTerminate(),
              "stop-provider-simulator",
              () -> sim.closeAsync().thenApply(ignored -> org.apache.pekko.Done.getInstance()));
    }
    Gateway.start(system, config, Clock.systemUTC())
        .whenComplete(
            (binding, failure) -> {
              if (failure != null) {
                log.error("gateway could not start: {}", failure.toString());
                System.err.println(
                    "gateway: could not bind "
                        + settings.host()
                        + ":"
                        + settings.port()
                        + " ("
                        + rootMessage(failure)
                        + ")");
                system.terminate();
                System.exit(1);
              }
              String base = "http://" + settings.host() + ":" + binding.localAddress().getPort();
              log.info("gateway listening on {}", base);
              if (simulator != null) {
                System.out.println(
                    DemoBanner.render(base, demoTokens.caller(), demoTokens.admin(), simulator.baseUrl()));
                System.out.flush();
              }
            });
  }

  /** SIGTERM and SIGINT run CoordinatedShutdown (unbind, drain, stop the ledger), then exit 0. */
  private static void installSignalHandlers(ActorSystem<?> system) {
    CoordinatedShutdown.Reason reason = new SignalReason();
    for (String name : List.of("TERM", "INT")) {
      try {
        sun.misc.Signal.handle(
            new sun.misc.Signal(name), signal -> CoordinatedShutdown.get(system).runAll(reason));
      } catch (IllegalArgumentException unsupported) {
        log.debug("signal {} cannot be handled here; the JVM shutdown hook will stop the gateway", name);
      }
    }
  }

  /** Shutdown asked for by a signal: a clean stop, so CoordinatedShutdown exits with code 0. */
  private static final class SignalReason implements CoordinatedShutdown.Reason {}

  static Config demoConfig(Config config, String simulatorUrl, DemoTokens tokens) {
    Path demoData = Path.of(config.getString("gateway.data-dir")).resolve("demo");
    Config overrides =
        ConfigFactory.empty()
            .withValue("gateway.token", ConfigValueFactory.fromAnyRef(tokens.caller()))
            .withValue("gateway.admin-token", ConfigValueFactory.fromAnyRef(tokens.admin()))
            .withValue("gateway.data-dir", ConfigValueFactory.fromAnyRef(demoData.toString()))
            .withValue("providers.openai.base-url", ConfigValueFactory.fromAnyRef(simulatorUrl))
            .withValue("providers.anthropic.base-url", ConfigValueFactory.fromAnyRef(simulatorUrl))
            .withValue("providers.openai.api-key", ConfigValueFactory.fromAnyRef("sim-openai-key"))
            .withValue("providers.anthropic.api-key", ConfigValueFactory.fromAnyRef("sim-anthropic-key"));
    // Re-resolve from the unresolved sources so the journal URL picks up the demo data dir.
    ConfigFactory.invalidateCaches();
    Config unresolved =
        ConfigFactory.defaultOverrides()
            .withFallback(overrides)
            .withFallback(ConfigFactory.defaultApplication())
            .withFallback(ConfigFactory.defaultReference());
    return unresolved.resolve();
  }

  private static String randomToken() {
    byte[] bytes = new byte[18];
    new SecureRandom().nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  private static String rootMessage(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null) {
      root = root.getCause();
    }
    return root.getClass().getSimpleName() + (root.getMessage() == null ? "" : ": " + root.getMessage());
  }
}
