package dev.spendgateway.sim;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;

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
    try {
      config = parse(args);
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
