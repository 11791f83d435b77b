package dev.spendgateway.edge.testkit;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The packaged gateway as a separate JVM, started the way {@code bin/gateway} starts it: {@code
 * conf/} and the jar on the class path, {@code conf/logback.xml}, {@code GatewayMain} with the
 * given arguments (and {@link QuickStart}'s JVM options, which only make it start sooner). No
 * {@code GATEWAY_*} variable of the shell running the build reaches it, only the ones a test sets.
 * Its output (stdout and stderr) goes to one file, which every failure quotes.
 *
 * <p>Also the one place that knows where the built jars are ({@link #gatewayJar}, {@link
 * #adminJar}) and how to run {@code gateway-admin} ({@link #admin}).
 */
public final class GatewayProcess implements AutoCloseable {
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  public final Process process;

  /** The port it was told to listen on ({@code GATEWAY_PORT}), or 0 when none was set. */
  public final int port;

  /** Where its stdout and stderr go. */
  public final Path out;

  /** A started gateway process (package-private for {@link QuickStart}'s training run). */
  GatewayProcess(Process process, int port, Path out) {
    this.process = process;
    this.port = port;
    this.out = out;
  }

  /** A launch to fill in, then {@link Launch#start}. */
  public static Launch launch() {
    return new Launch();
  }

  /** What a test varies: JVM options, arguments, environment, working directory. */
  public static final class Launch {
    private final List<String> jvmOptions = new ArrayList<>();
    private final List<String> args = new ArrayList<>();
    private final Map<String, String> env = new LinkedHashMap<>();
    private int port;
    private Path workDir;

    private Launch() {}

    /** Options before the main class, e.g. {@code -Xmx256m}. */
    public Launch jvm(String... options) {
      jvmOptions.addAll(List.of(options));
      return this;
    }

    /** Arguments to {@code GatewayMain}, e.g. {@code --demo}. */
    public Launch args(String... arguments) {
      args.addAll(List.of(arguments));
      return this;
    }

    /** {@code GATEWAY_PORT}, and the port {@link #base} names. */
    public Launch port(int listenOn) {
      this.port = listenOn;
      return env("GATEWAY_PORT", Integer.toString(listenOn));
    }

    public Launch dataDir(Path dir) {
      return env("GATEWAY_DATA_DIR", dir.toString());
    }

    public Launch token(String token) {
      return env("GATEWAY_TOKEN", token);
    }

    /** One environment variable; a later one of the same name wins. */
    public Launch env(String name, String value) {
      env.put(name, value);
      return this;
    }

    /** The working directory (a relative data dir is taken from it); the test JVM's by default. */
    public Launch workDir(Path dir) {
      this.workDir = dir;
      return this;
    }

    public GatewayProcess start(Path out) throws IOException {
      Path root = root();
      List<String> cmd = new ArrayList<>();
      cmd.add(java());
      // As bin/gateway: on 2 cores the common pool would otherwise have one thread.
      cmd.add("-Djava.util.concurrent.ForkJoinPool.common.parallelism=4");
      cmd.add("-Dlogback.configurationFile=" + root.resolve("conf/logback.xml"));
      cmd.addAll(QuickStart.gatewayOptions());
      cmd.addAll(jvmOptions);
      cmd.add("-cp");
      cmd.add(QuickStart.gatewayClassPath());
      cmd.add("dev.spendgateway.edge.GatewayMain");
      cmd.addAll(args);
      ProcessBuilder pb =
          new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile());
      if (workDir != null) {
        pb.directory(workDir.toFile());
      }
      pb.environment().keySet().removeIf(k -> k.startsWith("GATEWAY_"));
      pb.environment().putAll(env);
      return new GatewayProcess(pb.start(), port, out);
    }
  }

  public String base() {
    return "http://127.0.0.1:" + port;
  }

  public long pid() {
    return process.pid();
  }

  /** Everything it printed so far. */
  public String output() throws IOException {
    return Files.readString(out, StandardCharsets.UTF_8);
  }

  /** Polls {@code /readyz} until it answers 200; fails at once if the process exits first. */
  public GatewayProcess awaitReady(Duration max) throws Exception {
    HttpRequest ready =
        HttpRequest.newBuilder(URI.create(base() + "/readyz"))
            .timeout(Duration.ofSeconds(5))
            .build();
    try {
      Eventually.until(
          "the gateway process answers /readyz with 200",
          max,
          () -> {
            assertTrue(process.isAlive(), "gateway exited early: " + output());
            try {
              return HTTP.send(ready, HttpResponse.BodyHandlers.ofString()).statusCode() == 200;
            } catch (IOException notYetListening) {
              return false;
            }
          });
    } catch (AssertionError notReady) {
      throw new AssertionError(notReady.getMessage() + ": " + output(), notReady);
    }
    return this;
  }

  /** Waits for the process to end by itself (a refused start) and returns its exit value. */
  public int awaitExit(Duration max) throws Exception {
    assertTrue(
        process.waitFor(max.toMillis(), TimeUnit.MILLISECONDS),
        "the JVM never outlives a failed start: " + output());
    return process.exitValue();
  }

  /** SIGTERM, as an operator stops it; killed if it has not ended within 60 s. */
  public void stop() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      stop();
    }
  }

  // --- where things are
  // ---------------------------------------------------------------------------

  /** The packaged gateway (failsafe passes its path; {@code target/gateway.jar} otherwise). */
  public static Path gatewayJar() {
    return Path.of(System.getProperty("gateway.jar", "target/gateway.jar")).toAbsolutePath();
  }

  /** The repository root: {@code conf/}, {@code README.md} and the other modules are under it. */
  public static Path root() {
    return gatewayJar().getParent().getParent().getParent();
  }

  /** The packaged operator CLI, {@code bin/gateway-admin}'s jar. */
  public static Path adminJar() {
    return root().resolve("operator-cli/target/gateway-admin.jar");
  }

  public static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  /** A port nobody listened on a moment ago. */
  public static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  // --- gateway-admin
  // ------------------------------------------------------------------------------

  /** What one {@code gateway-admin} run printed, and its exit value. */
  public record Cli(int exit, String stdout, String stderr) {
    public String output() {
      return stdout + stderr;
    }
  }

  /**
   * Runs {@code gateway-admin} as {@code bin/gateway-admin} does ({@code conf/} on the class path,
   * no {@code GATEWAY_*} variable inherited), its output kept in files under {@code temp}.
   */
  public static Cli admin(Path temp, String... args) throws Exception {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                java(),
                // A verb reads a journal of a few rows: the JIT's first tier and the serial
                // collector start the JVM about a quarter faster, and change nothing it does.
                "-XX:TieredStopAtLevel=1",
                "-XX:+UseSerialGC",
                "-cp",
                root().resolve("conf") + File.pathSeparator + adminJar(),
                "dev.spendgateway.operator.GatewayAdmin"));
    cmd.addAll(List.of(args));
    Path stdout = Files.createTempFile(temp, "admin", ".out");
    Path stderr = Files.createTempFile(temp, "admin", ".err");
    ProcessBuilder pb =
        new ProcessBuilder(cmd).redirectOutput(stdout.toFile()).redirectError(stderr.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("GATEWAY_"));
    Process p = pb.start();
    assertTrue(
        p.waitFor(180, TimeUnit.SECONDS), "gateway-admin " + String.join(" ", args) + " ends");
    return new Cli(
        p.exitValue(),
        Files.readString(stdout, StandardCharsets.UTF_8),
        Files.readString(stderr, StandardCharsets.UTF_8));
  }
}
