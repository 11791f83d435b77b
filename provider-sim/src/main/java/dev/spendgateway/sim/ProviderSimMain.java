package dev.spendgateway.sim;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Standalone simulator: {@code ProviderSimMain --port N [--host 127.0.0.1] [--latency-ms M]}.
 * Prints one line with the base URL once bound; stops on SIGTERM / Ctrl-C. {@code --port} is
 * required ({@code --port 0}: any free port, printed); {@code --help} and {@code --version} exit 0;
 * every error is one line and exit 2 (usage) or 1 (could not bind).
 */
public final class ProviderSimMain {
  private ProviderSimMain() {}

  public static void main(String[] args) throws InterruptedException {
    // The simulator's own quiet logging config, unless the caller chose one.
    if (System.getProperty("logback.configurationFile") == null) {
      System.setProperty("logback.configurationFile", "provider-sim-logback.xml");
    }
    // Initialise logging before Pekko starts logging from several threads at once (else SLF4J
    // prints a "replayed calls" warning on every start).
    org.slf4j.LoggerFactory.getLogger(ProviderSimMain.class);
    List<String> argList = List.of(args);
    if (argList.contains("-h") || argList.contains("--help")) {
      System.out.print(USAGE);
      return;
    }
    if (argList.contains("--version")) {
      System.out.println(
          "provider-sim "
              + Optional.ofNullable(ProviderSimMain.class.getPackage().getImplementationVersion())
                  .orElse("dev"));
      return;
    }
    SimConfig config;
    int h2cPort;
    try {
      config = parse(args);
      h2cPort = h2cPort(args);
    } catch (IllegalArgumentException e) {
      System.err.println(
          "provider-sim: " + e.getMessage() + " (provider-sim --help lists the options)");
      System.exit(2);
      return;
    }
    ProviderSimulator sim;
    try {
      sim = ProviderSimulator.start(config);
    } catch (RuntimeException e) {
      System.err.println(
          "provider-sim: could not listen on "
              + config.host()
              + ":"
              + config.port()
              + " ("
              + rootMessage(e)
              + "); another process may use the port: choose another --port, or --port 0 for any free one");
      System.exit(1);
      return;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  sim.close();
                  stopped.countDown();
                },
                "provider-sim-shutdown"));
    System.out.println("provider-sim listening on " + sim.baseUrl());
    if (h2cPort >= 0) {
      try {
        String h2c = sim.serveH2c(h2cPort).toCompletableFuture().get(15, TimeUnit.SECONDS);
        System.out.println("provider-sim listening for HTTP/2 (h2c, prior knowledge) on " + h2c);
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
        System.err.println(
            "provider-sim: could not listen for h2c on port "
                + h2cPort
                + " ("
                + rootMessage(e)
                + ")");
        sim.close();
        System.exit(1);
        return;
      }
    }
    System.out.flush();
    stopped.await();
  }

  static final String USAGE =
      """
      usage: provider-sim --port N [--host 127.0.0.1] [--latency-ms M] [--api-key KEY]
        --port N         port to listen on (required; 0 = any free port, printed once bound)
        --host H         interface (default 127.0.0.1)
        --latency-ms M   delay before every answer (default 0)
        --api-key KEY    answer 401 unless callers send this key (default: any key)
        --h2c-port N     also serve HTTP/2 without TLS, prior knowledge, on port N (0 = any free
                         port, printed); default off
        --version        print the version and exit
        -h, --help       print this help and exit
      Prints "provider-sim listening on http://HOST:PORT" once bound; stops on SIGTERM / Ctrl-C.
      Scripted faults over HTTP: see provider-sim/README.md.
      """;

  static SimConfig parse(String[] args) {
    SimConfig config = SimConfig.defaults();
    boolean portGiven = false;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--port" -> {
          config = config.withPort(intValue(arg, value(args, ++i, arg)));
          portGiven = true;
        }
        case "--host" -> config = config.withHost(value(args, ++i, arg));
        case "--latency-ms" ->
            config = config.withLatency(Duration.ofMillis(intValue(arg, value(args, ++i, arg))));
        case "--api-key" -> config = config.withExpectedApiKey(value(args, ++i, arg));
        case "--h2c-port" -> intValue(arg, value(args, ++i, arg)); // read by h2cPort

        default ->
            throw new IllegalArgumentException(
                "unknown " + (arg.startsWith("-") ? "option" : "argument") + " '" + arg + "'");
      }
    }
    if (!portGiven) {
      throw new IllegalArgumentException(
          "--port is required (--port 0 picks any free port and prints it)");
    }
    return config;
  }

  /** {@code --h2c-port N}, or -1 when not given (no h2c listener). */
  static int h2cPort(String[] args) {
    for (int i = 0; i < args.length - 1; i++) {
      if (args[i].equals("--h2c-port")) {
        int port = intValue("--h2c-port", args[i + 1]);
        if (port < 0 || port > 65535) {
          throw new IllegalArgumentException("--h2c-port out of range: " + port);
        }
        return port;
      }
    }
    return -1;
  }

  private static String rootMessage(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message =
        root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    return message.lines().findFirst().orElse(message).strip();
  }

  private static String value(String[] args, int i, String flag) {
    if (i >= args.length) {
      throw new IllegalArgumentException(flag + " needs a value");
    }
    return args[i];
  }

  private static int intValue(String flag, String v) {
    try {
      return Integer.parseInt(v);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " must be an integer, got '" + v + "'");
    }
  }
}
