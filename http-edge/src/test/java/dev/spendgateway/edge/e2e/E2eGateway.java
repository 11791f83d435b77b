package dev.spendgateway.edge.e2e;

import dev.spendgateway.edge.testkit.LogCapture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
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
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.ServerBinding;

/**
 * One running gateway in front of one provider simulator, for a whole test class: the real
 * composition root ({@link Gateway#start}) on its own actor system, a file H2 journal in a fresh
 * temp dir, the official SDKs pointed at it with only base URL and key changed, a plain {@link
 * HttpClient} for what the SDKs cannot send, and a capture of every log line (all loggers, the
 * {@code access} logger included).
 */
final class E2eGateway implements AutoCloseable {
  static final String TOKEN = "gw-e2e-token-7Q2x9";
  static final String OPENAI_KEY = "sk-openai-e2e-key-K4p8";
  static final String ANTHROPIC_KEY = "sk-ant-e2e-key-W3m6";

  /** What the simulator bills by default: odd numbers, so a wrong price or rounding shows. */
  static final Usage USAGE = new Usage(1234, 567, 0, 0, 0);

  static final ObjectMapper JSON =
      new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

  final ProviderSimulator sim;
  final LogCapture logs;
  final String base;
  final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final ActorSystem<Void> system;
  private final Path dataDir;
  private final List<AutoCloseable> clients = new ArrayList<>();

  private E2eGateway(ProviderSimulator sim, LogCapture logs, ActorSystem<Void> system, Path dataDir, int port) {
    this.sim = sim;
    this.logs = logs;
    this.system = system;
    this.dataDir = dataDir;
    this.base = "http://127.0.0.1:" + port;
  }

  static E2eGateway start(String name) throws Exception {
    LogCapture logs = LogCapture.attach();
    ProviderSimulator sim = ProviderSimulator.start(SimConfig.defaults().withUsage(USAGE));
    Path dataDir = Files.createTempDirectory("e2e-" + name);
    Config config =
        ConfigFactory.parseMap(
                Map.of(
                    "gateway.port", 0,
                    "gateway.data-dir", dataDir.toString(),
                    "providers.openai.base-url", sim.baseUrl(),
                    "providers.anthropic.base-url", sim.baseUrl()))
            .withFallback(ConfigFactory.parseResources("e2e-test.conf"))
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "e2e-" + name, config);
    ServerBinding binding =
        Gateway.start(system, config, Clock.systemUTC()).toCompletableFuture().get(30, TimeUnit.SECONDS);
    E2eGateway gateway = new E2eGateway(sim, logs, system, dataDir, binding.localAddress().getPort());
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

  // --- clients ---------------------------------------------------------------------------------

  /** The OpenAI SDK, changed only in base URL and key (the gateway token, sent as Bearer). */
  OpenAIClient openAi() {
    return openAi(TOKEN);
  }

  OpenAIClient openAi(String key) {
    OpenAIClient client =
        OpenAIOkHttpClient.builder()
            .baseUrl(base + "/openai/v1")
            .apiKey(key)
            .maxRetries(0)
            .timeout(Duration.ofSeconds(20))
            .build();
    clients.add(client::close);
    return client;
  }

  /** The Anthropic SDK with the token as {@code x-api-key}. */
  AnthropicClient anthropic() {
    return anthropicWithApiKey(TOKEN);
  }

  AnthropicClient anthropicWithApiKey(String key) {
    return anthropic(AnthropicOkHttpClient.builder().apiKey(key));
  }

  /** The Anthropic SDK with the token as {@code Authorization: Bearer}. */
  AnthropicClient anthropicWithBearer(String token) {
    return anthropic(AnthropicOkHttpClient.builder().authToken(token));
  }

  private AnthropicClient anthropic(AnthropicOkHttpClient.Builder builder) {
    AnthropicClient client =
        builder.baseUrl(base + "/anthropic").maxRetries(0).timeout(Duration.ofSeconds(20)).build();
    clients.add(client::close);
    return client;
  }

  HttpRequest.Builder get(String path) {
    return HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(20)).GET();
  }

  /** A JSON POST carrying the gateway token and the spend headers of an {@code app} brand. */
  HttpRequest.Builder post(String path, String body, Brand brand) {
    return brand.headers(
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(Duration.ofSeconds(20))
            .header("authorization", "Bearer " + TOKEN)
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body)));
  }

  HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  // --- the ledger as /usage shows it -------------------------------------------------------------

  JsonNode usage(String brand) throws Exception {
    HttpResponse<String> r = send(get("/usage?brand=" + brand).header("x-api-key", TOKEN).build());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }

  /** One cap's row (e.g. {@code brand_daily} of {@code brand}, {@code global_daily}). */
  static JsonNode cap(JsonNode usage, String cap) {
    for (JsonNode row : usage.get("caps")) {
      if (row.get("cap").asText().equals(cap)) {
        return row;
      }
    }
    throw new AssertionError("no cap " + cap + " in " + usage);
  }

  static BigDecimal money(JsonNode row, String field) {
    return row.get(field).decimalValue();
  }

  /** Polls /usage until no reservation is open (settlement runs after the answer is sent). */
  JsonNode awaitSettled(String brand) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(25);
    JsonNode usage = usage(brand);
    while (usage.get("openReservations").asInt() != 0) {
      if (System.nanoTime() > deadline) {
        fail("reservations still open after 25s: " + usage);
      }
      Thread.sleep(25);
      usage = usage(brand);
    }
    return usage;
  }

  /** Polls the captured access log until a line matches. */
  JsonNode awaitAccessLine(Predicate<JsonNode> which) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(25);
    while (System.nanoTime() < deadline) {
      Optional<JsonNode> line = logs.accessLines().stream().filter(which).findFirst();
      if (line.isPresent()) {
        return line.get();
      }
      Thread.sleep(25);
    }
    throw new AssertionError("no matching access log line in " + logs.accessLines());
  }

  @Override
  public void close() throws Exception {
    for (AutoCloseable c : clients) {
      c.close();
    }
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    sim.close();
    logs.detach();
    try (Stream<Path> files = Files.walk(dataDir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  // --- spend headers -------------------------------------------------------------------------------

  /** An {@code app} brand with its caps; every test uses a fresh one so its spend starts at 0. */
  record Brand(String id, String dailyUsd, String monthlyUsd) {
    static Brand fresh(String prefix) {
      return new Brand(prefix + "-" + Long.toHexString(System.nanoTime()), "5", "50");
    }

    Brand withDaily(String usd) {
      return new Brand(id, usd, monthlyUsd);
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

}
