package dev.spendgateway.edge.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.spendgateway.edge.cluster.ClusterNodes.Node;
import dev.spendgateway.edge.testkit.Eventually;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * The alert webhook in a cluster: three gateway processes over one PostgreSQL journal, spend
 * settled through two of them, and each threshold reaches the receiver once while its sender lives
 * — also after the node running the alert outbox is killed (kill -9) and another takes it over,
 * where the one POST in flight at the kill may come again under its own delivery id.
 */
@ResourceLock(ClusterNodes.LOCK)
class ClusterAlertsIT {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String BRAND = "alert-brand";

  /** The alert outbox singleton, as the node starting it logs it. */
  private static final class BudgetAlertsSingleton {
    static final String NAME = "singletonManageralert-outbox";
  }

  @TempDir Path dir;

  /** One POST the receiver took: its delivery id and body. */
  private record Delivery(String id, JsonNode body) {}

  @Test
  void eachThresholdIsSentOnceByOneNodeAlsoAcrossAKillOfThatNode() throws Exception {
    List<Delivery> received = new CopyOnWriteArrayList<>();
    HttpServer receiver = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    receiver.createContext(
        "/hook",
        exchange -> {
          String body =
              new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
          received.add(
              new Delivery(
                  exchange.getRequestHeaders().getFirst("x-gateway-delivery"),
                  JSON.readTree(body)));
          exchange.sendResponseHeaders(200, -1);
          exchange.close();
        });
    receiver.start();
    Map<String, String> props =
        Map.of(
            "alerts.webhook.url",
            "http://127.0.0.1:" + receiver.getAddress().getPort() + "/hook",
            "alerts.webhook.secret",
            "cluster-alert-secret",
            "alerts.check-interval",
            "1s");
    // Three nodes: after a kill the two left are a majority and keep going (two would down both).
    try (ClusterNodes cluster = ClusterNodes.start(dir, 3, props)) {
      cluster.awaitReady(Duration.ofMinutes(3));
      Node a = cluster.nodes.get(0);
      Node b = cluster.nodes.get(1);

      // $0.30 through each node of a $1.00 day: 60 % crosses 50 %.
      spend(a, "s-1", "0.30");
      spend(b, "s-2", "0.30");
      awaitThreshold(received, "0.5");
      // 90 % crosses 80 %: by the time it arrives, both nodes have checked many times since the
      // first, so a second sender would have sent 50 % again.
      spend(b, "s-3", "0.30");
      awaitThreshold(received, "0.8");
      assertOncePerKey(received);

      // The node running the outbox dies (singletons run on the oldest node: the ledger's too);
      // the other takes it over.
      Node holder = cluster.ledgerNode(Duration.ofSeconds(30));
      Node survivor = holder == a ? b : a;
      assertTrue(holder.logText().contains(BudgetAlertsSingleton.NAME), ClusterNodes.tail(holder));
      holder.process().destroyForcibly();
      // Answered once the cluster has downed the dead node and the ledger runs elsewhere.
      spend(survivor, "s-4", "0.10");
      awaitThreshold(received, "1.0");
      // A POST that reached the receiver just before the kill may not have had its "delivered"
      // journaled: the new outbox sends it again, under the same delivery id (the receiver drops
      // it by that id). What must never happen is a second id for one threshold: a second sender,
      // or an alert raised twice.
      assertOneIdPerThreshold(received, 3);
    } finally {
      receiver.stop(0);
    }
  }

  /** Reserves and settles {@code usd} on BRAND's caps ($1 a day) through {@code node}. */
  private static void spend(Node node, String id, String usd) {
    Eventually.until(
        "node " + node.index() + " reserves and settles " + id,
        Duration.ofMinutes(3),
        () ->
            post(
                        node,
                        "/ledger/reservations",
                        "{\"id\":\""
                            + id
                            + "\",\"lane\":\"app\",\"brand\":\""
                            + BRAND
                            + "\",\"amountUsd\":"
                            + usd
                            + ",\"brandDailyUsd\":1,\"brandMonthlyUsd\":100}")
                    == 201
                && post(
                        node,
                        "/ledger/reservations/" + id + "/settle",
                        "{\"actualUsd\":" + usd + "}")
                    == 200);
  }

  /**
   * The status, or -1 when the connection broke (a kept-alive connection the node closed, a node
   * still taking the ledger over): the caller retries the same id, which the ledger answers alike.
   */
  private static int post(Node node, String path, String body) throws Exception {
    try {
      return send(node, path, body);
    } catch (java.io.IOException broken) {
      return -1;
    }
  }

  private static int send(Node node, String path, String body) throws Exception {
    return ClusterNodes.HTTP
        .send(
            HttpRequest.newBuilder(URI.create(node.base() + path))
                .timeout(Duration.ofSeconds(10))
                .header("x-api-key", ClusterNodes.TOKEN)
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.discarding())
        .statusCode();
  }

  private static void awaitThreshold(List<Delivery> received, String threshold) {
    Eventually.until(
        "the receiver got brand_daily " + threshold,
        Duration.ofMinutes(1),
        () ->
            received.stream()
                .anyMatch(
                    d ->
                        d.body().path("cap").asText().equals("brand_daily")
                            && d.body().path("subject").asText().equals(BRAND)
                            && d.body()
                                    .path("threshold")
                                    .decimalValue()
                                    .compareTo(new java.math.BigDecimal(threshold))
                                == 0));
  }

  /**
   * Each of {@code thresholds} thresholds was raised once: one delivery id each, whatever the
   * number of attempts that carried it.
   */
  private static void assertOneIdPerThreshold(List<Delivery> received, int thresholds) {
    Map<String, java.util.Set<String>> idsByThreshold = new TreeMap<>();
    received.forEach(
        d ->
            idsByThreshold
                .computeIfAbsent(
                    d.body().path("cap").asText()
                        + "/"
                        + d.body().path("subject").asText()
                        + "/"
                        + d.body().path("window").asText()
                        + "/"
                        + d.body().path("threshold").decimalValue().stripTrailingZeros(),
                    k -> new java.util.TreeSet<>())
                .add(d.id()));
    assertEquals(thresholds, idsByThreshold.size(), idsByThreshold.toString());
    idsByThreshold.forEach(
        (key, ids) -> assertEquals(1, ids.size(), key + " was raised under " + ids));
  }

  /** Every delivery id arrived once: no node sent what another had sent. */
  private static void assertOncePerKey(List<Delivery> received) {
    Map<String, Integer> byId = new TreeMap<>();
    received.forEach(d -> byId.merge(d.id(), 1, Integer::sum));
    byId.forEach((id, n) -> assertEquals(1, n, "delivery " + id + " arrived " + n + " times"));
  }
}
