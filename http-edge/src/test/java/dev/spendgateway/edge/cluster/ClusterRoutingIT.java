package dev.spendgateway.edge.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.cluster.ClusterNodes.Node;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.ProviderSimulator;
import dev.spendgateway.sim.SimConfig;
import dev.spendgateway.sim.SimRoute;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * Three gateway processes in one cluster behave as one gateway towards the providers: a model one
 * node saw retired is refused on every node within 2 s, a conversation that switched on one node
 * stays switched on the others and on that node after it was killed and restarted, a node cut off
 * from the others is downed while they keep serving and comes back knowing what they did, and a
 * storm through all three nodes sends no more than the configured requests a minute in total. One
 * cluster (and one provider simulator in this JVM) serves every case, in order: the partition case
 * reuses it rather than starting three more JVMs.
 */
@ResourceLock(ClusterNodes.LOCK)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterRoutingIT {
  /** The cluster's Anthropic requests a minute: 10 per node while three are up. */
  private static final int ANTHROPIC_RPM = 30;

  private static final String BRAND = "routing-it";

  /** The brand the partition's reservations go to; its caps fit exactly {@link #FITS} cents. */
  private static final String PARTITION_BRAND = "partition-it";

  private static final String CENT = "0.01";
  private static final int FITS = 60;
  private static final int IDS = 90;

  /** The singleton's log line on the node where the ledger starts. */
  private static final String LEDGER_STARTED = "Singleton manager starting singleton actor";

  /** A second model retired during the partition (the first was retired by the first case). */
  private static final String RETIRED_TOO =
      "{\"model\":\"gpt-6-sol\",\"max_completion_tokens\":32,"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

  private static final String RETIRED =
      "{\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":32,"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
  private static final String ROUTED =
      "{\"model\":\"fast-summary\",\"max_tokens\":32,"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"Say hello.\"}]}";
  private static final String CLAUDE =
      "{\"model\":\"claude-haiku-5-5\",\"max_tokens\":32,"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";

  private ProviderSimulator sim;
  private ClusterNodes cluster;
  private Path dir;

  @BeforeAll
  void startCluster() throws Exception {
    dir = Files.createTempDirectory("cluster-routing-it");
    sim = ProviderSimulator.start(SimConfig.defaults());
    cluster =
        ClusterNodes.start(
            dir,
            3,
            Map.of(
                "providers.openai.base-url", sim.baseUrl(),
                "providers.anthropic.base-url", sim.baseUrl(),
                "providers.openai.api-key", "sk-openai-cluster-it",
                "providers.anthropic.api-key", "sk-ant-cluster-it",
                "failover.rate-limits.anthropic.requests-per-minute",
                    Integer.toString(ANTHROPIC_RPM),
                "failover.rate-limits.anthropic.tokens-per-minute", "0",
                // A call over the limit is refused at once rather than waiting its turn.
                "failover.rate-limits.max-wait", "100ms",
                // The conversation must stay switched because the switch is shared, not because
                // the primary's failures opened its breaker for the cluster.
                "failover.breaker.max-failures", "1000",
                // A cut-off node is downed 2 s after the detector's verdict instead of 4 s: the
                // partition case's wait. The failure detector keeps its production margins (three
                // JVMs starting on a small machine must not be found silent by mistake).
                "cluster-node.pekko.cluster.split-brain-resolver.stable-after", "2s"));
    cluster.awaitReady(Duration.ofMinutes(3));
  }

  @AfterAll
  void stopCluster() throws Exception {
    try {
      if (cluster != null) {
        // A node a failed partition case left frozen would take its whole stop timeout to go.
        for (Node node : cluster.nodes) {
          if (node.process().isAlive()) {
            signal(node, "CONT");
          }
        }
        cluster.close();
      }
    } finally {
      if (sim != null) {
        sim.close();
      }
    }
  }

  @Test
  @Order(1)
  void aModelRetiredOnOneNodeIsRefusedOnEveryNodeWithinTwoSeconds() throws Exception {
    Node a = cluster.nodes.get(0);
    sim.script(SimRoute.OPENAI_CHAT, Fault.status(410));

    HttpResponse<String> gone = send(a, "/openai/v1/chat/completions", RETIRED, Map.of());
    long answered = System.nanoTime();
    assertEquals(410, gone.statusCode(), gone.body());

    for (Node other : cluster.nodes.subList(1, 3)) {
      awaitRefused(other, RETIRED, answered);
    }
    Duration took = Duration.ofNanos(System.nanoTime() - answered);
    System.out.println(
        "retired model refused on every node " + took.toMillis() + " ms after the 410");
    assertTrue(took.compareTo(Duration.ofSeconds(2)) <= 0, "within 2 s: " + took);
  }

  @Test
  @Order(2)
  void aConversationSwitchedOnOneNodeStaysSwitchedElsewhereAndAfterThatNodeRestarts()
      throws Exception {
    Node ledger = cluster.ledgerNode(Duration.ofSeconds(30));
    // The node that switches is one that does not hold the ledger: killing it moves nothing.
    Node a = cluster.nodes.stream().filter(n -> n != ledger).reduce((x, y) -> y).orElseThrow();
    Node c = cluster.nodes.stream().filter(n -> n != a).findFirst().orElseThrow();
    String conversation = "conv-" + UUID.randomUUID();
    double heldOnC = switchedOn(c);

    switchToFallback(a, conversation);
    int openAiCalls = sim.received(SimRoute.OPENAI_CHAT).size();

    // The switch reaches the other nodes within a fraction of a second (a write to every node,
    // applied at the next notify-subscribers-interval); the kill comes once C holds it.
    Eventually.until(
        "node " + c.index() + " holds the switch",
        Duration.ofSeconds(2),
        () -> switchedOn(c) > heldOnC);
    a.process().destroyForcibly(); // kill -9: nothing it held in memory survives
    assertTrue(a.process().waitFor(30, TimeUnit.SECONDS));

    HttpResponse<String> onC =
        send(c, "/v1/chat/completions", ROUTED, Map.of("x-conversation-id", conversation));
    assertEquals(200, onC.statusCode(), onC.body());
    assertEquals("claude-haiku-5-5", model(onC), "stays switched on another node");

    Node again = cluster.restart(a);
    cluster.awaitReady(Duration.ofMinutes(3));
    HttpResponse<String> onRestarted =
        send(again, "/v1/chat/completions", ROUTED, Map.of("x-conversation-id", conversation));
    assertEquals(200, onRestarted.statusCode(), onRestarted.body());
    assertEquals(
        "claude-haiku-5-5", model(onRestarted), "stays switched on the node that restarted");
    assertEquals(
        openAiCalls,
        sim.received(SimRoute.OPENAI_CHAT).size(),
        "OpenAI is healthy again, but the conversation never went back to it");
  }

  /**
   * A node cut off from the other two (frozen with SIGSTOP: it stops answering heartbeats, as
   * behind a network cut, without root) is downed by the two after the failure detector and
   * stable-after; they keep serving: the ledger moves to one of them if it ran on the cut node, and
   * a 410 and a conversation switch one of them saw meanwhile hold on both. Woken up (SIGCONT), the
   * cut node learns it was downed and exits without serving a call on its stale state; started
   * again, it rejoins and holds that 410 and that switch before its /readyz turns 200. Through it
   * all, every reservation the ledger API acknowledged is kept, and no more than the cap fits. Runs
   * before the storm: the switch here needs the Anthropic budget the storm uses up.
   */
  @Test
  @Order(3)
  void aNodeCutOffIsDownedWhileTheOthersKeepServingAndItsReturnSeesWhatTheyDid() throws Exception {
    // The ledger's node is the one cut off: the hardest case, the ledger has to move.
    Node cut = cluster.ledgerNode(Duration.ofSeconds(30));
    List<Node> majority = cluster.nodes.stream().filter(n -> n != cut).toList();
    Node b = majority.get(0);
    Node c = majority.get(1);
    int[] logAtCut = new int[cluster.nodes.size()];
    LedgerHammer books =
        new LedgerHammer(
            cluster.nodes,
            PARTITION_BRAND,
            CENT,
            LedgerHammer.capFor(CENT, FITS),
            // Above ledger.ask-timeout (5 s): a call in flight to the frozen node is given up
            // after this and sent again, with the same id, to another node.
            Duration.ofSeconds(6));
    long[] cutAt = new long[1];
    // Reservations through all three nodes; a third of the way through, the cut. New ids keep
    // coming until the ledger decides again on the majority's side.
    books.run(
        IDS,
        8,
        Duration.ofMinutes(2),
        IDS / 3,
        () -> {
          try {
            for (Node n : cluster.nodes) {
              logAtCut[n.index()] = n.logText().length();
            }
            books.outOfRotation.add(cut.index());
            books.markEvent();
            cutAt[0] = System.nanoTime();
            signal(cut, "STOP");
          } catch (Exception e) {
            throw new IllegalStateException(e);
          }
        },
        () -> !books.sinceEvent().isZero());
    Duration ledgerBack = books.sinceEvent();
    assertFalse(ledgerBack.isZero(), "the ledger decides again on the majority's side");
    // The singleton moves only once the cut node is downed and removed: one of the two started it.
    assertTrue(
        majority.stream().anyMatch(n -> logSince(n, logAtCut).contains(LEDGER_STARTED)),
        "the ledger moved to the majority");
    for (Node n : majority) {
      assertTrue(
          logSince(n, logAtCut).contains("provider rate limits now shared by 2 nodes"),
          "node " + n.index() + " counts the cut node out: " + ClusterNodes.tail(n));
    }

    // Written on the majority while the cut node is away: a 410 on B, a switch on C.
    sim.script(SimRoute.OPENAI_CHAT, Fault.status(410));
    HttpResponse<String> gone = send(b, "/openai/v1/chat/completions", RETIRED_TOO, Map.of());
    long answered = System.nanoTime();
    assertEquals(410, gone.statusCode(), gone.body());
    awaitRefused(c, RETIRED_TOO, answered);
    String conversation = "conv-" + UUID.randomUUID();
    double heldOnB = switchedOn(b);
    switchToFallback(c, conversation);
    Eventually.until(
        "node " + b.index() + " holds the switch",
        Duration.ofSeconds(2),
        () -> switchedOn(b) > heldOnB);
    int openAiCalls = sim.received(SimRoute.OPENAI_CHAT).size();
    HttpResponse<String> onB =
        send(b, "/v1/chat/completions", ROUTED, Map.of("x-conversation-id", conversation));
    assertEquals(200, onB.statusCode(), onB.body());
    assertEquals("claude-haiku-5-5", model(onB), "the switch holds on the other majority node");

    // The cut node wakes up: downed by the others, it must exit without serving a call on its
    // stale state (it knows neither the 410 nor the switch, and its ledger was replaced).
    long resumedAt = System.nanoTime();
    signal(cut, "CONT");
    // Each round: ms since SIGCONT, its /readyz, a call to the model retired meanwhile, the
    // switched conversation.
    List<int[]> rounds = new ArrayList<>();
    Eventually.until(
        "the cut node exits",
        Duration.ofSeconds(30),
        () -> {
          rounds.add(
              new int[] {
                (int) Duration.ofNanos(System.nanoTime() - resumedAt).toMillis(),
                ClusterNodes.status(cut.base() + "/readyz"),
                statusOf(cut, "/openai/v1/chat/completions", RETIRED_TOO, Map.of()),
                statusOf(
                    cut, "/v1/chat/completions", ROUTED, Map.of("x-conversation-id", conversation))
              });
          return !cut.process().isAlive();
        });
    Duration toExit = Duration.ofNanos(System.nanoTime() - resumedAt);
    String seen =
        String.join(
            " ", rounds.stream().map(r -> r[1] + "/" + r[2] + "/" + r[3] + "@" + r[0]).toList());
    System.out.println(
        "cut node after SIGCONT (readyz/retired/switched@ms), until it exited: " + seen);
    assertTrue(
        cut.logText().contains("Node has been marked as DOWN"),
        "the woken node exits because it was downed: " + ClusterNodes.tail(cut));
    assertEquals(
        openAiCalls,
        sim.received(SimRoute.OPENAI_CHAT).size(),
        "the woken node sent nothing to the provider on its stale state");
    assertTrue(
        rounds.stream().noneMatch(r -> r[2] / 100 == 2 || r[3] / 100 == 2),
        "the woken node answered no call: " + seen);
    // Its /readyz may still say 200 from before the freeze in the instant before it hears it was
    // downed (the others tell it at their first exchange, well within a heartbeat interval of 1 s);
    // once it says not ready, it never says ready again.
    int firstNotReady = 0;
    while (firstNotReady < rounds.size() && rounds.get(firstNotReady)[1] == 200) {
      assertTrue(rounds.get(firstNotReady)[0] < 2000, "still ready 2 s after waking: " + seen);
      firstNotReady++;
    }
    for (int i = firstNotReady; i < rounds.size(); i++) {
      assertTrue(rounds.get(i)[1] != 200, "ready again after saying not ready: " + seen);
    }

    // Started again, it rejoins and knows what happened meanwhile as soon as it is ready.
    long restartedAt = System.nanoTime();
    Node again = cluster.restart(cut);
    cluster.awaitReady(Duration.ofMinutes(2));
    Duration toReady = Duration.ofNanos(System.nanoTime() - restartedAt);
    HttpResponse<String> retired =
        send(again, "/openai/v1/chat/completions", RETIRED_TOO, Map.of());
    assertEquals(
        410, retired.statusCode(), "the 410 holds on the rejoined node: " + retired.body());
    HttpResponse<String> stays =
        send(again, "/v1/chat/completions", ROUTED, Map.of("x-conversation-id", conversation));
    assertEquals(200, stays.statusCode(), stays.body());
    assertEquals("claude-haiku-5-5", model(stays), "the switch holds on the rejoined node");
    assertEquals(
        openAiCalls, sim.received(SimRoute.OPENAI_CHAT).size(), "nothing went back to OpenAI");

    books.checkBooks(cluster, IDS, FITS);
    books.settleAcceptedAndCheckSpend(cluster, cluster.nodes);
    System.out.printf(
        "partition: cut to the ledger deciding again on the majority %d ms; SIGCONT to the cut"
            + " node's exit %d ms; its restart to /readyz 200 %d ms; whole step %d ms%n",
        ledgerBack.toMillis(),
        toExit.toMillis(),
        toReady.toMillis(),
        Duration.ofNanos(System.nanoTime() - cutAt[0]).toMillis());
  }

  @Test
  @Order(4)
  void aStormThroughEveryNodeSendsNoMoreThanTheClustersRateLimit() throws Exception {
    int perNode = 20;
    int reachedBefore = sim.received(SimRoute.ANTHROPIC_MESSAGES).size();
    long started = System.nanoTime();
    List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
    List<Integer> nodeOf = new ArrayList<>();
    for (int i = 0; i < perNode; i++) {
      for (Node node : cluster.nodes) {
        calls.add(
            ClusterNodes.HTTP.sendAsync(
                request(node, "/anthropic/v1/messages", CLAUDE, Map.of()),
                HttpResponse.BodyHandlers.ofString()));
        nodeOf.add(node.index());
      }
    }
    int[] okPerNode = new int[cluster.nodes.size()];
    int ok = 0;
    int limited = 0;
    for (int i = 0; i < calls.size(); i++) {
      HttpResponse<String> r = calls.get(i).get(60, TimeUnit.SECONDS);
      if (r.statusCode() == 200) {
        ok++;
        okPerNode[nodeOf.get(i)]++;
      } else if (r.statusCode() == 429) {
        limited++;
      } else {
        throw new AssertionError("unexpected " + r.statusCode() + ": " + r.body());
      }
    }
    double seconds = (System.nanoTime() - started) / 1e9;
    int reached = sim.received(SimRoute.ANTHROPIC_MESSAGES).size() - reachedBefore;
    // A minute's worth at the start, plus what refilled while the storm lasted.
    long allowed = ANTHROPIC_RPM + (long) Math.ceil(seconds * ANTHROPIC_RPM / 60.0);
    System.out.printf(
        "storm: %d calls through 3 nodes in %.1f s: %d sent (%d/%d/%d per node), %d refused 429;"
            + " the cluster may send %d%n",
        calls.size(), seconds, ok, okPerNode[0], okPerNode[1], okPerNode[2], limited, allowed);
    assertEquals(ok, reached, "every call answered 200 reached the provider, no other");
    assertTrue(ok <= allowed, ok + " sent, the cluster's limit allows " + allowed);
    for (int n = 0; n < okPerNode.length; n++) {
      assertTrue(okPerNode[n] > 0, "node " + n + " sent its share: " + okPerNode[n]);
    }
    assertFalse(limited == 0, "the storm was over the limit");
  }

  /**
   * {@code other} refuses {@code body}'s model (410) without reaching the provider, within 2 s of
   * the 410 answered at {@code answered} (System.nanoTime()).
   */
  private void awaitRefused(Node other, String body, long answered) {
    Duration left = Duration.ofSeconds(2).minusNanos(System.nanoTime() - answered);
    Eventually.until(
        "node " + other.index() + " refuses the retired model",
        left.isNegative() ? Duration.ZERO : left,
        () -> {
          int reached = sim.received(SimRoute.OPENAI_CHAT).size();
          HttpResponse<String> r = send(other, "/openai/v1/chat/completions", body, Map.of());
          return r.statusCode() == 410 && sim.received(SimRoute.OPENAI_CHAT).size() == reached;
        });
  }

  /** {@code conversation}'s call on {@code node} while OpenAI fails: it switches to Claude. */
  private void switchToFallback(Node node, String conversation) throws Exception {
    sim.scriptForever(SimRoute.OPENAI_CHAT, Fault.status(503));
    HttpResponse<String> switched;
    try {
      switched =
          send(node, "/v1/chat/completions", ROUTED, Map.of("x-conversation-id", conversation));
    } finally {
      sim.clearScripts();
    }
    assertEquals(200, switched.statusCode(), switched.body());
    assertEquals("claude-haiku-5-5", model(switched), "switched to the fallback");
  }

  /** Sends {@code signal} (STOP, CONT) to {@code node}'s process. */
  private static void signal(Node node, String signal) throws Exception {
    Process kill =
        new ProcessBuilder("kill", "-" + signal, Long.toString(node.process().pid()))
            .inheritIO()
            .start();
    assertTrue(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill -" + signal);
  }

  /** What {@code node} wrote to its log since {@code offsets} were taken. */
  private static String logSince(Node node, int[] offsets) {
    try {
      String text = node.logText();
      return text.substring(Math.min(offsets[node.index()], text.length()));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** The status of a call that gets 3 s to be answered; -1 when it is not (refused, timed out). */
  private static int statusOf(Node node, String path, String body, Map<String, String> headers) {
    HttpRequest.Builder b =
        requestBuilder(node, path, body, headers).timeout(Duration.ofSeconds(3));
    try {
      return ClusterNodes.HTTP.send(b.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (java.io.IOException | InterruptedException e) {
      return -1;
    }
  }

  /** The conversations {@code node} holds on their fallback, from its /metrics. */
  private static double switchedOn(Node node) throws Exception {
    HttpResponse<String> r =
        ClusterNodes.HTTP.send(
            HttpRequest.newBuilder(URI.create(node.base() + "/metrics"))
                .timeout(Duration.ofSeconds(10))
                .header("x-api-key", ClusterNodes.TOKEN)
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return r.body()
        .lines()
        .filter(l -> l.startsWith("gateway_router_conversations_switched "))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.indexOf(' ') + 1).trim()))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no gateway_router_conversations_switched"));
  }

  private static String model(HttpResponse<String> r) {
    return r.headers().firstValue("x-gateway-model").orElse("(none)");
  }

  private static HttpResponse<String> send(
      Node node, String path, String body, Map<String, String> headers) throws Exception {
    return ClusterNodes.HTTP.send(
        request(node, path, body, headers), HttpResponse.BodyHandlers.ofString());
  }

  private static HttpRequest request(
      Node node, String path, String body, Map<String, String> headers) {
    return requestBuilder(node, path, body, headers).build();
  }

  private static HttpRequest.Builder requestBuilder(
      Node node, String path, String body, Map<String, String> headers) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(node.base() + path))
            .timeout(Duration.ofSeconds(60))
            .header("content-type", "application/json")
            .header("x-api-key", ClusterNodes.TOKEN)
            .header("x-spend-lane", "app")
            .header("x-spend-brand", BRAND)
            .header("x-spend-brand-daily-usd", "1000")
            .header("x-spend-brand-monthly-usd", "10000")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    headers.forEach(b::header);
    return b;
  }
}
