package dev.spendgateway.ledger.cluster;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValueFactory;
import dev.spendgateway.ledger.journal.PostgresJournal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Whether this process is a cluster node, and the configuration that makes it one. Read from {@code
 * gateway.cluster.*} and {@code gateway.journal.url} (env {@code GATEWAY_CLUSTER_PORT}, {@code
 * GATEWAY_CLUSTER_SEEDS}, {@code GATEWAY_JOURNAL_URL}; conf/cluster.conf). With none of them set
 * the configuration is returned unchanged: one process, the embedded H2 journal.
 */
public final class ClusterMode {
  static final String PORT_KEY = "gateway.cluster.port";
  static final String SEEDS_KEY = "gateway.cluster.seeds";

  private ClusterMode() {}

  /** Whether {@code config} asks for a cluster node (a cluster port or seeds are set). */
  public static boolean requested(Config config) {
    return !text(config, PORT_KEY).isEmpty() || !text(config, SEEDS_KEY).isEmpty();
  }

  /**
   * Why this node must not start, as one line to print; empty when it may. A cluster node needs the
   * PostgreSQL journal: the ledger moves between nodes, and an H2 file on one node's disk would
   * give each node a ledger of its own (spend counted per node, caps overshot by the node count).
   */
  public static Optional<String> startupProblem(Config config) {
    if (!requested(config)) {
      return Optional.empty();
    }
    if (!PostgresJournal.requested(config)) {
      return Optional.of(
          "cluster mode (GATEWAY_CLUSTER_PORT/GATEWAY_CLUSTER_SEEDS) needs GATEWAY_JOURNAL_URL: "
              + "every node's ledger must use one PostgreSQL journal (jdbc:postgresql://host:port/database); an "
              + "embedded H2 journal per node would count spend per node and overshoot every cap");
    }
    String port = text(config, PORT_KEY);
    if (!port.matches("\\d{1,5}") || Integer.parseInt(port) < 1 || Integer.parseInt(port) > 65535) {
      return Optional.of(
          "GATEWAY_CLUSTER_PORT must be a TCP port (1-65535) for this node's cluster traffic, not '"
              + port
              + "'");
    }
    if (seeds(config).isEmpty()) {
      return Optional.of(
          "GATEWAY_CLUSTER_SEEDS is not set: list the seed nodes as host:port,host:port (this node "
              + "may be one of them)");
    }
    for (String seed : seeds(config)) {
      if (!seed.matches("[^:\\s]+:\\d{1,5}")) {
        return Optional.of("GATEWAY_CLUSTER_SEEDS: '" + seed + "' is not host:port");
      }
    }
    if (PostgresJournal.requested(config)
        && !config.getString(PostgresJournal.URL_KEY).startsWith("jdbc:postgresql:")) {
      return Optional.of(
          "GATEWAY_JOURNAL_URL must be a PostgreSQL JDBC URL (jdbc:postgresql://host:port/database)");
    }
    return Optional.empty();
  }

  /**
   * The configuration this process runs with: the PostgreSQL journal when a URL is set, and when
   * this is a cluster node, the {@code cluster-node} block of conf/cluster.conf with this node's
   * address and the seed nodes. Call {@link #startupProblem} first.
   *
   * @param systemName the actor system's name: part of every node's address, so all nodes must
   *     share it
   */
  public static Config configure(Config config, String systemName) {
    Config withJournal = PostgresJournal.select(config);
    if (!requested(config)) {
      return withJournal;
    }
    List<String> seedNodes = new ArrayList<>();
    for (String seed : seeds(config)) {
      seedNodes.add("pekko://" + systemName + "@" + seed);
    }
    Config node =
        config
            .getConfig("cluster-node")
            .withValue(
                "pekko.remote.artery.canonical.hostname",
                ConfigValueFactory.fromAnyRef(config.getString("gateway.host")))
            .withValue(
                "pekko.remote.artery.canonical.port",
                ConfigValueFactory.fromAnyRef(Integer.parseInt(text(config, PORT_KEY))))
            .withValue("pekko.cluster.seed-nodes", ConfigValueFactory.fromIterable(seedNodes));
    return node.withFallback(withJournal);
  }

  /**
   * Whether {@code config} (as {@link #configure} returned it) runs this process as a cluster node.
   */
  public static boolean isClusterNode(Config config) {
    return config.hasPath("pekko.actor.provider")
        && config.getString("pekko.actor.provider").equals("cluster");
  }

  static List<String> seeds(Config config) {
    return Arrays.stream(text(config, SEEDS_KEY).split(","))
        .map(String::trim)
        .filter(s -> !s.isEmpty())
        .toList();
  }

  private static String text(Config config, String key) {
    return config.hasPath(key) ? config.getString(key).trim() : "";
  }
}
