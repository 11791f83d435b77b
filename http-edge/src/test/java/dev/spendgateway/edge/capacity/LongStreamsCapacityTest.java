package dev.spendgateway.edge.capacity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import java.math.BigDecimal;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Many long streams held open at once through one gateway, with the shipped limits: more paused
 * streams than the old upstream pool (256 connections per provider) could serve at once. Every one
 * must be open upstream at the same moment (none queued behind another's connection), reach the
 * caller whole, and settle at exactly its real cost. Scaled down from the real shape (thousands of
 * streams pausing 20 s) to a few hundred held only until all of them are open.
 */
class LongStreamsCapacityTest {
  /** Above the old pool's 256: with it, the last 44 would have waited for a connection. */
  private static final int STREAMS = 300;

  /**
   * Each stream goes silent after its first content event, as a long generation does, until all are
   * open (or this long, so a failing run still ends).
   */
  private static final Duration MAX_HOLD = Duration.ofSeconds(60);

  @Test
  void hundreds_of_paused_streams_are_all_served_at_once_and_settle_exactly() throws Exception {
    try (TestGateway gw = CapacityGateway.start("long-streams", Map.of())) {
      // After the role chunk and the first word (2 events), silence until released, then the rest
      // and the usage.
      gw.sim.scriptForever(SimRoute.OPENAI_CHAT, Fault.streamHold(2, MAX_HOLD));
      Brand brand = Brand.fresh("capacity");
      HttpClient client =
          HttpClient.newBuilder()
              .version(HttpClient.Version.HTTP_1_1)
              .connectTimeout(Duration.ofSeconds(10))
              .build();

      List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
      for (int i = 0; i < STREAMS; i++) {
        calls.add(
            client.sendAsync(
                gw.postJson(TestGateway.CHAT, CapacityGateway.chatStream(), brand)
                    .timeout(Duration.ofSeconds(60))
                    .build(),
                HttpResponse.BodyHandlers.ofString()));
      }

      // Served at once: the simulator has every stream open at the same moment, each silent after
      // its first word. Waited for, not assumed: opening hundreds takes seconds on a loaded box.
      CapacityGateway.awaitHeldUpstream(gw, STREAMS);
      assertEquals(STREAMS, gw.sim.peakOpenStreams(), "streams open upstream at once");
      gw.sim.releaseHeld();
      CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
      for (CompletableFuture<HttpResponse<String>> call : calls) {
        HttpResponse<String> r = call.get();
        assertEquals(200, r.statusCode(), r.body());
        assertTrue(
            r.body().contains("Hello") && r.body().stripTrailing().endsWith("data: [DONE]"),
            "a whole stream: " + r.body());
      }
      assertEquals(STREAMS, gw.sim.finishedStreams(), "streams sent to their end");

      // Settled exactly: every call at its real cost, nothing still held.
      JsonNode usage = gw.awaitSettled(brand.id());
      JsonNode daily = TestGateway.cap(usage, "brand_daily");
      assertEquals(
          0,
          CapacityGateway.OPENAI_CALL_USD
              .multiply(BigDecimal.valueOf(STREAMS))
              .compareTo(TestGateway.money(daily, "spentUsd")),
          daily.toString());
      assertEquals(
          0, BigDecimal.ZERO.compareTo(TestGateway.money(daily, "reservedUsd")), daily.toString());
    }
  }
}
