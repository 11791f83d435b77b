package dev.spendgateway.edge.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
import java.util.Optional;
import java.util.UUID;
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
 *
 * <p>What differs between the suites that use it (their conf file with its fake secrets, what the
 * simulator bills, where the journal is) is a {@link Suite}; see {@code e2e.E2eGateway}, {@code
 * reliability.ReliabilityGateway} and {@code router.RouterGateway}.
 */
public final class TestGateway implements AutoCloseable {
  /** The pass-through routes, as a caller of the gateway addresses them. */
  public static final String ANTHROPIC = "/anthropic/v1/messages";

  public static final String CHAT = "/openai/v1/chat/completions";
  public static final String RESPONSES = "/openai/v1/responses";
  public static final String TRANSCRIPTIONS = "/openai/v1/audio/transcriptions";

  public static final ObjectMapper JSON =
      new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

  /**
   * What one test suite runs the gateway with.
   *
   * @param confResource the classpath conf laid under the per-run values (it sets the token and the
   *     fake provider keys)
   * @param namePrefix names the actor system and the temp data dir, so leftovers say whose they are
   * @param simulator how the upstream simulator answers by default
   * @param journalInMemory an in-memory H2 journal, one database per gateway, instead of a file in
   *     the data dir: for suites that test the calls, not what survives a restart
   */
  public record Suite(
      String confResource, String namePrefix, SimConfig simulator, boolean journalInMemory) {
    public Suite(String confResource, String namePrefix, SimConfig simulator) {
      this(confResource, namePrefix, simulator, false);
    }

    public Suite withJournalInMemory() {
      return new Suite(confResource, namePrefix, simulator, true);
    }
  }

  public final ProviderSimulator sim;
  public final LogCapture logs;
  public final String base;

  /** HTTP/1.1, as the gateway speaks it (no h2c upgrade offered on every new connection). */
  public final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  /** The gateway token of the suite's conf: what {@link #post} and the /usage reads present. */
  private final String token;

  private final ActorSystem<Void> system;
  private final Path dataDir;
  private final List<AutoCloseable> clients = new ArrayList<>();

  private TestGateway(
      ProviderSimulator sim,
      LogCapture logs,
      String token,
      ActorSystem<Void> system,
      Path dataDir,
      int port) {
    this.sim = sim;
    this.logs = logs;
    this.token = token;
    this.system = system;
    this.dataDir = dataDir;
    this.base = "http://127.0.0.1:" + port;
  }

  public static TestGateway start(Suite suite, String name) throws Exception {
    return start(suite, name, Map.of());
  }

  /** {@code overrides} win over everything, e.g. a provider base URL nobody listens on. */
  public static TestGateway start(Suite suite, String name, Map<String, Object> overrides)
      throws Exception {
    return start(suite, name, overrides, false);
  }

  /**
   * A gateway that reaches both providers over HTTP/2 with prior knowledge ({@code
   * providers.<p>.http2 = prior-knowledge}) on the simulator's h2c listener; callers still speak
   * HTTP/1.1 to the gateway. The simulator's state and scripts are the same on both its listeners.
   */
  public static TestGateway startOverH2c(Suite suite, String name, Map<String, Object> overrides)
      throws Exception {
    return start(suite, name, overrides, true);
  }

  private static TestGateway start(
      Suite suite, String name, Map<String, Object> overrides, boolean upstreamH2c)
      throws Exception {
    LogCapture logs = LogCapture.attach();
    ProviderSimulator sim = ProviderSimulator.start(suite.simulator());
    String upstream =
        upstreamH2c
            ? sim.serveH2c(0).toCompletableFuture().get(15, TimeUnit.SECONDS)
            : sim.baseUrl();
    Path dataDir = Files.createTempDirectory(suite.namePrefix() + "-" + name);
    // The per-run values: any free port, this run's data dir, the simulator as both providers.
    Map<String, Object> values = new HashMap<>();
    values.put("gateway.port", 0);
    values.put("gateway.data-dir", dataDir.toString());
    values.put("providers.openai.base-url", upstream);
    values.put("providers.anthropic.base-url", upstream);
    if (upstreamH2c) {
      values.put("providers.openai.http2", "prior-knowledge");
      values.put("providers.anthropic.http2", "prior-knowledge");
    }
    values.put("media.base-url", sim.baseUrl());
    if (suite.journalInMemory()) {
      values.put(
          "pekko-persistence-jdbc.shared-databases.slick.db.url",
          "jdbc:h2:mem:"
              + suite.namePrefix()
              + "-"
              + UUID.randomUUID()
              + ";DATABASE_TO_UPPER=false;DB_CLOSE_DELAY=-1");
    }
    values.putAll(overrides);
    // Resolved only after the overlay, so the H2 URL picks up the temp data dir.
    Config config =
        ConfigFactory.parseMap(values)
            .withFallback(ConfigFactory.parseResources(suite.confResource()))
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    ActorSystem<Void> system =
        ActorSystem.create(Behaviors.empty(), suite.namePrefix() + "-" + name, config);
    ServerBinding binding =
        Gateway.start(system, config, Clock.systemUTC())
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    TestGateway gateway =
        new TestGateway(
            sim,
            logs,
            config.getString("gateway.token"),
            system,
            dataDir,
            binding.localAddress().getPort());
    gateway.awaitReady();
    return gateway;
  }

