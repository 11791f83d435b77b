package dev.spendgateway.upstream.failover;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.policy.catalog.Provider;
import dev.spendgateway.upstream.RawUpstream;
import dev.spendgateway.upstream.client.UpstreamClient;
import dev.spendgateway.upstream.client.UpstreamRequest;
import dev.spendgateway.upstream.client.UpstreamResult;
import dev.spendgateway.upstream.client.UpstreamSettings;
import java.io.File;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The breaker times a call only up to its response headers, and never for less than the provider
 * may take to start answering: a non-streamed answer's headers come only after the whole
 * generation, so a shorter breaker would call a long answer a failure and fail it over while it
 * still bills. Times are scaled down through the same keys production reads.
 */
class BreakerTimingTest {
  private static final ActorTestKit testKit = ActorTestKit.create();

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /**
   * The shipped failover and providers blocks, with the breaker and the upstream timers scaled
   * down.
   */
  private static Config scaled(String baseUrl, Map<String, Object> overrides) {
    Map<String, Object> o =
        new java.util.HashMap<>(
            Map.of(
                "failover.breaker.max-failures", 1,
                "failover.breaker.call-timeout", "300ms",
                "providers.openai.base-url", baseUrl,
                // Far above the 1.5 s the scripted upstream waits, so only the breaker's timing is
                // under test
                // even on a loaded machine.
                "providers.openai.response-start-timeout", "15s",
                "providers.openai.idle-timeout", "15s",
                "providers.anthropic.base-url", baseUrl,
                "providers.anthropic.response-start-timeout", "1s",
                "providers.anthropic.idle-timeout", "1s"));
    o.putAll(overrides);
    return ConfigFactory.parseMap(o)
        .withFallback(Confs.shipped())
        .withFallback(ConfigFactory.parseFile(new File("../conf/providers.conf")))
        .resolve();
  }

  @ParameterizedTest(name = "call-timeout {0}, longest response start {1} → breaker times {2}")
  @CsvSource({
    // shorter than a response may take to start: raised to it plus the margin
    "300ms, 2s,   12s",
    "60s,   600s, 610s",
    // already long enough: kept as configured
    "610s,  600s, 610s",
    "2s,    2s,   2s"
  })
  void theCallTimeoutCoversTheLongestResponseStart(
      String configured, String responseStart, String expected) {
    Config c =
        scaled(
            "http://127.0.0.1:1",
            Map.of(
                "failover.breaker.call-timeout", configured,
                "providers.openai.response-start-timeout", responseStart,
                "providers.openai.idle-timeout", responseStart));
    assertEquals(
        Duration.parse("PT" + expected.toUpperCase()),
        FailoverSettings.fromConfig(c).breaker().callTimeout());
  }

  @Test
  void theShippedBreakerAlreadyCoversTheShippedResponseStart() {
    Config shipped =
        Confs.shipped()
            .withFallback(ConfigFactory.parseFile(new File("../conf/providers.conf")))
            .resolve();
    Duration configured = shipped.getDuration("failover.breaker.call-timeout");
    assertEquals(
        configured,
        FailoverSettings.fromConfig(shipped).breaker().callTimeout(),
        "not raised: the file is right");
    assertTrue(
        configured.compareTo(shipped.getDuration("providers.openai.response-start-timeout")) >= 0);
    assertTrue(
        configured.compareTo(shipped.getDuration("providers.anthropic.response-start-timeout"))
            >= 0);
  }

  @Test
  void anAnswerWhoseHeadersComeLaterThanTheConfiguredCallTimeoutIsNoFailure() throws Exception {
    try (RawUpstream upstream = new RawUpstream()) {
      upstream.script(RawUpstream.Script.jsonAfter(Duration.ofMillis(1_500)));
      Config config = scaled(upstream.baseUrl(), Map.of());
      FailoverSettings settings = FailoverSettings.fromConfig(config);
      ProviderBreakers breakers =
          ProviderBreakers.create(testKit.system(), settings.breaker(), (p, s) -> {});
      UpstreamClient client =
          UpstreamClient.create(testKit.system(), UpstreamSettings.fromConfig(config));
      UpstreamRequest request =
          UpstreamRequest.post(
              List.of(), ContentTypes.APPLICATION_JSON, ByteString.fromString("{\"model\":\"m\"}"));

      UpstreamResult result =
          breakers
              .withBreaker(
                  Provider.OPENAI,
                  () -> client.call(Provider.OPENAI, "/v1/chat/completions", request),
                  r -> !(r instanceof UpstreamResult.Responded))
              .toCompletableFuture()
              .get(40, TimeUnit.SECONDS);

      UpstreamResult.Responded responded =
          assertInstanceOf(UpstreamResult.Responded.class, result, result::toString);
      assertEquals(200, responded.status());
      responded.discardBody(org.apache.pekko.stream.Materializer.matFromSystem(testKit.system()));
      assertEquals(
          ProviderBreakers.State.CLOSED,
          breakers.state(Provider.OPENAI),
          "a long answer is not a provider failure (one failure would have opened it)");
      assertEquals(1, upstream.requests(), "and it was not sent twice");
    }
  }
}
