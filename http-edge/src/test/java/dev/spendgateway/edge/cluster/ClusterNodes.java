package dev.spendgateway.edge.cluster;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.QuickStart;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Gateway nodes as separate processes of the packaged gateway.jar (the way bin/gateway runs it), on
 * loopback ports of their own, joined into one cluster over a PostgreSQL journal in a database of
 * their own (created here, dropped on close).
 */
final class ClusterNodes implements AutoCloseable {
  /**
   * The lock every three-node IT holds (JUnit's {@code @ResourceLock}): the ITs run two classes at
   * a time, and two clusters at once would be six gateway JVMs on a two-core machine, whose timings
   * (a 410 seen on every node within 2 s, a hand-over) would then measure the machine.
   */
  static final String LOCK = "three-node-cluster";

  static final String TOKEN = "cluster-test-token";
  static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private static final String SERVER =
      System.getProperty("test.postgres.url", "jdbc:postgresql://127.0.0.1:5432/postgres");
  private static final String USER = System.getProperty("test.postgres.user", "postgres");

  final String database;
  final String journalUrl;
  final List<Node> nodes = new ArrayList<>();
  private final Path dir;
  private String seeds = "";
  private Map<String, String> jvmProps = Map.of();

  /** One node: its process, HTTP base URL, cluster port and log file. */
  record Node(int index, Process process, String base, int clusterPort, Path log) {
    String logText() throws IOException {
      return Files.readString(log, StandardCharsets.UTF_8);
    }

    /** Whether this node started the ledger singleton (at some point). */
    boolean startedLedger() throws IOException {
      return logText().contains("Singleton manager starting singleton actor");
    }
  }

  private ClusterNodes(Path unused) throws SQLException, IOException {
    this.database = "cluster_it_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    // Under target/, not a temporary folder: the nodes' logs are what explains a failed run.
    this.dir =
        Path.of(System.getProperty("gateway.jar", "target/gateway.jar"))
            .toAbsolutePath()
            .getParent()
            .resolve("cluster-it")
            .resolve(database);
    Files.createDirectories(dir);
    this.journalUrl = SERVER.substring(0, SERVER.lastIndexOf('/') + 1) + database;
    try (Connection c = DriverManager.getConnection(SERVER, USER, "");
        Statement s = c.createStatement()) {
      s.execute("CREATE DATABASE " + database);
    }
  }

  /** Starts {@code count} nodes; the first two are the seeds. */
  static ClusterNodes start(Path dir, int count, Map<String, String> jvmProps) throws Exception {
    ClusterNodes cluster = new ClusterNodes(dir);
    int[] clusterPorts = new int[count];
    for (int i = 0; i < count; i++) {
      clusterPorts[i] = freePort();
    }
    cluster.seeds = "127.0.0.1:" + clusterPorts[0] + ",127.0.0.1:" + clusterPorts[1];
    cluster.jvmProps = jvmProps;
    for (int i = 0; i < count; i++) {
      cluster.nodes.add(cluster.startNode(i, clusterPorts[i], "node-" + i + ".log"));
    }
    return cluster;
  }

  /**
   * Starts {@code node} again (after it was killed or stopped) on its cluster port, with its data
   * directory and a log of its own; the node in {@link #nodes} is replaced.
   */
  Node restart(Node node) throws IOException {
    Node again =
        startNode(
            node.index(),
            node.clusterPort(),
            "node-" + node.index() + "-restart-" + System.nanoTime() + ".log");
    nodes.set(node.index(), again);
    return again;
  }

