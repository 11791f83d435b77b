package dev.spendgateway.upstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.Fixtures;
import dev.spendgateway.upstream.stream.BodyCollector;
import dev.spendgateway.upstream.stream.CollectedBody;
import dev.spendgateway.upstream.stream.MeteredStream;
import dev.spendgateway.upstream.stream.StreamMeter;
import dev.spendgateway.upstream.stream.StreamOutcome;
import dev.spendgateway.upstream.usage.ApiKind;
import java.net.ServerSocket;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class UpstreamClientTest {

  private static final String GATEWAY_TOKEN = "gw-token-must-stay-home";
  private static final String OPENAI_KEY = "sk-real-openai-key";
  private static final String ANTHROPIC_KEY = "sk-ant-real-key";

  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final Materializer MAT = Materializer.matFromSystem(testKit.system());
  private static StubProvider stub;
  private static UpstreamClient client;
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();

  @BeforeAll
  static void start() throws Exception {
    stub = new StubProvider(testKit.system());
    client = UpstreamClient.create(testKit.system(), settings(stub.baseUrl()));
  }

  @AfterAll
  static void stop() throws Exception {
    stub.close();
    testKit.shutdownTestKit();
  }

  @BeforeEach
  void captureLogs() {
    logs.start();
    root().addAppender(logs);
  }

  @AfterEach
  void noSecretInLogs() {
    root().detachAppender(logs);
    for (ILoggingEvent event : logs.list) {
      String line = event.getFormattedMessage();
      for (String secret : List.of(GATEWAY_TOKEN, OPENAI_KEY, ANTHROPIC_KEY)) {
        assertFalse(line.contains(secret), "secret in log: " + event.getLoggerName());
      }
    }
  }

  private static Logger root() {
    return (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
  }

  static UpstreamSettings settings(String baseUrl) {
    Map<String, Object> o = new HashMap<>();
    for (String p : List.of("openai", "anthropic")) {
      o.put("providers." + p + ".base-url", baseUrl);
      o.put("providers." + p + ".response-start-timeout", "500ms");
      o.put("providers." + p + ".idle-timeout", "5s");
      o.put("providers." + p + ".connect-timeout", "1s");
      // A small pool: a fresh pool of the shipped 10,000 slots takes longer to fail its first
      // refused
      // connect than this test's 500 ms response-start timeout (see conf/providers.conf).
      o.put("providers." + p + ".max-connections", 256);
    }
    o.put("providers.openai.api-key", OPENAI_KEY);
    o.put("providers.anthropic.api-key", ANTHROPIC_KEY);
    return UpstreamSettings.fromConfig(
        ConfigFactory.parseMap(o).withFallback(UpstreamSettingsTest.shippedConfig()));
  }

  private static <T> T await(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static final List<HttpHeader> CALLER_HEADERS =
      List.of(
          RawHeader.create("x-api-key", GATEWAY_TOKEN),
          RawHeader.create("Authorization", "Bearer " + GATEWAY_TOKEN),
          RawHeader.create("Cookie", "session=abc"),
          RawHeader.create("X-Forwarded-For", "10.1.2.3"),
          RawHeader.create("x-spend-lane", "app"),
          RawHeader.create("x-stainless-lang", "java"));

  private static Map<String, String> byName(List<HttpHeader> headers) {
    return headers.stream().collect(Collectors.toMap(HttpHeader::lowercaseName, HttpHeader::value));
  }

  @Test
  void anthropicStreamArrivesWithTheRealKeyAndIsMeteredToItsUsage() throws Exception {
    String body = "{\"model\":\"claude-opus-5-5\",\"stream\":true}";
    UpstreamResult result =
        await(
            client.call(
                Provider.ANTHROPIC,
                "/v1/messages",
                UpstreamRequest.post(
                    CALLER_HEADERS, ContentTypes.APPLICATION_JSON, ByteString.fromString(body))));

    UpstreamResult.Responded responded = (UpstreamResult.Responded) result;
    assertEquals(200, responded.status());
    assertTrue(responded.isEventStream());
    assertEquals(
        Map.of("request-id", "req_stub_1", "anthropic-ratelimit-requests-remaining", "99"),
        byName(responded.headersToPassBack()));

    StreamMeter meter = StreamMeter.create(testKit.system(), client.settings());
    MeteredStream metered = meter.meter(responded.body(), ApiKind.ANTHROPIC_MESSAGES);
    ByteString toClient =
        await(metered.toClient().runFold(ByteString.emptyByteString(), ByteString::concat, MAT));
    StreamOutcome outcome = await(metered.outcome());
    assertEquals(Fixtures.bytes(Fixtures.ANTHROPIC), toClient);
    assertTrue(outcome.usageSettled());
    assertEquals(30, outcome.usageDocument().orElseThrow().get("output_tokens").asLong());

    StubProvider.Seen seen = stub.next();
    assertEquals(ANTHROPIC_KEY, seen.header("x-api-key"));
    assertEquals("2023-06-01", seen.header("anthropic-version"));
    assertEquals("java", seen.header("x-stainless-lang"));
    assertNull(seen.header("authorization"));
    assertNull(seen.header("cookie"));
    assertNull(seen.header("x-forwarded-for"));
    assertNull(seen.header("x-spend-lane"));
    assertFalse(seen.headers().toString().contains(GATEWAY_TOKEN));
    assertEquals(body, seen.body());
  }

  @Test
  void aRateLimitIsPassedBackWithRetryAfterAndRequestIdButNoCookie() throws Exception {
    UpstreamResult result =
        await(
            client.call(
                Provider.OPENAI,
                "/v1/chat/completions",
                UpstreamRequest.post(
                    CALLER_HEADERS, ContentTypes.APPLICATION_JSON, ByteString.fromString("{}"))));

    UpstreamResult.Responded responded = (UpstreamResult.Responded) result;
    assertEquals(429, responded.status());
    assertEquals(
        Map.of("retry-after", "7", "x-upstream-request-id", "req_stub_2"),
        byName(responded.headersToPassBack()));
    CollectedBody.Complete body =
        (CollectedBody.Complete) await(BodyCollector.collect(responded.body(), 1024, MAT));
    assertEquals("requests", body.json().orElseThrow().get("error").get("type").asText());

    StubProvider.Seen seen = stub.next();
    assertEquals("Bearer " + OPENAI_KEY, seen.header("authorization"));
    assertNull(seen.header("x-api-key"));
    assertFalse(seen.headers().toString().contains(GATEWAY_TOKEN));
  }

  @Test
  void aStreamedRequestBodyIsSentWhole() throws Exception {
    Source<ByteString, ?> parts =
        Source.from(List.of(ByteString.fromString("part-1;"), ByteString.fromString("part-2")));
    UpstreamRequest request =
        new UpstreamRequest(
            HttpMethods.POST,
            CALLER_HEADERS,
            new UpstreamBody.Streamed(ContentTypes.APPLICATION_OCTET_STREAM, -1, parts));
    UpstreamResult.Responded responded =
        (UpstreamResult.Responded)
            await(client.call(Provider.OPENAI, "/v1/audio/transcriptions", request));
    responded.discardBody(MAT);
    assertEquals(404, responded.status());
    assertEquals("part-1;part-2", stub.next().body());
  }

  @Test
  void aRefusedConnectionIsAConnectionFailureThatNeverReachedTheProvider() throws Exception {
    int closedPort;
    try (ServerSocket socket = new ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    UpstreamClient refused =
        UpstreamClient.create(testKit.system(), settings("http://127.0.0.1:" + closedPort));
    UpstreamResult result =
        await(
            refused.call(
                Provider.ANTHROPIC,
                "/v1/messages",
                UpstreamRequest.post(
                    CALLER_HEADERS, ContentTypes.APPLICATION_JSON, ByteString.fromString("{}"))));

    UpstreamResult.ConnectionFailed failed = (UpstreamResult.ConnectionFailed) result;
    assertEquals(SafeErrors.CONNECT_FAILED, failed.safeErrorClass());
    assertFalse(failed.mayHaveReachedProvider());
  }

  @Test
  void noResponseWithinTheResponseStartTimeoutIsAFailureThatMayHaveBeenBilled() throws Exception {
    long start = System.nanoTime();
    UpstreamResult result =
        await(
            client.call(
                Provider.OPENAI,
                "/slow",
                UpstreamRequest.post(
                    CALLER_HEADERS, ContentTypes.APPLICATION_JSON, ByteString.fromString("{}"))));
    long tookMs = (System.nanoTime() - start) / 1_000_000;

    UpstreamResult.ConnectionFailed failed = (UpstreamResult.ConnectionFailed) result;
    assertEquals(SafeErrors.RESPONSE_START_TIMEOUT, failed.safeErrorClass());
    assertTrue(failed.mayHaveReachedProvider());
    assertTrue(tookMs >= 400 && tookMs < 3_000, "took " + tookMs + " ms");
    stub.next();
  }
}
