package dev.spendgateway.upstream.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import com.typesafe.config.ConfigFactory;
import dev.spendgateway.policy.catalog.Provider;
import java.net.ConnectException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.ClientTransport;
import org.apache.pekko.http.javadsl.OutgoingConnection;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.settings.ClientConnectionSettings;
import org.apache.pekko.stream.StreamTcpException;
import org.apache.pekko.stream.javadsl.Flow;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The providers' pools are built at start ({@link UpstreamClient#startPools}), with the shipped
 * 10,000 slots, and the calls afterwards use exactly those pools: none is built on a first call. No
 * connection leaves the test: the transport refuses every connect (and counts them, proving the
 * calls went through a pool).
 */
class PoolsAtStartTest {
  private final ActorTestKit testKit = ActorTestKit.create();

  @AfterEach
  void stop() {
    testKit.shutdownTestKit();
  }

  @Test
  void both_pools_are_built_before_any_call_and_the_first_calls_use_them() throws Exception {
    UpstreamSettings settings =
        UpstreamSettings.fromConfig(
            ConfigFactory.parseMap(
                    Map.of(
                        "providers.openai.base-url", "https://api.openai.com",
                        "providers.anthropic.base-url", "http://127.0.0.1:9"))
                .withFallback(UpstreamSettingsTest.shippedConfig()));
    assertEquals(10_000, settings.provider(Provider.OPENAI).maxConnections(), "the shipped size");
    RefusingConnects transport = new RefusingConnects();
    UpstreamClient client = UpstreamClient.create(testKit.system(), settings, transport);

    assertEquals(0, await(UpstreamClient.poolsRunning(testKit.system())), "none before start");
    assertEquals(2, await(client.startPools()), "one pool per provider (different hosts)");

    for (Provider provider : List.of(Provider.OPENAI, Provider.ANTHROPIC)) {
      // A streamed body: not sent again after the refused connect, so one connect per call.
      UpstreamBody body =
          new UpstreamBody.Streamed(
              ContentTypes.APPLICATION_JSON, 2, Source.single(ByteString.fromString("{}")));
      UpstreamResult result =
          await(
              client.call(
                  provider, "/v1/x", new UpstreamRequest(HttpMethods.POST, List.of(), body)));
      assertInstanceOf(UpstreamResult.ConnectionFailed.class, result);
    }
    assertEquals(2, transport.connects.get(), "the calls went through the pools");
    assertEquals(
        2,
        await(UpstreamClient.poolsRunning(testKit.system())),
        "the calls used the pools built at start, none was built for them");
  }

  private static <T> T await(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  /** Every connect refused at once, as a closed port would; counted. */
  private static final class RefusingConnects extends ClientTransport {
    final AtomicInteger connects = new AtomicInteger();

    @Override
    public Flow<ByteString, ByteString, CompletionStage<OutgoingConnection>> connectTo(
        String host, int port, ClientConnectionSettings settings, ActorSystem system) {
      return Flow.fromMaterializer(
              (mat, attributes) -> {
                connects.incrementAndGet();
                Throwable refused =
                    new StreamTcpException("Tcp command failed")
                        .initCause(new ConnectException("Connection refused"));
                return Flow.fromSinkAndSourceMat(
                    Sink.<ByteString>ignore(),
                    Source.<ByteString>failed(refused),
                    (sunk, failed) -> CompletableFuture.<OutgoingConnection>failedFuture(refused));
              })
          .mapMaterializedValue(connection -> connection.thenCompose(c -> c));
    }
  }
}
