package dev.spendgateway.edge.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.Ledger;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.ledger.LedgerSettings;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * A real ledger (the journal a test conf names, e.g. in-memory H2) behind some of the gateway's own
 * API routes, bound on loopback, and an HTTP client that reads every answer as JSON. Used by the
 * ledger and admin API tests, which check status codes and body shapes over real HTTP.
 */
public final class LedgerApiServer implements AutoCloseable {
  /** Amounts as {@link BigDecimal}, so money compares exactly. */
  public static final ObjectMapper JSON =
      new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);

  /** One answer: its status, its body as JSON, and the raw response for headers. */
  public record Answer(int status, JsonNode body, HttpResponse<String> raw) {}

  public final ActorSystem<Void> system;
  public final LedgerClient ledger;
  private final String token;
  private final HttpClient http = HttpClient.newHttpClient();
  private final ServerBinding binding;
  private final String base;

  private LedgerApiServer(ActorSystem<Void> system, LedgerClient ledger, String token, Route route)
      throws Exception {
    this.system = system;
    this.ledger = ledger;
    this.token = token;
    this.binding = bind(route);
    this.base = "http://127.0.0.1:" + binding.localAddress().getPort();
  }

  /**
   * Starts the ledger from {@code confResource} (next to {@code owner}), waits for its recovery and
   * binds {@code routes(ledger)}.
   *
   * @param token sent by {@link #get} as {@code x-api-key}; null when the routes need none
   */
  public static LedgerApiServer start(
      Class<?> owner, String confResource, String token, Function<LedgerClient, Route> routes)
      throws Exception {
    Config config =
        ConfigFactory.parseResources(owner, confResource)
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    ActorSystem<Void> system =
        ActorSystem.create(Behaviors.empty(), confResource.replace(".conf", ""), config);
    LedgerSettings settings = LedgerSettings.fromConfig(config);
    LedgerClient ledger =
        LedgerClient.of(system, Ledger.spawn(system, settings, Clock.systemUTC()), settings);
    ledger.awaitReady().toCompletableFuture().get(30, TimeUnit.SECONDS);
    return new LedgerApiServer(system, ledger, token, routes.apply(ledger));
  }

  /** Binds another route on a free loopback port (e.g. one over a ledger that never answers). */
  public ServerBinding bind(Route route) throws Exception {
    return Http.get(system)
        .newServerAt("127.0.0.1", 0)
        .bind(route)
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
  }

  /** The loopback port the routes are bound on. */
  public int port() {
    return binding.localAddress().getPort();
  }

  /** POSTs {@code body}; {@code bearer} or {@code contentType} null: that header is not sent. */
  public Answer post(String path, String body, String bearer, String contentType) throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(base + path))
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (contentType != null) {
      b.header("content-type", contentType);
    }
    if (bearer != null) {
      b.header("authorization", "Bearer " + bearer);
    }
    return send(b.build());
  }

  /** GETs {@code path}, with the server's token when it has one. */
  public Answer get(String path) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).GET();
    if (token != null) {
      b.header("x-api-key", token);
    }
    return send(b.build());
  }

  /** Sends any request and reads its answer as JSON. */
  public Answer send(HttpRequest request) throws Exception {
    HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
    return new Answer(response.statusCode(), JSON.readTree(response.body()), response);
  }

  /** {@code actual} is a JSON number equal to {@code expected} dollars, scale aside. */
  public static void assertUsd(String expected, JsonNode actual) {
    assertTrue(actual.isNumber(), () -> "not a number: " + actual);
    assertEquals(
        0,
        new BigDecimal(expected).compareTo(actual.decimalValue()),
        () -> expected + " vs " + actual);
  }

  @Override
  public void close() throws Exception {
    binding.unbind().toCompletableFuture().get(10, TimeUnit.SECONDS);
    system.terminate();
    system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }
}
