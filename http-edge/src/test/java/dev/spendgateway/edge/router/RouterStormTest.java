package dev.spendgateway.edge.router;

import static dev.spendgateway.edge.router.RouterGateway.attempts;
import static dev.spendgateway.edge.router.RouterGateway.entries;
import static dev.spendgateway.edge.router.RouterGateway.post;
import static dev.spendgateway.edge.router.RouterGateway.postAsync;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.GatewayPerClass;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Storms: 500 concurrent routed calls while OpenAI answers 429 to everything, and an interactive
 * trickle during a batch flood. Budgets bound the upstream load; pools keep interactive calls out
 * of the batch queue.
 */
class RouterStormTest extends GatewayPerClass {
  private static final int CALLS = 500;
  private static final int INTERACTIVE_MAX_ATTEMPTS = 4;

  @Override
  protected TestGateway startGateway() throws Exception {
    return RouterGateway.start("router/storm-test.conf", "RouterStormTest");
  }

  @Test
  void a429StormStaysWithinTheAttemptBudgets() throws Exception {
    gw.sim.scriptForever(SimRoute.OPENAI_CHAT, Fault.status(429));
    gw.sim.setLatency(
        Duration.ofMillis(50)); // every call takes >= 150 ms: the 500 overlap in the gateway
    List<String> ids = new ArrayList<>();
    List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
    HttpClient storm = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    for (int i = 0; i < CALLS; i++) {
      String id = "storm-" + UUID.randomUUID();
      ids.add(id);
      calls.add(
          postAsync(
              gw,
              storm,
              RouterGateway.chat("fast-summary", false),
              RouterGateway.spendHeaders(id)));
    }
    Map<Integer, Integer> statuses = new TreeMap<>();
    for (CompletableFuture<HttpResponse<String>> c : calls) {
      statuses.merge(c.get().statusCode(), 1, Integer::sum);
    }

    assertEquals(Map.of(200, CALLS), statuses, "every call answered (by the fallback)");
    int openAi = gw.sim.received(SimRoute.OPENAI_CHAT).size();
    int claude = gw.sim.received(SimRoute.ANTHROPIC_MESSAGES).size();
    assertTrue(
        openAi + claude <= INTERACTIVE_MAX_ATTEMPTS * CALLS,
        "upstream attempts " + (openAi + claude));
    assertEquals(CALLS, claude, "one fallback attempt per call");
    assertTrue(openAi <= 2 * CALLS, "the primary gets at most half the budget: " + openAi);
    attempts(gw, ids.get(CALLS - 1), 3);
    for (String id : ids) {
      List<RouterGateway.Entry> attempts = entries(gw, id);
      assertTrue(
          attempts.size() <= INTERACTIVE_MAX_ATTEMPTS,
          id + " retried past its budget: " + attempts);
      assertEquals("anthropic:200:actual", attempts.get(attempts.size() - 1).brief());
    }
  }

  @Test
  void interactiveLatencyIsUnaffectedByABatchFlood() throws Exception {
    gw.sim.setLatency(Duration.ofMillis(40));
    long quiet = p50(interactiveLatencies(15));

    // 200 batch calls through a batch lane of 4 slots at 40 ms each: about 2 s of queue.
    int reachedBefore = gw.sim.received(SimRoute.OPENAI_CHAT).size();
    List<CompletableFuture<HttpResponse<String>>> flood = new ArrayList<>();
    HttpClient floodClient = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    for (int i = 0; i < 200; i++) {
      flood.add(
          postAsync(
              gw,
              floodClient,
              RouterGateway.chat("fast-summary", false),
              withPriority(RouterGateway.spendHeaders("flood-" + UUID.randomUUID()), "batch")));
    }
    // The flood is in once the lane's 4 slots have reached the provider: the rest queue behind
    // them.
    Eventually.until(
        "the flood reaches the provider",
        Duration.ofSeconds(20),
        () -> gw.sim.received(SimRoute.OPENAI_CHAT).size() >= reachedBefore + 4);
    long flooded = p50(interactiveLatencies(15));
    int stillQueued = (int) flood.stream().filter(f -> !f.isDone()).count();

    assertTrue(
        stillQueued > 50, "the flood was still queued while interactive calls ran: " + stillQueued);
    assertTrue(
        flooded < 3 * quiet + 100,
        "interactive p50 " + flooded + " ms during the flood vs " + quiet + " ms without");
    for (CompletableFuture<HttpResponse<String>> f : flood) {
      assertEquals(200, f.get().statusCode());
    }
  }

  private static Map<String, String> withPriority(Map<String, String> headers, String priority) {
    headers.put("x-priority", priority);
    return headers;
  }

  private List<Long> interactiveLatencies(int n) {
    List<Long> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long t0 = System.nanoTime();
      HttpResponse<String> r =
          post(
              gw,
              RouterGateway.chat("fast-summary", false),
              RouterGateway.spendHeaders("inter-" + UUID.randomUUID()));
      out.add((System.nanoTime() - t0) / 1_000_000);
      assertEquals(200, r.statusCode(), r.body());
      assertEquals("openai", r.headers().firstValue("x-gateway-provider").orElse(null));
    }
    return out;
  }

  private static long p50(List<Long> latencies) {
    List<Long> sorted = new ArrayList<>(latencies);
    sorted.sort(Long::compare);
    return sorted.get(sorted.size() / 2);
  }
}
