package dev.spendgateway.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.ResponseFuture;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.junit.jupiter.api.Test;

/** Starting on a caller's ActorSystem, binding, config, key checking and the main's arguments. */
class LifecycleTest {
  private final HttpClient http =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

  private int post(ProviderSimulator sim, String path, String headerName, String headerValue)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(sim.baseUrl() + path))
            .POST(HttpRequest.BodyPublishers.ofString("{}"));
    if (headerName != null) {
      b.header(headerName, headerValue);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofString()).statusCode();
  }

  @Test
  void startsOnAnExistingActorSystemAndLeavesItRunningOnClose() throws Exception {
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "gateway-like");
    try {
      ProviderSimulator sim =
          ProviderSimulator.start(system, SimConfig.defaults()).toCompletableFuture().get();
      assertTrue(sim.baseUrl().startsWith("http://127.0.0.1:"));
      assertTrue(sim.port() > 0);
      assertEquals(sim.baseUrl() + "/v1", sim.openAiBaseUrl());
      assertEquals(200, post(sim, "/v1/messages", null, null));
      sim.close();

      assertFalse(system.getWhenTerminated().toCompletableFuture().isDone());
      ProviderSimulator again =
          ProviderSimulator.startBlocking(system, SimConfig.defaults(), Duration.ofSeconds(5));
      assertEquals(200, post(again, "/v1/chat/completions", null, null));
      again.close();
    } finally {
      system.terminate();
    }
  }

  @Test
  void aTakenPortFailsTheStartWithAClearError() {
    try (ProviderSimulator first = ProviderSimulator.start(SimConfig.defaults())) {
      IllegalStateException e =
          assertThrows(
              IllegalStateException.class,
              () -> ProviderSimulator.start(SimConfig.defaults().withPort(first.port())));
      assertTrue(e.getMessage().contains("failed to start"), e.getMessage());
    }
  }

  @Test
  void expectedApiKeyIsEnforcedPerProviderConvention() throws Exception {
    try (ProviderSimulator sim =
        ProviderSimulator.start(SimConfig.defaults().withExpectedApiKey("right"))) {
      assertEquals(401, post(sim, "/v1/chat/completions", null, null));
      assertEquals(401, post(sim, "/v1/chat/completions", "authorization", "Bearer wrong"));
      assertEquals(200, post(sim, "/v1/chat/completions", "authorization", "Bearer right"));
      assertEquals(401, post(sim, "/v1/messages", "x-api-key", "wrong"));
      assertEquals(200, post(sim, "/v1/messages", "x-api-key", "right"));
      assertEquals(200, post(sim, "/v1/messages", "authorization", "Bearer right"));
      assertEquals("unauthorized", sim.received().get(0).fault());
    }
  }

  @Test
  void configuredLatencyAndUsageApplyToEveryCall() throws Exception {
    SimConfig config =
        SimConfig.defaults()
            .withLatency(Duration.ofMillis(200))
            .withUsage(Usage.of(3, 4))
            .withRecordLimit(2);
    try (ProviderSimulator sim = ProviderSimulator.start(config)) {
      long start = System.nanoTime();
      String body =
          http.send(
                  HttpRequest.newBuilder(URI.create(sim.baseUrl() + "/v1/messages"))
                      .POST(HttpRequest.BodyPublishers.ofString("{}"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      assertTrue((System.nanoTime() - start) / 1_000_000 >= 190);
      assertTrue(body.contains("\"input_tokens\":3"), body);
      sim.setLatency(Duration.ZERO);
      post(sim, "/v1/messages", null, null);
      post(sim, "/v1/messages", null, null);
      assertEquals(2, sim.received().size());
      assertEquals(3, sim.receivedCount());
    }
  }

  @Test
  void theH2cListenerServesTheSameApiAndRecordsEachCallsProtocol() throws Exception {
    try (ProviderSimulator sim = ProviderSimulator.start(SimConfig.defaults())) {
      String h2c = sim.serveH2c(0).toCompletableFuture().get(15, TimeUnit.SECONDS);
      URI uri = URI.create(h2c);
      ActorSystem<Void> client = ActorSystem.create(Behaviors.empty(), "h2c-client");
      try {
        CompletableFuture<org.apache.pekko.http.javadsl.model.HttpResponse> answer =
            new CompletableFuture<>();
        org.apache.pekko.http.javadsl.model.HttpRequest request =
            org.apache.pekko.http.javadsl.model.HttpRequest.POST(h2c + "/v1/messages")
                .withEntity(ContentTypes.APPLICATION_JSON, "{}")
                .addAttribute(ResponseFuture.KEY(), ResponseFuture.apply(answer));
        Source.single(request)
            .concat(Source.maybe())
            .via(
                Http.get(client)
                    .connectionTo(uri.getHost())
                    .toPort(uri.getPort())
                    .http2WithPriorKnowledge())
            .runWith(
                Sink.foreach(r -> r.getAttribute(ResponseFuture.KEY()).get().future().complete(r)),
                Materializer.matFromSystem(client));
        assertEquals(200, answer.get(15, TimeUnit.SECONDS).status().intValue());
      } finally {
        client.terminate();
      }
      post(sim, "/v1/messages", null, null);

      List<ReceivedCall> calls = sim.received();
      assertEquals(2, calls.size(), "one state behind both listeners");
      assertTrue(calls.get(0).overHttp2(), calls.get(0).protocol());
      assertFalse(calls.get(1).overHttp2(), calls.get(1).protocol());
    }
  }

  @Test
  void mainParsesItsArguments() {
    SimConfig c =
        ProviderSimMain.parse(
            new String[] {"--port", "9001", "--host", "127.0.0.2", "--latency-ms", "15"});
    assertEquals(9001, c.port());
    assertEquals("127.0.0.2", c.host());
    assertEquals(Duration.ofMillis(15), c.latency());
    assertEquals(
        SimConfig.defaults().withPort(0), ProviderSimMain.parse(new String[] {"--port", "0"}));
    String[] withH2c = {"--port", "0", "--h2c-port", "9002"};
    assertEquals(SimConfig.defaults().withPort(0), ProviderSimMain.parse(withH2c));
    assertEquals(9002, ProviderSimMain.h2cPort(withH2c));
    assertEquals(-1, ProviderSimMain.h2cPort(new String[] {"--port", "0"}), "off unless asked");
    for (List<String> bad :
        List.of(
            List.of("--port"),
            List.of("--port", "x"),
            List.of("--bogus"),
            List.of("--port", "70000"),
            List.of("--host", "127.0.0.1"),
            List.of("--port", "0", "--h2c-port"),
            List.of("--port", "0", "--h2c-port", "x"))) {
      assertThrows(
          IllegalArgumentException.class,
          () -> ProviderSimMain.parse(bad.toArray(String[]::new)),
          bad.toString());
    }
  }
}
