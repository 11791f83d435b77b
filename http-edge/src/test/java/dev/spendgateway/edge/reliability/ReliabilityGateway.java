package dev.spendgateway.edge.reliability;

import dev.spendgateway.edge.testkit.LogCapture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.edge.Gateway;
import dev.spendgateway.sim.ProviderSimulator;
import dev.spendgateway.sim.SimConfig;
import dev.spendgateway.sim.Usage;
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
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.ServerBinding;

/**
 * One in-process gateway ({@link Gateway#start}, the real composition root) in front of one provider
 * simulator, for a whole test class, with every log line captured. Adapted from the e2e harness
 * (package-private there) with {@code reliability/reliability-test.conf}: a short response-start
 * timeout and its own fake secrets.
 */
final class ReliabilityGateway implements AutoCloseable {
  static final String TOKEN = "gw-rel-token-5Tz81";
  static final String OPENAI_KEY = "sk-openai-rel-key-Q7n2";
  static final String ANTHROPIC_KEY = "sk-ant-rel-key-J9d4";

  static final String ANTHROPIC = "/anthropic/v1/messages";
  static final String CHAT = "/openai/v1/chat/completions";
  static final String RESPONSES = "/openai/v1/responses";
  static final String TRANSCRIPTIONS = "/openai/v1/audio/transcriptions";

  /**
   * What the simulator bills by default: odd numbers, so a wrong price or rounding shows, and small
   * enough to stay under the worst case of the suite's short bodies (so "actual" and "worst case"
   * differ in every row).
   */
  static final Usage USAGE = new Usage(11, 57, 0, 0, 1);

  static final ObjectMapper JSON =
      new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

  final ProviderSimulator sim;
  final LogCapture logs;
  final String base;
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final ActorSystem<Void> system;
  private final Path dataDir;

  private ReliabilityGateway(ProviderSimulator sim, LogCapture logs, ActorSystem<Void> system, Path dataDir, int port) {
    this.sim = sim;
    this.logs = logs;
    this.system = system;
    this.dataDir = dataDir;
    this.base = "http://127.0.0.1:" + port;
  }

  static ReliabilityGateway start(String name) throws Exception {
    return start(name, Map.of());
  }

  /** {@code overrides} win over everything, e.g. a provider base URL nobody listens on. */
  static ReliabilityGateway start(String name, Map<String, Object> overrides) throws Exception {
    LogCapture logs = LogCapture.attach();
    ProviderSimulator sim = ProviderSimulator.start(SimConfig.defaults().withUsage(USAGE));
    Path dataDir = Files.createTempDirectory("rel-" + name);
    Map<String, Object> values = new HashMap<>();
    values.put("gateway.port", 0);
    values.put("gateway.data-dir", dataDir.toString());
    values.put("providers.openai.base-url", sim.baseUrl());
    values.put("providers.anthropic.base-url", sim.baseUrl());
    values.putAll(overrides);
    Config config =
        ConfigFactory.parseMap(values)
            .withFallback(ConfigFactory.parseResources("reliability/reliability-test.conf"))
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "rel-" + name, config);
    ServerBinding binding =
        Gateway.start(system, config, Clock.systemUTC()).toCompletableFuture().get(30, TimeUnit.SECONDS);
    ReliabilityGateway gateway = new ReliabilityGateway(sim, logs, system, dataDir, binding.localAddress().getPort());
    gateway.awaitReady();
    return gateway;
  }

  private void awaitReady() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      if (send(get("/readyz").build()).statusCode() == 200) {
        return;
      }
      Thread.sleep(50);
    }
    fail("the gateway's ledger did not become ready within 30s");
  }

  HttpRequest.Builder get(String path) {
    return HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(20)).GET();
  }

  /** A POST carrying the gateway token and the spend headers of {@code brand}, no body yet. */
  HttpRequest.Builder post(String path, Brand brand) {
    return brand.headers(
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(Duration.ofSeconds(20))
            .header("authorization", "Bearer " + TOKEN));
  }

  /** A JSON POST carrying the gateway token and the spend headers of {@code brand}. */
  HttpRequest.Builder postJson(String path, String body, Brand brand) {
    return post(path, brand)
        .header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
  }

  HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  /** /usage as the gateway reports it, for one brand (its rows plus the global ones). */
  JsonNode usage(String brand) throws Exception {
    HttpResponse<String> r = send(get("/usage?brand=" + brand).header("x-api-key", TOKEN).build());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }

  /** The whole /usage answer as text (every cap, every window, the open count). */
  String usageText() throws Exception {
    HttpResponse<String> r = send(get("/usage").header("x-api-key", TOKEN).build());
    assertEquals(200, r.statusCode(), r.body());
    return r.body();
  }

  static JsonNode cap(JsonNode usage, String cap) {
    for (JsonNode row : usage.get("caps")) {
      if (row.get("cap").asText().equals(cap)) {
        return row;
      }
    }
    throw new AssertionError("no cap " + cap + " in " + usage);
  }

  /** Polls /usage until no reservation is open (settlement runs after the answer is sent). */
  JsonNode awaitSettled(String brand) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(25);
    JsonNode usage = usage(brand);
    while (usage.get("openReservations").asInt() != 0) {
      if (System.nanoTime() > deadline) {
        fail("reservations still open after 25s: " + usage);
      }
      Thread.sleep(20);
      usage = usage(brand);
    }
    return usage;
  }

  /** Every access line carrying {@code requestId}, waiting until at least one is there. */
  List<JsonNode> awaitAccessLines(String requestId) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(25);
    while (System.nanoTime() < deadline) {
      List<JsonNode> lines = logs.accessLines().stream().filter(l -> requestId.equals(l.path("request_id").asText())).toList();
      if (!lines.isEmpty()) {
        Thread.sleep(50); // a second line, if any, would be written right after the first
        return logs.accessLines().stream().filter(l -> requestId.equals(l.path("request_id").asText())).toList();
      }
      Thread.sleep(20);
    }
    throw new AssertionError("no access log line for " + requestId);
  }

  @Override
  public void close() throws Exception {
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    sim.close();
    logs.detach();
    try (Stream<Path> files = Files.walk(dataDir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  /** An {@code app} brand with its caps; each check uses a fresh one so its spend starts at 0. */
  record Brand(String id, String dailyUsd, String monthlyUsd) {
    static Brand fresh(String prefix) {
      return new Brand(prefix + "-" + Long.toHexString(System.nanoTime()), "5", "50");
    }

    Map<String, String> headerMap() {
      return Map.of(
          "x-spend-lane", "app",
          "x-spend-brand", id,
          "x-spend-brand-daily-usd", dailyUsd,
          "x-spend-brand-monthly-usd", monthlyUsd);
    }

    HttpRequest.Builder headers(HttpRequest.Builder b) {
      headerMap().forEach(b::header);
      return b;
    }
  }

  static BigDecimal money(JsonNode row, String field) {
    return row.get(field).decimalValue();
  }
}
