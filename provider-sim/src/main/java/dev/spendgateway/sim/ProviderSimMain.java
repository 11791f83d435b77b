package dev.spendgateway.sim;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * Standalone simulator: {@code ProviderSimMain --port N [--host 127.0.0.1] [--latency-ms M]}.
 * Prints one line with the base URL once bound; stops on SIGTERM / Ctrl-C.
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
    SimConfig config;
    try {
      config = parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("provider-sim: " + e.getMessage());
      System.err.println("usage: provider-sim --port N [--host 127.0.0.1] [--latency-ms M]");
      System.exit(2);
      return;
    }
    ProviderSimulator sim;
    try {
      sim = ProviderSimulator.start(config);
    } catch (IllegalStateException e) {
      System.err.println("provider-sim: could not bind " + config.host() + ":" + config.port() + ": " + e.getMessage());
      System.exit(1);
      return;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      sim.close();
      stopped.countDown();
    }, "provider-sim-shutdown"));
    System.out.println("provider-sim listening on " + sim.baseUrl());
    System.out.flush();
    stopped.await();
  }

  static SimConfig parse(String[] args) {
    SimConfig config = SimConfig.defaults();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--port" -> config = config.withPort(intValue(arg, value(args, ++i, arg)));
        case "--host" -> config = config.withHost(value(args, ++i, arg));
        case "--latency-ms" -> config = config.withLatency(Duration.ofMillis(intValue(arg, value(args, ++i, arg))));
        case "--api-key" -> config = config.withExpectedApiKey(value(args, ++i, arg));
        case "-h", "--help" -> throw new IllegalArgumentException("help requested");
        default -> throw new IllegalArgumentException("unknown argument '" + arg + "'");
      }
    }
    return config;
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
