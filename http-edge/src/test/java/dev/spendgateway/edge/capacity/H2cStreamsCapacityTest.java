package dev.spendgateway.edge.capacity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import java.io.IOException;
import java.math.BigDecimal;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.ResponseFuture;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.stream.BoundedSourceQueue;
import org.apache.pekko.stream.Materializer;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Long streams through the HTTP/2 cleartext listener ({@code gateway.http2-port}), as a proxy in
 * front of the gateway sends them: a few hundred paused streams multiplexed on two connections, all
 * open upstream at the same moment, all whole, all settled at exactly their real cost. On the same
 * gateway the HTTP/1.1 port still serves callers, and the HTTP/2 port refuses HTTP/1.1 (it has no
 * header-read timeout; that guard stays on the HTTP/1.1 port, tested in SecurityTest).
 */
class H2cStreamsCapacityTest {
  private static final int STREAMS = 300;

  /** Two HTTP/2 connections, 150 streams each: multiplexed, and spread over more than one. */
  private static final int CONNECTIONS = 2;

  private static final Duration MAX_HOLD = Duration.ofSeconds(60);

  @Test
  void hundreds_of_paused_streams_over_two_h2c_connections_are_served_at_once_and_settle_exactly()
      throws Exception {
    int h2cPort = freePort();
    Map<String, Object> h2c = Map.of("gateway.http2-port", h2cPort);
    try (TestGateway gw = CapacityGateway.start("h2c-streams", h2c)) {
      // Pekko's defaults only: the gateway's conf would end the test JVM when this system stops.
      ActorSystem client = ActorSystem.create("h2c-client", ConfigFactory.defaultReference());
      try {
        gw.sim.scriptForever(SimRoute.OPENAI_CHAT, Fault.streamHold(2, MAX_HOLD));
        Brand brand = Brand.fresh("h2c");
        List<Connection> connections = Connection.open(client, h2cPort);
        List<CompletableFuture<Answer>> calls = new ArrayList<>();
        for (int i = 0; i < STREAMS; i++) {
          CompletionStage<Answer> call =
              connections
                  .get(i % CONNECTIONS)
                  .send(chatStream(h2cPort, brand))
                  .thenCompose(r -> Answer.read(r, client));
          calls.add(call.toCompletableFuture());
        }

        // All open upstream at once, through two caller connections, each waiting at its hold.
        CapacityGateway.awaitHeldUpstream(gw, STREAMS);
        assertEquals(STREAMS, gw.sim.peakOpenStreams(), "streams open upstream at once");

        // While they are held, HTTP/1.1 callers are still served on the HTTP/1.1 port...
        java.net.http.HttpResponse<String> http1 = gw.send(gw.get("/readyz").build());
        assertEquals(200, http1.statusCode(), http1.body());
        // ...and the HTTP/2 port answers an HTTP/1.1 request 505, naming that port.
        String refused = http1On(h2cPort);
        assertTrue(refused.startsWith("HTTP/1.1 505"), refused);
        assertTrue(refused.contains("http_version_not_supported"), refused);

        gw.sim.releaseHeld();
        CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        for (CompletableFuture<Answer> call : calls) {
          Answer a = call.get();
          assertEquals("HTTP/2.0", a.protocol());
          assertEquals(200, a.status(), a.body());
          assertTrue(
              a.body().contains("Hello") && a.body().stripTrailing().endsWith("data: [DONE]"),
              "a whole stream: " + a.body());
        }
        assertEquals(STREAMS, gw.sim.finishedStreams(), "streams sent to their end");

        JsonNode usage = gw.awaitSettled(brand.id());
        JsonNode daily = TestGateway.cap(usage, "brand_daily");
        assertEquals(
            0,
            CapacityGateway.OPENAI_CALL_USD
                .multiply(BigDecimal.valueOf(STREAMS))
                .compareTo(TestGateway.money(daily, "spentUsd")),
            daily.toString());
        assertEquals(
            0,
            BigDecimal.ZERO.compareTo(TestGateway.money(daily, "reservedUsd")),
            daily.toString());
      } finally {
        client.terminate();
      }
    }
  }