  private Node startNode(int index, int clusterPort, String logName) throws IOException {
    int httpPort = freePort();
    String jar = System.getProperty("gateway.jar", "target/gateway.jar");
    Path root = Path.of(jar).toAbsolutePath().getParent().getParent().getParent();
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    // Three JVMs and the test share a small machine: a small heap and a quick start are plenty
    // here.
    cmd.add("-Xmx384m");
    cmd.addAll(QuickStart.gatewayOptions());
    cmd.add("-Dconfig.file=" + root.resolve("conf/application.conf"));
    cmd.add("-Dlogback.configurationFile=" + root.resolve("conf/logback.xml"));
    jvmProps.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
    cmd.add("-jar");
    cmd.add(jar);
    Path log = dir.resolve(logName);
    ProcessBuilder pb =
        new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
    Map<String, String> env = pb.environment();
    env.put("GATEWAY_TOKEN", TOKEN);
    env.put("GATEWAY_HOST", "127.0.0.1");
    env.put("GATEWAY_PORT", Integer.toString(httpPort));
    env.put("GATEWAY_DATA_DIR", dir.resolve("data-" + index).toString());
    env.put("GATEWAY_CLUSTER_PORT", Integer.toString(clusterPort));
    env.put("GATEWAY_CLUSTER_SEEDS", seeds);
    env.put("GATEWAY_JOURNAL_URL", journalUrl);
    env.put("GATEWAY_JOURNAL_USER", USER);
    return new Node(index, pb.start(), "http://127.0.0.1:" + httpPort, clusterPort, log);
  }

  void awaitReady(Duration max) throws Exception {
    long deadline = System.nanoTime() + max.toNanos();
    for (Node node : nodes) {
      try {
        Eventually.until(
            "node " + node.index() + " is ready",
            Duration.ofNanos(Math.max(0, deadline - System.nanoTime())),
            () -> {
              assertTrue(
                  node.process().isAlive(),
                  "node " + node.index() + " exited early: " + tail(node));
              return status(node.base() + "/readyz") == 200;
            });
      } catch (AssertionError notReady) {
        throw new AssertionError(notReady.getMessage() + ": " + tail(node), notReady);
      }
    }
  }

  /** The node that holds the ledger now: the one that started it last among those alive. */
  Node ledgerNode(Duration max) {
    return Eventually.until(
            "a node alive has started the ledger",
            max,
            () -> {
              Optional<Node> holder = Optional.empty();
              for (Node n : nodes) {
                if (n.process().isAlive() && n.startedLedger()) {
                  holder = Optional.of(n);
                }
              }
              return holder;
            },
            Optional::isPresent)
        .orElseThrow();
  }

  static int status(String url) {
    try {
      return HTTP.send(
              HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(3)).build(),
              HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (IOException | InterruptedException e) {
      return -1;
    }
  }

  /** {@code path} on {@code node} with the gateway token, once it answers 200 (within 20 s). */
  static String get(Node node, String path) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(node.base() + path))
            .timeout(Duration.ofSeconds(15))
            .header("x-api-key", TOKEN)
            .build();
    return Eventually.until(
            "node " + node.index() + " answers " + path + " with 200",
            Duration.ofSeconds(20),
            () -> HTTP.send(request, HttpResponse.BodyHandlers.ofString()),
            r -> r.statusCode() == 200)
        .body();
  }

  static String tail(Node node) {
    try {
      List<String> lines = node.logText().lines().toList();
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  /** How many journal rows contain {@code id} (the journal's CBOR keeps ids as plain UTF-8). */
  long journalRowsMentioning(String id) throws SQLException {
    try (Connection c = DriverManager.getConnection(journalUrl, USER, "");
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery(
                "SELECT count(*) FROM event_journal WHERE position(convert_to('"
                    + id
                    + "', 'UTF8') in event_payload) > 0")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** Every journal payload, to look ids up in memory (one query instead of one per id). */
  List<byte[]> journalPayloads() throws SQLException {
    List<byte[]> payloads = new ArrayList<>();
    try (Connection c = DriverManager.getConnection(journalUrl, USER, "");
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT event_payload FROM event_journal")) {
      while (rs.next()) {
        payloads.add(rs.getBytes(1));
      }
    }
    return payloads;
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @Override
  public void close() throws Exception {
    for (Node node : nodes) {
      node.process().destroy();
    }
    for (Node node : nodes) {
      if (!node.process().waitFor(30, TimeUnit.SECONDS)) {
        node.process().destroyForcibly();
      }
    }
    try (Connection c = DriverManager.getConnection(SERVER, USER, "");
        Statement s = c.createStatement()) {
      s.execute("DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
    }
  }
}
