package dev.spendgateway.edge;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.edge.demo.DemoBanner;
import dev.spendgateway.edge.demo.DemoTokens;
import dev.spendgateway.ledger.LedgerObserver;
import dev.spendgateway.ledger.cluster.ClusterMode;
import dev.spendgateway.ledger.ops.DataDirs;
import dev.spendgateway.ledger.ops.FileJournalLock;
import dev.spendgateway.ledger.ops.JournalDamagedException;
import dev.spendgateway.ledger.ops.JournalDatabase;
import dev.spendgateway.ledger.ops.JournalInUseException;
import dev.spendgateway.ledger.ops.JournalLock;
import dev.spendgateway.ledger.ops.JournalUnavailableException;
import dev.spendgateway.ledger.ops.LockHolder;
import dev.spendgateway.sim.ProviderSimulator;
import dev.spendgateway.sim.SimConfig;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code bin/gateway [--demo] [--check]}: validates the whole configuration, takes the journal's
 * lock, starts the ledger, the upstream pools and the HTTP edge, and stops them cleanly on SIGTERM
 * (exit 0).
 *
 * <p>A start that cannot succeed ends the process with one line on stderr and a non-zero exit: 2
 * for a bad configuration or usage, 1 for what the machine refused (port taken, journal in use or
 * unreadable, ledger recovery failing). The stack trace goes to the log at DEBUG, or to stderr with
 * {@code --verbose}. A supervisor then sees a failed start, never a JVM that lingers half started.
 *
 * <p>{@code --demo} first starts the provider simulator on a free loopback port and points both
 * upstreams and the media provider at it, uses a demo caller token and a different operator (admin)
 * token kept in its data dir (so exported tokens keep working across restarts), keeps its journal
 * apart ({@code <data-dir>/demo}), and prints ready-to-paste commands.
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
  static final String COMMON_POOL_PARALLELISM =
      "java.util.concurrent.ForkJoinPool.common.parallelism";

  static {
    if (System.getProperty(COMMON_POOL_PARALLELISM) == null) {
      System.setProperty(
          COMMON_POOL_PARALLELISM,
          Integer.toString(Math.max(4, Runtime.getRuntime().availableProcessors())));
    }
  }

  /**
   * Exit code for what the check before the start refuses: configuration, data dir, port, usage.
   */
  static final int BAD_CONFIG = 2;

  /**
   * Exit code for a start that failed after the check (journal lock or database, ledger recovery,
   * bind).
   */
  static final int START_FAILED = 1;

  /** How often the journal is tried before the start gives up, and how long each try may take. */
  static final int JOURNAL_TRIES = 3;

  static final Duration JOURNAL_TRY_TIMEOUT = Duration.ofSeconds(15);

  static final Duration JOURNAL_RETRY_PAUSE = Duration.ofSeconds(2);

  /**
   * Failed ledger recoveries (each retried by its supervisor with backoff) before the process
   * stops.
   */
  static final int RECOVERY_TRIES = 3;

  static final String USAGE =
      """
      usage: bin/gateway [--demo] [--check] [--verbose]
        --demo      start with the built-in provider simulator as upstream and demo tokens (kept in
                    $GATEWAY_DATA_DIR/demo, so exported tokens keep working after a restart)
        --check     validate the configuration (every key's type and range, the model catalog, every
                    profile's models, the timers on a call's path, the data dir, the port, the journal
                    lock), print the result and exit: 0 valid, 2 not (the same checks the start makes;
                    GATEWAY_TOKEN may still be unset: then it only says the start needs it)
        --verbose   with a failed start, print the stack trace too (otherwise it goes to the log at DEBUG)
        --version   print the version and exit
        -h, --help  print this help and exit
      Environment: GATEWAY_TOKEN (required outside --demo), GATEWAY_ADMIN_TOKEN, OPENAI_API_KEY,
        ANTHROPIC_API_KEY, OPENAI_BASE_URL, ANTHROPIC_BASE_URL, MEDIA_API_KEY and MEDIA_BASE_URL
        (video jobs; unset = media routes off), GATEWAY_HOST (127.0.0.1),
        GATEWAY_PORT (8787), GATEWAY_DATA_DIR (./data), JAVA_OPTS (e.g. -Dkey=value, -Dconfig.file=…).
      Configuration: conf/application.conf and the files it includes, read at every start (README.md).
      Exit codes: 0 stopped cleanly (or --check passed); 1 could not start (journal in use or
        unreadable, ledger recovery failed, bind failed); 2 refused before starting (bad configuration,
        data dir not writable, port in use, bad usage).
      """;

  private static final Logger log = LoggerFactory.getLogger(GatewayMain.class);

  private GatewayMain() {}

  /** The actor system's name: part of every cluster node's address, so the same on all of them. */
  static final String SYSTEM_NAME = "gateway";

  /** What the command line asked for. */
  record Options(boolean demo, boolean check, boolean verbose, boolean help, boolean version) {
    static Options parse(String[] args) {
      boolean demo = false;
      boolean check = false;
      boolean verbose = false;
      boolean help = false;
      boolean version = false;
      for (String arg : args) {
        switch (arg) {
          case "--demo" -> demo = true;
          case "--check" -> check = true;
          case "--verbose" -> verbose = true;
          case "-h", "--help" -> help = true;
          case "--version" -> version = true;
          default ->
              throw new IllegalArgumentException(
                  "unknown "
                      + (arg.startsWith("-") ? "option" : "argument")
                      + " '"
                      + arg
                      + "' (bin/gateway --help lists the options; the port is GATEWAY_PORT, other settings "
                      + "are conf/ keys, e.g. JAVA_OPTS=-Dgateway.port=9000)");
        }
      }
      return new Options(demo, check, verbose, help, version);
    }
  }

  public static void main(String[] args) {
    // The H2 journal's own server (AUTO_SERVER: operator tools on this host read through it)
    // listened on every interface; it serves this host only. Read once, when H2 first loads.
    if (System.getProperty("h2.bindAddress") == null) {
      System.setProperty("h2.bindAddress", "127.0.0.1");
    }
    int exit = run(args, System.out, System.err, Map.of());
    if (exit >= 0) {
      System.exit(exit);
    }
  }

  /**
   * Runs the command line; returns the exit code, or -1 when the gateway is up and the process must
   * keep running (it then ends through CoordinatedShutdown).
   */
  static int run(String[] args, PrintStream out, PrintStream err, Map<String, Object> settings) {
    Options options;
    try {
      options = Options.parse(args);
    } catch (IllegalArgumentException e) {
      err.println("gateway: " + e.getMessage());
      return BAD_CONFIG;
    }
    if (options.help()) {
      out.print(USAGE);
      return 0;
    }
    if (options.version()) {
      out.println("spend gateway " + version());
      return 0;
    }
    try {
      return start(options, out, err, settings);
    } catch (StartFailure e) {
      return fail(err, e.getMessage(), e.getCause(), e.exitCode, options.verbose());
    } catch (RuntimeException | Error e) {
      return fail(
          err,
          "could not start: " + JournalDatabase.firstLine(e),
          e,
          START_FAILED,
          options.verbose());
    }
  }

  private static int start(
      Options options, PrintStream out, PrintStream err, Map<String, Object> settings) {
    Config config = load(settings, Map.of());
    Optional<DemoTokens> demoTokens = Optional.empty();
    if (options.demo()) {
      Path demoDir = Path.of(config.getString(DataDirs.KEY)).resolve("demo");
      try {
        demoTokens =
            Optional.of(
                DemoTokens.keptIn(
                    demoDir,
                    config.getString("gateway.token"),
                    config.getString("gateway.admin-token")));
      } catch (java.io.IOException e) {
        throw new StartFailure(
            START_FAILED, "cannot keep the demo tokens in " + demoDir + ": " + e.getMessage(), e);
      }
      // The simulator's address is known only once it runs; the check needs none.
      config = demoConfig(settings, demoDir, "http://127.0.0.1:1", demoTokens.get());
    }
    Optional<LockHolder> running =
        JournalDatabase.of(config).flatMap(db -> FileJournalLock.liveHolder(db.dataDir()));
    StartupCheck.Scope scope =
        options.check() && running.isPresent()
            ? StartupCheck.Scope.WITHOUT_PORT
            : StartupCheck.Scope.ALL;
    Config checked = config;
    Optional<String> problem =
        ClusterMode.startupProblem(checked)
            .or(() -> StartupCheck.firstProblem(checked, options.demo() || options.check(), scope));
    if (problem.isPresent()) {
      throw new StartFailure(BAD_CONFIG, problem.get(), null);
    }
    List<String> warnings =
        StartupCheck.warnings(config, java.time.LocalDate.now(java.time.ZoneOffset.UTC));
    if (options.check()) {
      warnings.forEach(w -> out.println("gateway: warning: " + w));
      // The check is about the configuration, so it runs before the token is set up (as
      // OPERATIONS.md's first steps do); the start itself still refuses without it.
      if (!options.demo() && !GatewaySettings.fromConfig(config).hasToken()) {
        out.println(
            "gateway: note: GATEWAY_TOKEN is not set; the start refuses until you export it (the"
                + " secret callers send as x-api-key or Authorization: Bearer)");
      }
      out.println(
          "gateway: configuration OK (data dir "
              + config.getString(DataDirs.KEY)
              + ", "
              + config.getString("gateway.host")
              + ":"
              + config.getInt("gateway.port")
              + running
                  .map(
                      h ->
                          "; a gateway is running on this data dir (pid "
                              + h.pid()
                              + "), so its port and the journal lock were not checked")
                  .orElse("")
              + ")");
      return 0;
    }
    warnings.forEach(w -> log.warn("{}", w));
    // The PostgreSQL journal and the cluster settings (when their env is set), before the journal
    // is
    // locked and probed (both are H2's only) and before the actor system starts.
    config = ClusterMode.configure(config, SYSTEM_NAME);
    JournalLock.Lease lease = lockJournal(config);
    openJournal(config);
    ProviderSimulator simulator = null;
    if (demoTokens.isPresent()) {
      simulator = ProviderSimulator.start(SimConfig.defaults());
      config =
          ClusterMode.configure(
              demoConfig(
                  settings,
                  Path.of(config.getString(DataDirs.KEY)),
                  simulator.baseUrl(),
                  demoTokens.get()),
              SYSTEM_NAME);
    }
    launch(config, simulator, demoTokens, lease, options.verbose(), out, err);
    return -1;
  }

  /** The one writer: a second gateway on this journal stops here, naming the first. */
  private static JournalLock.Lease lockJournal(Config config) {
    try {
      return JournalLock.forJournal(config).acquire();
    } catch (JournalInUseException e) {
      throw new StartFailure(START_FAILED, e.getMessage(), e);
    }
  }

  /**
   * Opens the H2 journal once before the ledger does, a bounded number of times: a file H2 cannot
   * open (locked by another program, damaged, unreadable) is then one line and a non-zero exit,
   * instead of a ledger restarting forever while /readyz answers 503.
   */
  private static void openJournal(Config config) {
    Optional<JournalDatabase> db = JournalDatabase.of(config);
    if (db.isEmpty()) {
      return;
    }
    JournalUnavailableException last = null;
    for (int attempt = 1; attempt <= JOURNAL_TRIES; attempt++) {
      try {
        // Read-only first: opened for writing, a file H2 cannot read becomes a new, empty
        // database, and the ledger would start on empty books over the damaged journal.
        db.get().requireReadable(JOURNAL_TRY_TIMEOUT);
        db.get().probe(db.get().url(), JOURNAL_TRY_TIMEOUT);
        return;
      } catch (JournalDamagedException e) {
        throw new StartFailure(START_FAILED, e.getMessage(), e); // trying again cannot help
      } catch (JournalUnavailableException e) {
        last = e;
        log.debug(
            "journal open attempt {} of {} failed: {}", attempt, JOURNAL_TRIES, e.getMessage());
        if (attempt < JOURNAL_TRIES) {
          sleep(JOURNAL_RETRY_PAUSE);
        }
      }
    }
    throw new StartFailure(
        START_FAILED, last.getMessage() + " (tried " + JOURNAL_TRIES + " times)", last);
  }

  private static void launch(
      Config config,
      ProviderSimulator simulator,
      Optional<DemoTokens> demoTokens,
      JournalLock.Lease lease,
      boolean verbose,
      PrintStream out,
      PrintStream err) {
    GatewaySettings settings = GatewaySettings.fromConfig(config);
    if (settings.bindsBeyondLoopback()) {
      log.warn(
          "binding {} — reachable beyond this machine; the gateway holds real provider keys, make sure that is intended",
          settings.host());
    }
    // A timer that had to be raised to cover what it times (e.g. a breaker shorter than a
    // provider's
    // response start) is not fatal, but the operator should see the value actually used.
    settings.startupWarnings().forEach(warning -> log.warn("{}", warning));
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), SYSTEM_NAME, config);
    try {
      installSignalHandlers(system);
      CoordinatedShutdown.get(system)
          .addTask(
              CoordinatedShutdown.PhaseActorSystemTerminate(),
              "release-journal-lock",
              () -> {
                lease.close();
                return java.util.concurrent.CompletableFuture.completedFuture(
                    org.apache.pekko.Done.getInstance());
              });
      if (simulator != null) {
        ProviderSimulator sim = simulator;
        CoordinatedShutdown.get(system)
            .addTask(
                CoordinatedShutdown.PhaseBeforeActorSystemTerminate(),
                "stop-provider-simulator",
                () -> sim.closeAsync().thenApply(ignored -> org.apache.pekko.Done.getInstance()));
      }
      Gateway.start(
              system,
              config,
              Clock.systemUTC(),
              new RecoveryWatch(err, verbose, config.getString(DataDirs.KEY)))
          .whenComplete(
              (binding, failure) -> {
                if (failure != null) {
                  exitFromAnotherThread(
                      fail(
                          err,
                          "could not listen on "
                              + settings.host()
                              + ":"
                              + settings.port()
                              + " ("
                              + JournalDatabase.firstLine(failure)
                              + "); another process may use the port: stop it or "
                              + "set GATEWAY_PORT",
                          failure,
                          START_FAILED,
                          verbose));
                  return;
                }
                String base = "http://" + settings.host() + ":" + binding.localAddress().getPort();
                log.info("gateway listening on {}", base);
                demoTokens.ifPresent(
                    tokens -> {
                      out.println(
                          DemoBanner.render(
                              base, tokens.caller(), tokens.admin(), simulator.baseUrl()));
                      out.flush();
                    });
              });
    } catch (RuntimeException | Error e) {
      // Anything thrown while building the gateway: the actor system's threads would keep the JVM
      // up.
      system.terminate();
      throw e;
    }
  }

  /**
   * Stops the process when the ledger cannot recover: after {@link #RECOVERY_TRIES} failures (the
   * ledger's supervisor retries with backoff), or at once when it stopped for good. One ERROR line
   * with the cause; the gateway would otherwise answer 503 forever.
   */
  private static final class RecoveryWatch implements LedgerObserver {
    private final AtomicInteger failures = new AtomicInteger();
    private final PrintStream err;
    private final boolean verbose;
    private final String dataDir;

    RecoveryWatch(PrintStream err, boolean verbose, String dataDir) {
      this.err = err;
      this.verbose = verbose;
      this.dataDir = dataDir;
    }

    @Override
    public void recoveryFailed(Throwable cause, boolean retrying) {
      int failed = failures.incrementAndGet();
      if (retrying && failed < RECOVERY_TRIES) {
        log.debug("ledger recovery attempt {} failed; retrying", failed, cause);
        return;
      }
      if (failed > RECOVERY_TRIES) {
        return; // the process is already stopping
      }
      String line =
          "ledger recovery failed "
              + failed
              + (failed == 1 ? " time" : " times")
              + ", the gateway stops: "
              + JournalDatabase.firstLine(cause)
              + " (data dir "
              + dataDir
              + "; bin/gateway-admin verify --data-dir "
              + dataDir
              + " reads the same journal)";
      log.error(line);
      if (verbose) {
        cause.printStackTrace(err);
      }
      exitFromAnotherThread(START_FAILED);
    }
  }

  /**
   * Exits from a fresh thread: {@code System.exit} waits for the shutdown hooks, and
   * CoordinatedShutdown's hook needs the actor system's threads — one of which may be the caller.
   */
  private static void exitFromAnotherThread(int code) {
    Thread exit = new Thread(() -> System.exit(code), "gateway-exit");
    exit.setDaemon(false);
    exit.start();
  }

  private static int fail(
      PrintStream err, String message, Throwable cause, int code, boolean verbose) {
    err.println("gateway: " + message.replaceAll("\\s*\\R\\s*", " "));
    if (cause != null) {
      if (verbose) {
        cause.printStackTrace(err);
      } else {
        log.debug("start failed", cause);
      }
    }
    err.flush();
    return code;
  }

  /** A start that must end the process with {@code exitCode} and a one-line message. */
  static final class StartFailure extends RuntimeException {
    final int exitCode;

    StartFailure(int exitCode, String message, Throwable cause) {
      super(message, cause);
      this.exitCode = exitCode;
    }
  }

  /** SIGTERM and SIGINT run CoordinatedShutdown (unbind, drain, stop the ledger), then exit 0. */
  private static void installSignalHandlers(ActorSystem<?> system) {
    CoordinatedShutdown.Reason reason = new SignalReason();
    for (String name : List.of("TERM", "INT")) {
      try {
        sun.misc.Signal.handle(
            new sun.misc.Signal(name), signal -> CoordinatedShutdown.get(system).runAll(reason));
      } catch (IllegalArgumentException unsupported) {
        log.debug(
            "signal {} cannot be handled here; the JVM shutdown hook will stop the gateway", name);
      }
    }
  }

  /** Shutdown asked for by a signal: a clean stop, so CoordinatedShutdown exits with code 0. */
  private static final class SignalReason implements CoordinatedShutdown.Reason {}

  /**
   * The configuration the gateway runs with: {@code settings} (tests' stand-in for JAVA_OPTS) over
   * system properties ({@code -Dkey=value}) over {@code overrides} over the application config
   * ({@code -Dconfig.file}, else {@code application.conf} on the class path: bin/gateway puts conf/
   * there) over the modules' reference.conf, with {@code gateway.data-dir} made absolute. A syntax
   * error in a file is a {@link StartFailure} naming the file and line.
   */
  static Config load(Map<String, Object> settings, Map<String, Object> overrides) {
    ConfigFactory.invalidateCaches();
    Config config;
    try {
      config =
          DataDirs.resolveAbsolute(
              ConfigFactory.parseMap(settings, "settings")
                  .withFallback(ConfigFactory.defaultOverrides())
                  .withFallback(ConfigFactory.parseMap(overrides))
                  .withFallback(ConfigFactory.defaultApplication())
                  .withFallback(ConfigFactory.defaultReference()));
    } catch (ConfigException e) {
      throw new StartFailure(BAD_CONFIG, "configuration: " + e.getMessage(), e);
    }
    if (!config.hasPath("gateway.port") || !config.hasPath("ledger.caps")) {
      throw new StartFailure(
          BAD_CONFIG,
          "no configuration found: start through bin/gateway (it reads conf/), or "
              + "pass -Dconfig.file=<repo>/conf/application.conf",
          null);
    }
    return GatewayServer.withDrainPhase(config);
  }

  /**
   * The demo's configuration: its own data dir, its tokens, every upstream (both providers and the
   * media provider) at the simulator, which serves all three APIs on one port.
   */
  static Config demoConfig(
      Map<String, Object> settings, Path demoDataDir, String simulatorUrl, DemoTokens tokens) {
    Map<String, Object> overrides = new HashMap<>();
    overrides.put("gateway.token", tokens.caller());
    overrides.put("gateway.admin-token", tokens.admin());
    overrides.put(DataDirs.KEY, demoDataDir.toString());
    overrides.put("providers.openai.base-url", simulatorUrl);
    overrides.put("providers.anthropic.base-url", simulatorUrl);
    overrides.put("providers.openai.api-key", "sim-openai-key");
    overrides.put("providers.anthropic.api-key", "sim-anthropic-key");
    // Media on too, so the demo shows a video job end to end; the simulator counts the 5-job limit
    // per key, like the real provider. The environment's MEDIA_* never reach the demo: a real
    // media key must not be spent by a demo started on the same shell.
    overrides.put("media.base-url", simulatorUrl);
    overrides.put("media.api-key", DEMO_MEDIA_KEY);
    // The simulator has no provider tier: the shipped pace (Tier 1) would only make the demo and
    // the benchmarks run on it slower. A -D setting still turns it on.
    overrides.put("failover.rate-limits.enabled", false);
    return load(settings, overrides);
  }

  /** The media key the demo's simulator is sent: a fixed fake, never a real key. */
  static final String DEMO_MEDIA_KEY = "sim-media-key";

  /** The demo's configuration on top of {@code config} (kept for tests that build it by hand). */
  static Config demoConfig(Config config, String simulatorUrl, DemoTokens tokens) {
    return demoConfig(
        Map.of(), Path.of(config.getString(DataDirs.KEY)).resolve("demo"), simulatorUrl, tokens);
  }

  /** The jar's version (its manifest), or "dev" when run from classes. */
  static String version() {
    return Optional.ofNullable(GatewayMain.class.getPackage().getImplementationVersion())
        .orElse("dev");
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
