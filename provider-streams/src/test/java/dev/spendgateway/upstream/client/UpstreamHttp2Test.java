package dev.spendgateway.upstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.Eventually;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.AttributeKeys;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.http.javadsl.settings.ServerSettings;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Calls to a provider over HTTP/2 ({@code providers.<p>.http2 = prior-knowledge}) against an h2c
 * server that counts the connections and streams it sees: a burst shares a few connections, a call
 * past their streams is refused at once, a caller that stops reading resets only its own stream,
 * and every HTTP/1.1 timer (response start, a silent stream, the call's max duration) still cuts
 * the call — and gives its stream back.
 */
class UpstreamHttp2Test {
  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final Materializer MAT = Materializer.matFromSystem(testKit.system());

  /** Streams the h2c stub allows on one connection (what it advertises). */
  private static final int STUB_STREAMS = 3;

  private H2cStub stub;

  @BeforeEach
  void startStub() throws Exception {
    stub = new H2cStub();
  }

  @AfterEach
  void stopStub() throws Exception {
    stub.close();
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  // --- the h2c provider ------------------------------------------------------------------------

  /**
   * An h2c server: {@code /stream} sends one event and then holds the stream open, {@code /silent}
   * never answers, anything else answers {@code {}} at once.
   */
  private static final class H2cStub implements AutoCloseable {
    final Set<Integer> connections = ConcurrentHashMap.newKeySet();
    final AtomicInteger openStreams = new AtomicInteger();
    final AtomicInteger endedStreams = new AtomicInteger();
    final AtomicInteger requests = new AtomicInteger();
    private final ServerBinding binding;

    H2cStub() throws Exception {
      ServerSettings settings =
          ServerSettings.create(
                  ConfigFactory.parseMap(
                          Map.of(
                              "pekko.http.server.http2.max-concurrent-streams",
                              STUB_STREAMS,
                              "pekko.http.server.remote-address-attribute",
                              "on"))
                      .withFallback(testKit.system().settings().config()))
              .withEnableHttp2(true);
      binding =
          Http.get(testKit.system())
              .newServerAt("127.0.0.1", 0)
              .withSettings(settings)
              .bind(this::handle)
              .toCompletableFuture()
              .get(5, TimeUnit.SECONDS);
    }

    String baseUrl() {
      return "http://127.0.0.1:" + binding.localAddress().getPort();
    }

    private CompletionStage<HttpResponse> handle(HttpRequest request) {
      requests.incrementAndGet();
      request
          .getAttribute(AttributeKeys.remoteAddress)
          .ifPresent(a -> connections.add(a.getPort())); // one client port per connection
      request.discardEntityBytes(MAT);
      String path = request.getUri().path();
      if (path.equals("/silent")) {
        return new CompletableFuture<>();
      }
      if (path.equals("/stream")) {
        Source<ByteString, ?> events =
            Source.single(ByteString.fromString("data: {\"n\":1}\n\n"))
                .concat(Source.maybe())
                .watchTermination(
                    (mat, done) -> {
                      openStreams.incrementAndGet();
                      done.whenComplete(
                          (d, e) -> {
                            openStreams.decrementAndGet();
                            endedStreams.incrementAndGet();
                          });
                      return mat;
                    });
        return CompletableFuture.completedFuture(
            HttpResponse.create()
                .withEntity(
                    HttpEntities.create(MediaTypes.TEXT_EVENT_STREAM.toContentType(), events)));
      }
      return CompletableFuture.completedFuture(
          HttpResponse.create().withEntity(ContentTypes.APPLICATION_JSON, "{}"));
    }

    @Override
    public void close() throws Exception {
      binding.terminate(Duration.ofSeconds(1)).toCompletableFuture().get(5, TimeUnit.SECONDS);
    }
  }

  // --- helpers ---------------------------------------------------------------------------------

  private UpstreamClient client(String baseUrl, Map<String, Object> overrides) {
    Map<String, Object> o = new HashMap<>();
    for (String p : List.of("openai", "anthropic")) {
      o.put("providers." + p + ".base-url", baseUrl);
      o.put("providers." + p + ".http2", "prior-knowledge");
      o.put("providers." + p + ".http2-connections", 2);
      o.put("providers." + p + ".http2-streams-per-connection", STUB_STREAMS);
      o.put("providers." + p + ".response-start-timeout", "3s");
      o.put("providers." + p + ".idle-timeout", "3s");
      o.put("providers." + p + ".connect-timeout", "1s");
    }
    o.putAll(overrides);
    return UpstreamClient.create(
        testKit.system(),
        UpstreamSettings.fromConfig(
            ConfigFactory.parseMap(o).withFallback(UpstreamSettingsTest.shippedConfig())));
  }

  private static UpstreamRequest json() {
    return UpstreamRequest.post(
        List.of(), ContentTypes.APPLICATION_JSON, ByteString.fromString("{\"model\":\"m\"}"));
  }

  private static <T> T await(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(15, TimeUnit.SECONDS);
  }

  private static UpstreamResult.Responded responded(UpstreamResult result) {
    return assertInstanceOf(UpstreamResult.Responded.class, result, result::toString);
  }

  /** The safe class of the error the body ended with; fails the test if it ended well. */
  private static String bodyError(UpstreamResult result) throws Exception {
    CompletionStage<?> read = responded(result).body().runWith(Sink.ignore(), MAT);
    ExecutionException e =
        assertThrows(
            ExecutionException.class, () -> read.toCompletableFuture().get(15, TimeUnit.SECONDS));
    return SafeErrors.classify(e.getCause());
  }

  // --- tests -----------------------------------------------------------------------------------

  @Test
  void aBurstSharesAFewConnectionsAndACallPastTheirStreamsIsRefusedAtOnce() throws Exception {
    UpstreamClient client = client(stub.baseUrl(), Map.of());
    int capacity = 2 * STUB_STREAMS;

    List<CompletionStage<UpstreamResult>> burst = new ArrayList<>();
    for (int i = 0; i < capacity; i++) {
      burst.add(client.call(Provider.OPENAI, "/stream", json()));
    }
    UpstreamResult past = await(client.call(Provider.OPENAI, "/stream", json()));
    List<UpstreamResult.Responded> open = new ArrayList<>();
    for (CompletionStage<UpstreamResult> call : burst) {
      open.add(responded(await(call)));
    }

    assertEquals(
        new UpstreamResult.ConnectionFailed(SafeErrors.UPSTREAM_BUSY),
        past,
        "one call past every connection's streams is refused, not queued");
    assertEquals(capacity, stub.requests.get(), "the refused call was never sent");
    assertEquals(2, stub.connections.size(), "six streams on two connections: " + stub.connections);
    assertEquals(2, client.http2Connections(Provider.OPENAI));
    Eventually.until(
        "every stream open at the provider",
        Duration.ofSeconds(5),
        () -> stub.openStreams.get() == capacity);

    // The caller stops reading one stream: that stream is reset, its connection and the others go
    // on, and its place is free for the next call.
    open.get(0).body().take(1).runWith(Sink.ignore(), MAT);
    Eventually.until(
        "the provider sees the one stream end",
        Duration.ofSeconds(5),
        () -> stub.endedStreams.get() == 1);
    assertEquals(capacity - 1, stub.openStreams.get(), "the other streams go on");
    UpstreamResult next = await(client.call(Provider.OPENAI, "/stream", json()));
    responded(next).body().take(1).runWith(Sink.ignore(), MAT);
    assertEquals(2, stub.connections.size(), "the freed stream is reused on its connection");
    for (UpstreamResult.Responded r : open.subList(1, open.size())) {
      r.body().take(1).runWith(Sink.ignore(), MAT);
    }
    Eventually.until(
        "every stream ended", Duration.ofSeconds(5), () -> stub.openStreams.get() == 0);
    assertEquals(0, client.connectionsInUse(Provider.OPENAI), "every call gave its slot back");
  }

  @ParameterizedTest(name = "{0}: cut as {3}, and its stream given back")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          no answer within response-start-timeout | /silent | providers.openai.response-start-timeout | response_start_timeout
          a stream silent past idle-timeout       | /stream | providers.openai.idle-timeout           | idle_timeout
          a stream past max-call-duration         | /stream | providers.max-call-duration             | max_call_duration
          """)
  void everyHttp11TimerStillCutsTheCall(String what, String path, String key, String safeClass)
      throws Exception {
    Map<String, Object> overrides = new HashMap<>();
    overrides.put("providers.openai.response-start-timeout", "500ms");
    overrides.put("providers.openai.idle-timeout", "2s");
    overrides.put(key, key.endsWith("idle-timeout") ? "600ms" : "500ms");
    // One stream in all: the next call can only go through if the cut call gave its stream back.
    overrides.put("providers.openai.http2-connections", 1);
    overrides.put("providers.openai.http2-streams-per-connection", 1);
    UpstreamClient client = client(stub.baseUrl(), overrides);

    UpstreamResult result = await(client.call(Provider.OPENAI, path, json()));
    String cut =
        result instanceof UpstreamResult.ConnectionFailed failed
            ? failed.safeErrorClass()
            : bodyError(result);

    assertEquals(safeClass, cut, what);
    Eventually.until(
        what + ": the stream is given back",
        Duration.ofSeconds(5),
        () -> client.connectionsInUse(Provider.OPENAI) == 0);
    UpstreamResult next = await(client.call(Provider.OPENAI, "/ok", json()));
    assertEquals(200, responded(next).status(), what + ": the next call gets the stream");
    if (path.equals("/stream")) {
      Eventually.until(
          what + ": the provider sees the cut stream end",
          Duration.ofSeconds(5),
          () -> stub.endedStreams.get() == 1);
    }
  }

  @Test
  void aRefusedConnectNeverReachedTheProviderAndIsRetryable() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    UpstreamClient client = client("http://127.0.0.1:" + closedPort, Map.of());

    UpstreamResult result = await(client.call(Provider.OPENAI, "/ok", json()));

    UpstreamResult.ConnectionFailed failed =
        assertInstanceOf(UpstreamResult.ConnectionFailed.class, result);
    assertEquals(SafeErrors.CONNECT_FAILED, failed.safeErrorClass());
    assertTrue(failed.isRetryableNeverSent(), "nothing was sent: free to retry elsewhere");
    assertEquals(0, client.connectionsInUse(Provider.OPENAI));
  }

  @Test
  void aConnectionWithoutStreamsPastTheKeepAliveTimeoutIsClosedAndReplaced() throws Exception {
    UpstreamClient client =
        client(stub.baseUrl(), Map.of("providers.openai.keep-alive-timeout", "300ms"));

    assertEquals(200, responded(await(client.call(Provider.OPENAI, "/ok", json()))).status());
    assertEquals(1, client.http2Connections(Provider.OPENAI));
    Eventually.until(
        "the unused connection is closed",
        Duration.ofSeconds(5),
        () -> client.http2Connections(Provider.OPENAI) == 0);
    assertEquals(200, responded(await(client.call(Provider.OPENAI, "/ok", json()))).status());

    assertEquals(2, stub.connections.size(), "the second call came on a new connection");
  }

  @ParameterizedTest(name = "http2 = {0} with base-url {1} is refused")
  @CsvSource({
    "prior-knowledge, https://api.openai.com",
    "alpn,            http://127.0.0.1:9",
    "h2c,             http://127.0.0.1:9",
    "on,              http://127.0.0.1:9"
  })
  void aModeThatDoesNotFitTheBaseUrlIsRefusedAtStart(String mode, String baseUrl) {
    Map<String, Object> o =
        Map.of("providers.openai.base-url", baseUrl, "providers.openai.http2", mode);
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                UpstreamSettings.fromConfig(
                    ConfigFactory.parseMap(o).withFallback(UpstreamSettingsTest.shippedConfig())));
    assertTrue(e.getMessage().contains("openai.http2"), e.getMessage());
  }

  @Test
  void theShippedDefaultIsHttp11() {
    UpstreamSettings shipped = UpstreamSettings.fromConfig(UpstreamSettingsTest.shippedConfig());
    for (Provider provider : Provider.values()) {
      assertEquals(ProviderSettings.Http2Mode.OFF, shipped.provider(provider).http2());
      assertEquals(
          shipped.provider(provider).maxConnections(),
          shipped.provider(provider).http2Connections()
              * shipped.provider(provider).http2StreamsPerConnection(),
          "turned on, HTTP/2 has room for as many calls as max-connections");
    }
  }
}
