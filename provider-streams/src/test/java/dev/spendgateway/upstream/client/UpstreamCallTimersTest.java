package dev.spendgateway.upstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.RawUpstream;
import dev.spendgateway.upstream.stream.MeteredStream;
import dev.spendgateway.upstream.stream.StreamMeter;
import dev.spendgateway.upstream.stream.StreamOutcome;
import dev.spendgateway.upstream.usage.ApiKind;
import java.net.ConnectException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.ClientTransport;
import org.apache.pekko.http.javadsl.OutgoingConnection;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.settings.ClientConnectionSettings;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.StreamTcpException;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The upstream client's timers and its one retry, against a raw socket server that shows how many
 * connections were opened and lets answers start late or drip. Times are scaled down through the
 * same settings production reads.
 */
class UpstreamCallTimersTest {
  private static final ActorTestKit testKit = ActorTestKit.create();
  private static final Materializer MAT = Materializer.matFromSystem(testKit.system());

  private RawUpstream upstream;

  @BeforeEach
  void startUpstream() throws Exception {
    upstream = new RawUpstream();
  }

  @AfterEach
  void stopUpstream() throws Exception {
    upstream.close();
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  private UpstreamSettings settings(Map<String, Object> overrides) {
    Map<String, Object> o = new HashMap<>();
    for (String p : List.of("openai", "anthropic")) {
      o.put("providers." + p + ".base-url", upstream.baseUrl());
      o.put("providers." + p + ".response-start-timeout", "3s");
      o.put("providers." + p + ".idle-timeout", "3s");
      o.put("providers." + p + ".connect-timeout", "1s");
      // A small pool: a fresh pool of the shipped 10,000 slots can take longer than this test's
      // 3 s response-start timeout to fail its first refused connect (see conf/providers.conf).
      o.put("providers." + p + ".max-connections", 256);
    }
    o.putAll(overrides);
    return UpstreamSettings.fromConfig(
        ConfigFactory.parseMap(o).withFallback(UpstreamSettingsTest.shippedConfig()));
  }

  private static UpstreamRequest json() {
    return UpstreamRequest.post(
        List.of(), ContentTypes.APPLICATION_JSON, ByteString.fromString("{\"model\":\"m\"}"));
  }

  private static <T> T await(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(15, TimeUnit.SECONDS);
  }

  private static String bodyOf(UpstreamResult result) throws Exception {
    UpstreamResult.Responded responded =
        assertInstanceOf(UpstreamResult.Responded.class, result, result::toString);
    return await(
            responded
                .body()
                .runWith(Sink.fold(ByteString.emptyByteString(), ByteString::concat), MAT))
        .utf8String();
  }

  // --- keep-alive
  // ---------------------------------------------------------------------------------

  @Test
  void theShippedPoolsCloseAConnectionUnusedForThirtySeconds() {
    UpstreamSettings shipped = UpstreamSettings.fromConfig(UpstreamSettingsTest.shippedConfig());
    for (Provider provider : Provider.values()) {
      assertEquals(
          Duration.ofSeconds(30),
          shipped.provider(provider).keepAliveTimeout(),
          provider.wireName());
    }
  }

  @Test
  void aConnectionUnusedPastTheKeepAliveTimeoutIsNotReused() throws Exception {
    UpstreamClient client =
        UpstreamClient.create(
            testKit.system(), settings(Map.of("providers.openai.keep-alive-timeout", "300ms")));

    bodyOf(await(client.call(Provider.OPENAI, "/v1/chat/completions", json())));
    Thread.sleep(1_000); // the test's pace: the connection sits unused past its 300 ms keep-alive
    bodyOf(await(client.call(Provider.OPENAI, "/v1/chat/completions", json())));

    assertEquals(2, upstream.requests());
    assertEquals(
        2,
        upstream.connections(),
        "the second call got a fresh connection, not one the provider may have closed");
  }

  @Test
  void aConnectionUsedAgainWithinTheKeepAliveTimeoutIsReused() throws Exception {
    UpstreamClient client =
        UpstreamClient.create(
            testKit.system(), settings(Map.of("providers.openai.keep-alive-timeout", "10s")));

    bodyOf(await(client.call(Provider.OPENAI, "/v1/chat/completions", json())));
    Thread.sleep(300); // the test's pace: a pause well within the 10 s keep-alive
    bodyOf(await(client.call(Provider.OPENAI, "/v1/chat/completions", json())));

    assertEquals(1, upstream.connections());
  }

  // --- max-call-duration
  // --------------------------------------------------------------------------

  @Test
  void aStreamStillRunningAtMaxCallDurationIsCutAndNamedSo() throws Exception {
    UpstreamClient client =
        UpstreamClient.create(
            testKit.system(), settings(Map.of("providers.max-call-duration", "1200ms")));
    upstream.script(RawUpstream.Script.stream(10, Duration.ofMillis(300)));

    long start = System.nanoTime();
    UpstreamResult.Responded responded =
        assertInstanceOf(
            UpstreamResult.Responded.class,
            await(client.call(Provider.OPENAI, "/v1/chat/completions", json())));
    MeteredStream metered =
        StreamMeter.create(testKit.system(), client.settings())
            .meter(responded.body(), ApiKind.OPENAI_CHAT_COMPLETIONS);
    metered.toClient().runWith(Sink.ignore(), MAT);
    StreamOutcome outcome = await(metered.outcome());
    long tookMs = (System.nanoTime() - start) / 1_000_000;

    assertEquals(java.util.Optional.of(SafeErrors.MAX_CALL_DURATION), outcome.errorClass());
    assertFalse(outcome.usageSettled(), "a cut call is kept at its worst case");
    assertTrue(
        tookMs >= 1_100 && tookMs < 2_800, "cut at the limit, not at the end: " + tookMs + " ms");
  }

  @Test
  void aStreamEndingWithinMaxCallDurationIsWhole() throws Exception {
    UpstreamClient client =
        UpstreamClient.create(
            testKit.system(), settings(Map.of("providers.max-call-duration", "5s")));
    upstream.script(RawUpstream.Script.stream(4, Duration.ofMillis(200)));

    String body = bodyOf(await(client.call(Provider.OPENAI, "/v1/chat/completions", json())));

    assertTrue(body.contains("{\"n\":3}"), body);
  }

  // --- the one retry of what was never sent
  // --------------------------------------------------------

  /**
   * A transport whose connection attempts fail as {@code failureOfAttempt} says (null: really
   * connect). The pool asks for the connection flow once and materializes it per connection, so the
   * choice is made per materialization.
   */
  private static final class FailingConnects extends ClientTransport {
    final AtomicInteger connects = new AtomicInteger();
    private final IntFunction<Throwable> failureOfAttempt;

    FailingConnects(IntFunction<Throwable> failureOfAttempt) {
      this.failureOfAttempt = failureOfAttempt;
    }

    static FailingConnects first(Throwable failure) {
      return new FailingConnects(attempt -> attempt == 1 ? failure : null);
    }

    @Override
    public Flow<ByteString, ByteString, CompletionStage<OutgoingConnection>> connectTo(
        String host, int port, ClientConnectionSettings settings, ActorSystem system) {
      return Flow.fromMaterializer(
              (mat, attributes) -> {
                Throwable failure = failureOfAttempt.apply(connects.incrementAndGet());
                return failure == null
                    ? ClientTransport.TCP().connectTo(host, port, settings, system)
                    : failing(failure);
              })
          .mapMaterializedValue(connection -> connection.thenCompose(c -> c));
    }

    private static Flow<ByteString, ByteString, CompletionStage<OutgoingConnection>> failing(
        Throwable failure) {
      return Flow.fromSinkAndSourceMat(
          Sink.<ByteString>ignore(),
          Source.<ByteString>failed(failure),
          (sunk, failed) -> CompletableFuture.<OutgoingConnection>failedFuture(failure));
    }
  }

  /** How Pekko reports a refused connect: the JDK's ConnectException as the cause. */
  private static Throwable refused() {
    return new StreamTcpException("Tcp command failed")
        .initCause(new ConnectException("Connection refused"));
  }

  @Test
  void aRefusedConnectIsSentOnceMoreAndAnswered() throws Exception {
    FailingConnects transport = FailingConnects.first(refused());
    UpstreamClient client = UpstreamClient.create(testKit.system(), settings(Map.of()), transport);

    assertEquals(
        "{\"ok\":true}",
        bodyOf(await(client.call(Provider.OPENAI, "/v1/chat/completions", json()))));
    assertEquals(2, transport.connects.get());
    assertEquals(1, upstream.requests(), "the provider saw the call once");
  }

  @Test
  void aFailedTlsHandshakeIsSentOnceMoreAndAnswered() throws Exception {
    FailingConnects transport =
        FailingConnects.first(new SSLHandshakeException("certificate expired"));
    UpstreamClient client = UpstreamClient.create(testKit.system(), settings(Map.of()), transport);

    assertEquals(
        "{\"ok\":true}",
        bodyOf(await(client.call(Provider.OPENAI, "/v1/chat/completions", json()))));
    assertEquals(2, transport.connects.get());
  }

  @Test
  void anotherTlsErrorIsNotSentAgainAndMayHaveBeenBilled() throws Exception {
    FailingConnects transport = FailingConnects.first(new SSLException("bad record MAC"));
    UpstreamClient client = UpstreamClient.create(testKit.system(), settings(Map.of()), transport);

    UpstreamResult.ConnectionFailed failed =
        assertInstanceOf(
            UpstreamResult.ConnectionFailed.class,
            await(client.call(Provider.OPENAI, "/v1/chat/completions", json())));

    assertEquals(SafeErrors.TLS_FAILED, failed.safeErrorClass());
    assertTrue(failed.mayHaveReachedProvider());
    assertEquals(1, transport.connects.get());
  }

  @Test
  void aStreamedBodyIsNeverSentAgainItCannotBeReplayed() throws Exception {
    FailingConnects transport = FailingConnects.first(refused());
    UpstreamClient client = UpstreamClient.create(testKit.system(), settings(Map.of()), transport);
    UpstreamRequest upload =
        new UpstreamRequest(
            HttpMethods.POST,
            List.of(),
            new UpstreamBody.Streamed(
                ContentTypes.APPLICATION_OCTET_STREAM,
                3,
                Source.single(ByteString.fromString("abc"))));

    UpstreamResult.ConnectionFailed failed =
        assertInstanceOf(
            UpstreamResult.ConnectionFailed.class,
            await(client.call(Provider.OPENAI, "/v1/audio/transcriptions", upload)));

    assertEquals(SafeErrors.CONNECT_FAILED, failed.safeErrorClass());
    assertFalse(failed.mayHaveReachedProvider(), "never sent: free");
    assertEquals(1, transport.connects.get());
  }

  @Test
  void aSecondRefusalIsTheAnswerThereIsNoThirdTry() throws Exception {
    FailingConnects transport = new FailingConnects(attempt -> refused());
    UpstreamClient client = UpstreamClient.create(testKit.system(), settings(Map.of()), transport);

    UpstreamResult.ConnectionFailed failed =
        assertInstanceOf(
            UpstreamResult.ConnectionFailed.class,
            await(client.call(Provider.OPENAI, "/v1/chat/completions", json())));

    assertEquals(SafeErrors.CONNECT_FAILED, failed.safeErrorClass());
    assertFalse(failed.mayHaveReachedProvider());
    // A third try would be a non-event: nothing to wait for. The retry follows a refusal at once,
    // so a third one would have come long before this pause ends.
    Thread.sleep(500);
    assertEquals(2, transport.connects.get(), "one retry, no third try");
  }
}