  /**
   * Whether the provider's last call on {@code route} came as an HTTP/2 stream (the simulator
   * records each call's protocol), so a row meant for HTTP/2 cannot pass on HTTP/1.1 unnoticed: the
   * simulator's h2c port speaks both.
   */
  public boolean lastUpstreamCallWasHttp2(dev.spendgateway.sim.SimRoute route) {
    java.util.List<dev.spendgateway.sim.ReceivedCall> calls = sim.received(route);
    return !calls.isEmpty() && calls.get(calls.size() - 1).overHttp2();
  }

  private void awaitReady() {
    Eventually.until(
        "the gateway's ledger is ready (/readyz answers 200)",
        Duration.ofSeconds(30),
        () -> send(get("/readyz").build()).statusCode() == 200);
  }

  /** The gateway's actor system, for tests that look at what runs in it (e.g. its pools). */
  public ActorSystem<Void> system() {
    return system;
  }

  // --- clients ---------------------------------------------------------------------------------

  /** The OpenAI SDK, changed only in base URL and key (the gateway token, sent as Bearer). */
  public OpenAIClient openAi() {
    return openAi(token);
  }

  public OpenAIClient openAi(String key) {
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
  public AnthropicClient anthropic() {
    return anthropicWithApiKey(token);
  }

  public AnthropicClient anthropicWithApiKey(String key) {
    return anthropic(AnthropicOkHttpClient.builder().apiKey(key));
  }

  /** The Anthropic SDK with the token as {@code Authorization: Bearer}. */
  public AnthropicClient anthropicWithBearer(String token) {
    return anthropic(AnthropicOkHttpClient.builder().authToken(token));
  }

  private AnthropicClient anthropic(AnthropicOkHttpClient.Builder builder) {
    AnthropicClient client =
        builder.baseUrl(base + "/anthropic").maxRetries(0).timeout(Duration.ofSeconds(20)).build();
    clients.add(client::close);
    return client;
  }

  /** This run's data dir, holding the H2 journal (for {@code gateway-admin} against it). */
  public Path dataDir() {
    return dataDir;
  }

  public HttpRequest.Builder get(String path) {
    return HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(20)).GET();
  }

  /** A POST carrying the gateway token and the spend headers of {@code brand}, no body yet. */
  public HttpRequest.Builder post(String path, Brand brand) {
    return brand.headers(
        HttpRequest.newBuilder(URI.create(base + path))
            .timeout(Duration.ofSeconds(20))
            .header("authorization", "Bearer " + token));
  }

  /** A JSON POST carrying the gateway token and the spend headers of {@code brand}. */
  public HttpRequest.Builder postJson(String path, String body, Brand brand) {
    return post(path, brand)
        .header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
  }

  public HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  /** {@link #send} without waiting: for a call held open while others are made. */
  public java.util.concurrent.CompletableFuture<HttpResponse<String>> sendAsync(
      HttpRequest request) {
    return http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
  }

  // --- the ledger as /usage shows it -------------------------------------------------------------

  /** /usage as the gateway reports it, for one brand (its rows plus the global ones). */
  public JsonNode usage(String brand) throws Exception {
    HttpResponse<String> r = send(get("/usage?brand=" + brand).header("x-api-key", token).build());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }

  /** The whole /usage answer as text (every cap, every window, the open count). */
  public String usageText() throws Exception {
    HttpResponse<String> r = send(get("/usage").header("x-api-key", token).build());
    assertEquals(200, r.statusCode(), r.body());
    return r.body();
  }

  /** One cap's row (e.g. {@code brand_daily} of {@code brand}, {@code global_daily}). */
  public static JsonNode cap(JsonNode usage, String cap) {
    for (JsonNode row : usage.get("caps")) {
      if (row.get("cap").asText().equals(cap)) {
        return row;
      }
    }
    throw new AssertionError("no cap " + cap + " in " + usage);
  }

