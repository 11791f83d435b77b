package dev.spendgateway.edge.router;

import static org.junit.jupiter.api.Assertions.fail;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.edge.Gateway;
import dev.spendgateway.sim.ProviderSimulator;
import dev.spendgateway.sim.SimConfig;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.slf4j.LoggerFactory;

/**
 * One gateway plus one provider simulator for a router test class: the real composition root
 * ({@link Gateway#start}) on the real conf, pointed at the simulator, with an in-memory ledger.
 * Captures the access log so a test can read every attempt's ledger entry (reserved and settled).
 */
final class RouterHarness implements AutoCloseable {
  static final String TOKEN = "router-test-token";
  static final ObjectMapper JSON = new ObjectMapper();

  final ProviderSimulator sim;
  final ActorSystem<Void> system;
  final int port;
  final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  private final AccessCapture access = new AccessCapture();
  private final Path dataDir;

  private RouterHarness(ProviderSimulator sim, ActorSystem<Void> system, int port, Path dataDir) {
    this.sim = sim;
    this.system = system;
    this.port = port;
    this.dataDir = dataDir;
  }

  static RouterHarness start(String confResource) {
    ProviderSimulator sim = ProviderSimulator.start(SimConfig.defaults());
    try {
      Path dataDir = Files.createTempDirectory("router-test");
      String db = "router-" + UUID.randomUUID();
      Map<String, Object> overrides = new LinkedHashMap<>();
      overrides.put("providers.openai.base-url", sim.baseUrl());
      overrides.put("providers.anthropic.base-url", sim.baseUrl());
      overrides.put("providers.openai.api-key", "sk-test-openai");
      overrides.put("providers.anthropic.api-key", "sk-test-anthropic");
      overrides.put("gateway.data-dir", dataDir.toString());
      overrides.put(
          "pekko-persistence-jdbc.shared-databases.slick.db.url",
          "jdbc:h2:mem:" + db + ";DATABASE_TO_UPPER=false;DB_CLOSE_DELAY=-1");
      Config config =
          ConfigFactory.parseMap(overrides)
              .withFallback(ConfigFactory.parseResources(confResource))
              .withFallback(ConfigFactory.defaultReference())
              .resolve();
      ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "router-test", config);
      ServerBinding binding =
          Gateway.start(system, config, Clock.systemUTC()).toCompletableFuture().get(30, TimeUnit.SECONDS);
      RouterHarness h = new RouterHarness(sim, system, binding.localAddress().getPort(), dataDir);
      h.access.attach();
      h.awaitReady();
      return h;
    } catch (Exception e) {
      sim.close();
      throw new IllegalStateException("router test gateway did not start", e);
    }
  }

  private void awaitReady() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (System.nanoTime() < deadline) {
      HttpResponse<String> r = http.send(
          HttpRequest.newBuilder(URI.create(base() + "/readyz")).GET().build(), HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() == 200) {
        return;
      }
      Thread.sleep(50);
    }
    fail("gateway never became ready");
  }

  String base() {
    return "http://127.0.0.1:" + port;
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

  HttpRequest request(String body, Map<String, String> headers) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(base() + "/v1/chat/completions"))
            .timeout(Duration.ofSeconds(60))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    headers.forEach(b::header);
    return b.build();
  }

  HttpResponse<String> post(String body, Map<String, String> headers) {
    try {
      return http.send(request(body, headers), HttpResponse.BodyHandlers.ofString());
    } catch (IOException | InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  CompletableFuture<HttpResponse<String>> postAsync(String body, Map<String, String> headers) {
    return postAsync(http, body, headers);
  }

  /** On a given client (a storm uses a fresh one, so no pooled keep-alive connection is reused). */
  CompletableFuture<HttpResponse<String>> postAsync(HttpClient client, String body, Map<String, String> headers) {
    return client.sendAsync(request(body, headers), HttpResponse.BodyHandlers.ofString());
  }

  JsonNode usage() {
    try {
      HttpResponse<String> r = http.send(
          HttpRequest.newBuilder(URI.create(base() + "/usage")).header("authorization", "Bearer " + TOKEN).GET().build(),
          HttpResponse.BodyHandlers.ofString());
      return JSON.readTree(r.body());
    } catch (IOException | InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A chat request naming {@code profile}; small max_tokens keeps reservations small. */
  static String chat(String profile, boolean stream) {
    return "{\"model\":\"" + profile + "\",\"max_tokens\":64,\"stream\":" + stream
        + ",\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Say hello.\"}]}";
  }

  // --- the access log, as ledger entries ---------------------------------------------------------

  /** One attempt's line: where it went, its status, and how its reservation was closed. */
  record Entry(Instant at, String provider, int status, BigDecimal reserved, BigDecimal settled, String error, boolean failover) {
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

  /** Every access line of a request id. */
  List<JsonNode> lines(String requestId) {
    return access.lines(requestId);
  }

  /** The attempts (lines with a reservation) of a request id, in attempt order; waits for {@code expected}. */
  List<Entry> attempts(String requestId, int expected) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    List<Entry> out = entries(requestId);
    while (out.size() < expected && System.nanoTime() < deadline) {
      sleep(20);
      out = entries(requestId);
    }
    sleep(50); // let a surplus line (a bug) arrive before the caller compares
    return entries(requestId);
  }

  /** The attempts logged so far for a request id, in attempt order, without waiting. */
  List<Entry> entries(String requestId) {
    List<Entry> out = new ArrayList<>();
    for (JsonNode n : access.lines(requestId)) {
      if (!n.path("reserved_usd").isNull()) {
        out.add(new Entry(
            Instant.parse(n.path("time").asText()),
            n.path("provider").asText(),
            n.path("status").asInt(),
            new BigDecimal(n.path("reserved_usd").asText()),
            n.path("settled_usd").isNull() ? null : new BigDecimal(n.path("settled_usd").asText()),
            n.path("error").isNull() ? null : n.path("error").asText(),
            n.path("failover").asBoolean()));
      }
    }
    out.sort(Comparator.comparing(Entry::at));
    return out;
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    access.detach();
    system.terminate();
    try {
      system.getWhenTerminated().toCompletableFuture().get(20, TimeUnit.SECONDS);
    } catch (Exception e) {
      // best effort
    }
    sim.close();
    try (var files = Files.walk(dataDir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // temp dir; best effort
    }
  }

  /** Collects the {@code access} logger's JSON lines. */
  private static final class AccessCapture extends AppenderBase<ILoggingEvent> {
    private final ConcurrentLinkedQueue<JsonNode> lines = new ConcurrentLinkedQueue<>();

    void attach() {
      Logger logger = (Logger) LoggerFactory.getLogger("access");
      setContext(logger.getLoggerContext());
      start();
      logger.addAppender(this);
    }

    void detach() {
      ((Logger) LoggerFactory.getLogger("access")).detachAppender(this);
      stop();
    }

    @Override
    protected void append(ILoggingEvent event) {
      try {
        lines.add(JSON.readTree(event.getFormattedMessage()));
      } catch (IOException e) {
        // not an access line
      }
    }

    List<JsonNode> lines(String requestId) {
      List<JsonNode> out = new ArrayList<>();
      for (JsonNode n : lines) {
        if (requestId.equals(n.path("request_id").asText())) {
          out.add(n);
        }
      }
      return out;
    }
  }
}
