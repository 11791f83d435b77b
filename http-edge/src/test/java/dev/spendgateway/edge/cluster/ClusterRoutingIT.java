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
 * stays switched on the others and on that node after it was killed and restarted, and a storm
 * through all three nodes sends no more than the configured requests a minute in total. One cluster
 * (and one provider simulator in this JVM) serves every case, in order.
 */
@ResourceLock(ClusterNodes.LOCK)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterRoutingIT {
  /** The cluster's Anthropic requests a minute: 10 per node while three are up. */
  private static final int ANTHROPIC_RPM = 30;

  private static final String BRAND = "routing-it";
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
                "failover.breaker.max-failures", "1000"));
    cluster.awaitReady(Duration.ofMinutes(3));
  }

  @AfterAll
  void stopCluster() throws Exception {
    try {
      if (cluster != null) {
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
      Duration left = Duration.ofSeconds(2).minusNanos(System.nanoTime() - answered);
      Eventually.until(
          "node " + other.index() + " refuses the retired model",
          left.isNegative() ? Duration.ZERO : left,
          () -> {
            int reached = sim.received(SimRoute.OPENAI_CHAT).size();
            HttpResponse<String> r = send(other, "/openai/v1/chat/completions", RETIRED, Map.of());
            return r.statusCode() == 410 && sim.received(SimRoute.OPENAI_CHAT).size() == reached;
          });
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

    sim.scriptForever(SimRoute.OPENAI_CHAT, Fault.status(503));
    HttpResponse<String> switched;
    try {
      switched = send(a, "/v1/chat/completions", ROUTED, Map.of("x-conversation-id", conversation));
    } finally {
      sim.clearScripts();
    }
    assertEquals(200, switched.statusCode(), switched.body());
    assertEquals("claude-haiku-5-5", model(switched), "switched to the fallback");
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

  @Test
  @Order(3)
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
    return b.build();
  }
}