  public static BigDecimal money(JsonNode row, String field) {
    return row.get(field).decimalValue();
  }

  /** Polls /usage until no reservation is open (settlement runs after the answer is sent). */
  public JsonNode awaitSettled(String brand) {
    return Eventually.until(
        "no reservation of " + brand + " is open",
        Duration.ofSeconds(25),
        () -> usage(brand),
        usage -> usage.get("openReservations").asInt() == 0);
  }

  // --- the access log
  // ------------------------------------------------------------------------------

  /** Polls the captured access log until a line matches. */
  public JsonNode awaitAccessLine(Predicate<JsonNode> which) {
    return Eventually.until(
            "an access log line matches",
            Duration.ofSeconds(25),
            () -> logs.accessLines().stream().filter(which).findFirst(),
            Optional::isPresent)
        .orElseThrow();
  }

  /**
   * The access lines carrying {@code requestId}, waiting until at least {@code atLeast} are there.
   */
  public List<JsonNode> awaitAccessLines(String requestId, int atLeast) {
    return Eventually.until(
        atLeast + " access lines carry " + requestId,
        Duration.ofSeconds(25),
        () -> accessLines(requestId),
        lines -> lines.size() >= atLeast);
  }

  /**
   * Exactly {@code count} access lines carry {@code requestId}: waits for them, then until the
   * access log has caught up with every call made so far ({@link #awaitAccessLogCaughtUp}), so a
   * surplus line (a bug) is in the log before the count is checked.
   */
  public List<JsonNode> awaitExactlyAccessLines(String requestId, int count) throws Exception {
    awaitAccessLines(requestId, count);
    awaitAccessLogCaughtUp();
    List<JsonNode> lines = accessLines(requestId);
    assertEquals(count, lines.size(), "access lines for " + requestId + ": " + lines);
    return lines;
  }

  /** The one access line of {@code requestId}, checked to be the only one. */
  public JsonNode awaitOnlyAccessLine(String requestId) throws Exception {
    return awaitExactlyAccessLines(requestId, 1).get(0);
  }

  /**
   * Waits until the access lines of every call answered so far are written. A call's line is
   * written once the ledger has answered its close, and the ledger answers one message at a time in
   * order; so this sends a marker call the ledger refuses (a fresh brand whose daily cap is below
   * any worst case: nothing reaches a provider, nothing is held) and waits for the marker's line.
   * By then a line still due from an earlier call's close has been written too.
   */
  public void awaitAccessLogCaughtUp() throws Exception {
    String marker = "caught-up-" + Long.toHexString(System.nanoTime());
    HttpResponse<String> refused =
        send(
            postJson(ANTHROPIC, CAUGHT_UP_BODY, Brand.fresh("caught-up").withDaily("0.000001"))
                .header("x-request-id", marker)
                .build());
    assertEquals(
        402, refused.statusCode(), "the marker call goes to the ledger: " + refused.body());
    awaitAccessLines(marker, 1);
  }

  /** The marker call of {@link #awaitAccessLogCaughtUp}: any catalog model, a tiny answer. */
  private static final String CAUGHT_UP_BODY =
      "{\"model\":\"claude-opus-5-5\",\"max_tokens\":16,"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"-\"}]}";

  /** The access lines carrying {@code requestId} so far, without waiting. */
  public List<JsonNode> accessLines(String requestId) {
    return logs.accessLines().stream()
        .filter(l -> requestId.equals(l.path("request_id").asText()))
        .toList();
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

  // --- spend headers
  // -------------------------------------------------------------------------------

  /** An {@code app} brand with its caps; every test uses a fresh one so its spend starts at 0. */
  public record Brand(String id, String dailyUsd, String monthlyUsd) {
    public static Brand fresh(String prefix) {
      return new Brand(prefix + "-" + Long.toHexString(System.nanoTime()), "5", "50");
    }

    public Brand withDaily(String usd) {
      return new Brand(id, usd, monthlyUsd);
    }

    public Map<String, String> headerMap() {
      return Map.of(
          "x-spend-lane", "app",
          "x-spend-brand", id,
          "x-spend-brand-daily-usd", dailyUsd,
          "x-spend-brand-monthly-usd", monthlyUsd);
    }

    public HttpRequest.Builder headers(HttpRequest.Builder b) {
      headerMap().forEach(b::header);
      return b;
    }
  }
}