  /**
   * A call waiting for its answer's headers holds its body (a refused connection sends it again),
   * and an h2c body comes with no declared length. Counted at the route's 4 MiB limit for as long
   * as its call waited, 64 MiB of body memory let 16 such calls in and answered the rest 503
   * body_memory: an outage behind an h2c proxy at its 17th slow call. A small body is now handed
   * over whole with its size (pekko.http.server.http2.min-collect-strict-entity-size), so even a
   * burst of 300 fits; a larger one streams in at the route's limit and keeps only its real size
   * once it is in, so calls that arrive while others wait fit too.
   */
  @ParameterizedTest(name = "{0}-byte prompts, {1} at a time: all {2} admitted")
  @CsvSource({
    // prompt bytes, sent at a time, calls
    "20,             300,            300", // a burst: each body known whole on arrival
    "16384,          10,             300", // streamed in (past 8 KiB), then trimmed to its size
  })
  void hundreds_of_h2c_calls_waiting_for_their_headers_fit_a_small_body_memory(
      int promptBytes, int wave, int callCount) throws Exception {
    int h2cPort = freePort();
    double share = (double) (64L * 1024 * 1024) / Runtime.getRuntime().maxMemory();
    Map<String, Object> overrides =
        Map.of("gateway.http2-port", h2cPort, "gateway.body-memory-share", share);
    try (TestGateway gw = CapacityGateway.start("h2c-waiting", overrides)) {
      ActorSystem client = ActorSystem.create("h2c-waiting", ConfigFactory.defaultReference());
      try {
        // A JSON answer held before its headers: every call waits with its body in memory.
        gw.sim.scriptForever(SimRoute.OPENAI_CHAT, Fault.streamHold(0, MAX_HOLD));
        Brand brand = Brand.fresh("h2c-waiting");
        List<Connection> connections = Connection.open(client, h2cPort);
        String body =
            "{\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":32,"
                + "\"messages\":[{\"role\":\"user\",\"content\":\""
                + "a".repeat(promptBytes)
                + "\"}]}";
        List<CompletableFuture<Answer>> calls = new ArrayList<>();
        while (calls.size() < callCount) {
          for (int i = 0; i < wave; i++) {
            calls.add(
                connections
                    .get(calls.size() % CONNECTIONS)
                    .send(chat(h2cPort, brand, body))
                    .thenCompose(r -> Answer.read(r, client))
                    .toCompletableFuture());
          }
          awaitHeldOrRefused(gw, calls);
        }

        gw.sim.releaseHeld();
        CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        for (CompletableFuture<Answer> call : calls) {
          assertEquals(200, call.get().status(), call.get().body());
        }
        gw.awaitSettled(brand.id());
      } finally {
        client.terminate();
      }
    }
  }

  /**
   * Until every call sent waits upstream; fails as soon as a call is answered before that. Between
   * looks at the simulator's count it waits for the first answer, so a refusal ends the wait at
   * once.
   */
  private static void awaitHeldOrRefused(TestGateway gw, List<CompletableFuture<Answer>> calls)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(45);
    CompletableFuture<Object> firstAnswer =
        CompletableFuture.anyOf(calls.toArray(CompletableFuture[]::new));
    while (gw.sim.heldStreams() < calls.size()) {
      assertTrue(System.nanoTime() < deadline, gw.sim.heldStreams() + " held of " + calls.size());
      try {
        Answer early = (Answer) firstAnswer.get(10, TimeUnit.MILLISECONDS);
        throw new AssertionError(
            "answered before its hold was released: " + early.status() + " " + early.body());
      } catch (java.util.concurrent.TimeoutException stillWaiting) {
        // nobody answered: look at the count again
      }
    }
  }

  private static HttpRequest chatStream(int port, Brand brand) {
    return chat(port, brand, CapacityGateway.chatStream());
  }

  private static HttpRequest chat(int port, Brand brand, String body) {
    List<org.apache.pekko.http.javadsl.model.HttpHeader> headers = new ArrayList<>();
    headers.add(RawHeader.create("authorization", "Bearer " + CapacityGateway.TOKEN));
    brand.headerMap().forEach((k, v) -> headers.add(RawHeader.create(k, v)));
    return HttpRequest.create("http://127.0.0.1:" + port + TestGateway.CHAT)
        .withMethod(HttpMethods.POST)
        .withHeaders(headers)
        .withEntity(ContentTypes.APPLICATION_JSON, body);
  }

  /** One HTTP/2 connection (prior knowledge); responses matched to requests by association. */
  private static final class Connection {
    private final BoundedSourceQueue<HttpRequest> queue;

    Connection(ActorSystem system, int port) {
      queue =
          Source.<HttpRequest>queue(STREAMS)
              .via(
                  Http.get(system).connectionTo("127.0.0.1").toPort(port).http2WithPriorKnowledge())
              .to(
                  Sink.foreach(
                      r -> r.getAttribute(ResponseFuture.KEY()).get().future().complete(r)))
              .run(Materializer.matFromSystem(system));
    }

    /** {@link #CONNECTIONS} connections to {@code port}. */
    static List<Connection> open(ActorSystem system, int port) {
      List<Connection> connections = new ArrayList<>();
      for (int c = 0; c < CONNECTIONS; c++) {
        connections.add(new Connection(system, port));
      }
      return connections;
    }

    CompletionStage<HttpResponse> send(HttpRequest request) {
      CompletableFuture<HttpResponse> future = new CompletableFuture<>();
      queue.offer(request.addAttribute(ResponseFuture.KEY(), new ResponseFuture(future)));
      return future;
    }
  }

  private record Answer(String protocol, int status, String body) {
    static CompletionStage<Answer> read(HttpResponse r, ActorSystem system) {
      Materializer mat = Materializer.matFromSystem(system);
      return r.entity()
          .getDataBytes()
          .runFold(ByteString.emptyByteString(), ByteString::concat, mat)
          .thenApply(
              bytes -> new Answer(r.protocol().value(), r.status().intValue(), bytes.utf8String()));
    }
  }

  /** A plain HTTP/1.1 request on {@code port}; what came back, as text. */
  private static String http1On(int port) throws IOException {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(10_000);
      s.getOutputStream()
          .write(
              ("GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      return new String(s.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
