package dev.spendgateway.edge.testkit;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The JVM options that start the ITs' gateway processes quickly, and nothing else about them.
 *
 * <p>The ITs start some forty gateway JVMs on a two-core machine, and starting one cost about 7 s
 * of CPU, most of it loading and verifying the same classes again and compiling with both JIT tiers
 * code that runs for seconds. Measured on the packaged demo (CPU until {@code /readyz} is 200):
 * 6.4-7.6 s as shipped, 3.6-4.1 s with the JIT's first tier and the serial collector, 1.7-1.8 s
 * with class-data sharing on top. None of these changes what the gateway does: the same classes
 * from the same jar, compiled less eagerly and collected by another collector.
 *
 * <p>Class-data sharing needs an archive of the classes a start loads: the first IT to start a
 * gateway makes one (a demo gateway started, made ready and stopped with {@code
 * -XX:ArchiveClassesAtExit}), kept beside the jar while it is newer than the jar. If that fails,
 * gateways start without it. The archive's class path must be a prefix of the started JVM's, and a
 * directory on it must be empty: it is made with the jar alone ({@code -Dconfig.file} names the
 * configuration, as the cluster ITs' {@code -jar} starts do), and the other starts put the jar
 * first and {@code conf/} (resources only, none of which the jar holds) after it. {@code
 * -Dit.quick-start=off} starts them as shipped.
 */
public final class QuickStart {
  private static final Duration TRAINING_LIMIT = Duration.ofSeconds(120);

  private static Path archive;
  private static boolean tried;

  private QuickStart() {}

  public static boolean enabled() {
    return !"off".equals(System.getProperty("it.quick-start"));
  }

  /** The options for a gateway JVM (before the class path). */
  public static List<String> gatewayOptions() {
    List<String> options = new ArrayList<>();
    if (!enabled()) {
      return options;
    }
    options.add("-XX:TieredStopAtLevel=1");
    options.add("-XX:+UseSerialGC");
    Path classes = archive();
    if (classes != null) {
      options.add("-XX:SharedArchiveFile=" + classes);
      // A mismatch (another JDK, a rebuilt jar) only turns sharing off; it must not print into
      // the output the tests read.
      options.add("-Xlog:cds=off");
      options.add("-Xlog:cds+dynamic=off");
    }
    return options;
  }

  /** The gateway's class path: the jar first, so an archive made from it applies. */
  static String gatewayClassPath() {
    Path root = GatewayProcess.root();
    if (!enabled()) {
      return root.resolve("conf") + File.pathSeparator + GatewayProcess.gatewayJar();
    }
    return GatewayProcess.gatewayJar() + File.pathSeparator + root.resolve("conf");
  }

  /** The archive for the current jar, made on first use; null when it could not be made. */
  private static synchronized Path archive() {
    if (tried) {
      return archive;
    }
    tried = true;
    Path jar = GatewayProcess.gatewayJar();
    Path target = jar.resolveSibling("gateway-it.jsa");
    try {
      if (Files.exists(target)
          && Files.getLastModifiedTime(target).compareTo(Files.getLastModifiedTime(jar)) > 0) {
        archive = target;
      } else {
        archive = train(target);
      }
    } catch (IOException | RuntimeException e) {
      System.err.println("QuickStart: no class archive, gateways start without it: " + e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return archive;
  }

  /** Starts a demo gateway, waits until it is ready, stops it: its exit writes the archive. */
  private static Path train(Path target) throws IOException, InterruptedException {
    Path dir = Files.createTempDirectory("gateway-it-archive");
    Path made = dir.resolve("gateway.jsa");
    int port = GatewayProcess.freePort();
    List<String> cmd = new ArrayList<>();
    cmd.add(GatewayProcess.java());
    cmd.add("-XX:ArchiveClassesAtExit=" + made);
    cmd.add("-Xlog:cds=off");
    cmd.add("-Xlog:cds+dynamic=off");
    cmd.add("-XX:TieredStopAtLevel=1");
    cmd.add("-XX:+UseSerialGC");
    cmd.add("-Dconfig.file=" + GatewayProcess.root().resolve("conf/application.conf"));
    cmd.add("-Dlogback.configurationFile=" + GatewayProcess.root().resolve("conf/logback.xml"));
    cmd.add("-cp");
    cmd.add(GatewayProcess.gatewayJar().toString());
    cmd.add("dev.spendgateway.edge.GatewayMain");
    cmd.add("--demo");
    Path out = dir.resolve("training.txt");
    ProcessBuilder pb =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("GATEWAY_"));
    pb.environment().put("GATEWAY_PORT", Integer.toString(port));
    pb.environment().put("GATEWAY_DATA_DIR", dir.resolve("data").toString());
    GatewayProcess gateway = new GatewayProcess(pb.start(), port, out);
    try {
      gateway.awaitReady(TRAINING_LIMIT);
    } catch (Exception | AssertionError notReady) {
      throw new IOException("the training gateway did not become ready", notReady);
    } finally {
      gateway.close(); // SIGTERM: a normal exit, which writes the archive
    }
    if (gateway.process.exitValue() != 0 || !Files.exists(made)) {
      throw new IOException(
          "the training gateway exited "
              + gateway.process.exitValue()
              + " without an archive ("
              + dir
              + ")");
    }
    Path partial = target.resolveSibling(target.getFileName() + ".part");
    Files.copy(made, partial, StandardCopyOption.REPLACE_EXISTING);
    Files.move(
        partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    return target;
  }
}
