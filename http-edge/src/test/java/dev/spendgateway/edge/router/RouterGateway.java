package dev.spendgateway.edge.router;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.sim.SimConfig;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * The router suite's {@link TestGateway}: one of the {@code router/*.conf} files (tiny waits, a
 * high breaker threshold, the fake keys), the simulator's default answers, an in-memory journal;
 * and what the router tests send and read: a routed chat call with the spend headers, and each
 * attempt's ledger entry as its access line tells it.
 */
final class RouterGateway {
  /** As set in {@code router/router-test.conf}. */
  static final String TOKEN = "router-test-token";

  private RouterGateway() {}

  /** A gateway on {@code confResource} (one of {@code router/*.conf}) for one test class. */
  static TestGateway start(String confResource, String name) throws Exception {
    return TestGateway.start(
        new TestGateway.Suite(confResource, "router", SimConfig.defaults()).withJournalInMemory(),
        name);
  }

  /** The spend headers every routed call carries (app lane, generous brand caps). */
  static Map<String, String> spendHeaders(String requestId) {
    Map<String, String> h = new LinkedHashMap<>();
    h.put("authorization", "Bearer " + TOKEN);
    h.put("x-spend-lane", "app");
    h.put("x-spend-brand", "brand-router");
    h.put("x-spend-brand-monthly-usd", "100000");
    h.put("x-spend-brand-daily-usd", "10000");
    h.put("x-request-id", requestId);
    return h;
  }

  /** A chat request naming {@code profile}; small max_tokens keeps reservations small. */
  static String chat(String profile, boolean stream) {
    return "{\"model\":\""
        + profile
        + "\",\"max_tokens\":64,\"stream\":"
        + stream
        + ",\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Say hello.\"}]}";
  }

  /** A routed chat call; the long timeout covers a retried call's whole attempt budget. */
  static HttpRequest request(TestGateway gw, String body, Map<String, String> headers) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(gw.base + "/v1/chat/completions"))
            .timeout(Duration.ofSeconds(60))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    headers.forEach(b::header);
    return b.build();
  }

  static HttpResponse<String> post(TestGateway gw, String body, Map<String, String> headers) {
    try {
      return gw.send(request(gw, body, headers));
    } catch (IOException | InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  static CompletableFuture<HttpResponse<String>> postAsync(
      TestGateway gw, String body, Map<String, String> headers) {
    return postAsync(gw, gw.http, body, headers);
  }

  /** On a given client (a storm uses a fresh one, so no pooled keep-alive connection is reused). */
  static CompletableFuture<HttpResponse<String>> postAsync(
      TestGateway gw, HttpClient client, String body, Map<String, String> headers) {
    return client.sendAsync(request(gw, body, headers), HttpResponse.BodyHandlers.ofString());
  }

  /** The whole /usage answer. */
  static JsonNode usage(TestGateway gw) {
    try {
      return TestGateway.JSON.readTree(gw.usageText());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** The test's own pace (e.g. past a breaker's reset timeout), not a wait for an event. */
  static void pause(long ms) {
    try {
      Thread.sleep(ms); // time is the point: the pace the caller of pause names
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // --- the access log, as ledger entries ---------------------------------------------------------

  /** One attempt's line: where it went, its status, and how its reservation was closed. */
  record Entry(
      Instant at,
      String provider,
      int status,
      BigDecimal reserved,
      BigDecimal settled,
      String error,
      boolean failover) {
    /** {@code zero}, {@code worst} (settled at the reservation), or {@code actual} (in between). */
    String settlement() {
      if (settled == null) {
        return "open";
      }
      if (settled.signum() == 0) {
        return "zero";
      }
      return settled.compareTo(reserved) == 0 ? "worst" : "actual";
    }

    /** e.g. {@code openai:429:zero}. */
    String brief() {
      return provider + ":" + status + ":" + settlement();
    }
  }

  /**
   * The attempts (lines with a reservation) of a request id, in attempt order: waits for {@code
   * expected}, then until the access log has caught up with every call made so far, so a surplus
   * line (a bug) is there before the caller compares.
   */
  static List<Entry> attempts(TestGateway gw, String requestId, int expected) {
    try {
      Eventually.until(
          "the access log has " + expected + " attempts of " + requestId,
          Duration.ofSeconds(10),
          () -> entries(gw, requestId),
          seen -> seen.size() >= expected);
      gw.awaitAccessLogCaughtUp();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    return entries(gw, requestId);
  }

  /** The attempts logged so far for a request id, in attempt order, without waiting. */
  static List<Entry> entries(TestGateway gw, String requestId) {
    List<Entry> out = new ArrayList<>();
    for (JsonNode n : gw.logs.accessLines()) {
      if (requestId.equals(n.path("request_id").asText()) && !n.path("reserved_usd").isNull()) {
        out.add(
            new Entry(
                Instant.parse(n.path("time").asText()),
                n.path("provider").asText(),
                n.path("status").asInt(),
                new BigDecimal(n.path("reserved_usd").asText()),
                n.path("settled_usd").isNull()
                    ? null
                    : new BigDecimal(n.path("settled_usd").asText()),
                n.path("error").isNull() ? null : n.path("error").asText(),
                n.path("failover").asBoolean()));
      }
    }
    out.sort(Comparator.comparing(Entry::at));
    return out;
  }
}
