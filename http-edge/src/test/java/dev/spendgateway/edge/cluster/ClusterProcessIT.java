package dev.spendgateway.edge.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.cluster.ClusterNodes.Node;
import dev.spendgateway.edge.testkit.Eventually;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Three gateway processes in one cluster over one PostgreSQL journal, hammered through all three
 * with a brand cap that fits exactly N reservations: exactly N are accepted in total, also when the
 * node holding the ledger is killed (kill -9) mid-hammer and when the next one is stopped (SIGTERM)
 * with calls in flight; every acknowledged reservation is in the journal, every node answers every
 * id the same way, and each take-over's recovery starts from its node's warm standby instead of
 * replaying the books. The hand-over times are written to target/cluster-handover.txt.
 */
@ResourceLock(ClusterNodes.LOCK)
class ClusterProcessIT {
  /** Each reservation is one cent; the brand's caps fit exactly {@code FITS} of them. */
  private static final String CENT = "0.01";

  private static final int FITS = 150;
  private static final int IDS = 240;
  private static final Duration HAMMER_MAX = Duration.ofMinutes(3);

  @TempDir Path dir;

  @Test
  void aClusterNodeWithoutAPostgresJournalRefusesToStartWithOneClearLine() throws Exception {
    String jar = System.getProperty("gateway.jar", "target/gateway.jar");
    Path root = Path.of(jar).toAbsolutePath().getParent().getParent().getParent();
    Path out = dir.resolve("refusal.txt");
    ProcessBuilder pb =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Dconfig.file=" + root.resolve("conf/application.conf"),
                "-jar",
                jar)
            .redirectErrorStream(true)
            .redirectOutput(out.toFile());
    pb.environment().put("GATEWAY_TOKEN", "t");
    pb.environment().put("GATEWAY_DATA_DIR", dir.resolve("data").toString());
    pb.environment().put("GATEWAY_CLUSTER_PORT", Integer.toString(ClusterNodes.freePort()));
    pb.environment().put("GATEWAY_CLUSTER_SEEDS", "127.0.0.1:1");
    pb.environment().remove("GATEWAY_JOURNAL_URL");
    Process node = pb.start();
    assertTrue(node.waitFor(60, TimeUnit.SECONDS));
    assertFalse(node.exitValue() == 0, "refuses to start");
    String printed = Files.readString(out, StandardCharsets.UTF_8).strip();
    assertTrue(printed.contains("GATEWAY_JOURNAL_URL"), printed);
    assertEquals(1, printed.lines().count(), "one clear line: " + printed);
  }

  @Test
  void exactlyNAcceptedThroughThreeNodesAcrossAKillAndAGracefulHandOver() throws Exception {
    long started = System.nanoTime();
    try (ClusterNodes cluster = ClusterNodes.start(dir, 3, Map.of())) {
      cluster.awaitReady(Duration.ofMinutes(3));
      List<String> report = new ArrayList<>();
      report.add("three nodes ready " + secondsSince(started) + " s after their start");

      // 1. kill -9 of the node holding the ledger, a third of the way through, once the other two
      // keep a warm standby of its state (the take-over must start from it, not replay the books).
      Node first = cluster.ledgerNode(Duration.ofSeconds(30));
      for (Node other : cluster.nodes) {
        if (other != first) {
          awaitLog(other, STANDBY_CAUGHT_UP, Duration.ofSeconds(90));
          String metrics = ClusterNodes.get(other, "/metrics");
          assertTrue(
              metrics.lines().anyMatch("gateway_ledger_standby_following 1.0"::equals), metrics);
        }
      }
      LedgerHammer crash = new LedgerHammer(cluster.nodes, "crash", CENT, capFor(FITS));
      crash.run(
          IDS,
          12,
          HAMMER_MAX,
          IDS / 3,
          () -> {
            crash.markEvent();
            first.process().destroyForcibly(); // SIGKILL
          });
      assertFalse(first.process().isAlive());
      crash.checkBooks(cluster, IDS, FITS);
      report.add(handOverLine("kill -9", crash));
      report.add(
          "kill -9 phase, hammer and checks, done " + secondsSince(started) + " s after the start");

      // 2. SIGTERM of the node now holding the ledger, with calls in flight.
      Node second = cluster.ledgerNode(Duration.ofSeconds(60));
      assertTrue(second != first, "the ledger moved to another node");
      assertTrue(second.logText().contains(FROM_STANDBY), ClusterNodes.tail(second));
      List<Node> alive = cluster.nodes.stream().filter(n -> n.process().isAlive()).toList();
      LedgerHammer graceful = new LedgerHammer(alive, "graceful", CENT, capFor(FITS));
      // New ids keep coming until the stopped node has handed the ledger over and exited.
      graceful.run(
          IDS,
          12,
          HAMMER_MAX,
          IDS / 3,
          () -> {
            graceful.markEvent();
            second.process().destroy(); // SIGTERM
          },
          () -> !second.process().isAlive());
      assertTrue(second.process().waitFor(60, TimeUnit.SECONDS), "the stopped node exits");
      assertEquals(0, second.process().exitValue(), "a graceful leave exits 0");
      assertTrue(second.logText().contains("ledger handing over"), ClusterNodes.tail(second));
      Node third = cluster.ledgerNode(Duration.ofSeconds(60));
      assertTrue(third.logText().contains(FROM_STANDBY), ClusterNodes.tail(third));
      graceful.checkBooks(cluster, IDS, FITS);
      report.add(handOverLine("SIGTERM", graceful));
      report.add(
          "SIGTERM phase, hammer and checks, done " + secondsSince(started) + " s after the start");

      Path out =
          Path.of(System.getProperty("gateway.jar", "target/gateway.jar"))
              .toAbsolutePath()
              .getParent()
              .resolve("cluster-handover.txt");
      Files.write(out, report, StandardCharsets.UTF_8);
      report.forEach(System.out::println);
    }
  }

  /** A node's log line once its warm standby follows the journal. */
  private static final String STANDBY_CAUGHT_UP = "ledger standby caught up";

  /** The new ledger's log line when its recovery starts from its node's standby. */
  private static final String FROM_STANDBY = "ledger recovery starts from this node's standby";

  private static void awaitLog(Node node, String line, Duration max) throws Exception {
    try {
      Eventually.until(
          "node " + node.index() + " logs '" + line + "'",
          max,
          () -> node.logText().contains(line));
    } catch (AssertionError never) {
      throw new AssertionError(never.getMessage() + "\n" + ClusterNodes.tail(node), never);
    }
  }

  /**
   * One line for target/cluster-handover.txt and the test's output: first refusal (a 503, or the
   * dead node refusing the connection) to the ledger's first decision on a call sent after it, the
   * signal to that decision, and the machine's load average then (the figures stretch with it).
   */
  private static String handOverLine(String signal, LedgerHammer hammer) throws Exception {
    String load = Files.readString(Path.of("/proc/loadavg"), StandardCharsets.UTF_8).split(" ")[0];
    return signal
        + " of the ledger's node: first 503 to the ledger deciding again (201/402) "
        + hammer.handOver().toMillis()
        + " ms; "
        + signal
        + " to that decision "
        + hammer.sinceEvent().toMillis()
        + " ms ("
        + hammer.unavailable.get()
        + " calls answered 503 meanwhile; load average "
        + load
        + ")";
  }

  private static String secondsSince(long nanos) {
    return String.format("%.1f", (System.nanoTime() - nanos) / 1e9);
  }

  /** Caps ("brandDailyUsd", "brandMonthlyUsd") that fit exactly {@code n} one-cent reservations. */
  private static String capFor(int n) {
    return LedgerHammer.capFor(CENT, n);
  }
}
