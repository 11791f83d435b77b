package dev.spendgateway.edge.capacity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.upstream.client.UpstreamClient;
import java.net.http.HttpResponse;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The providers' connection pools (the shipped 10,000 slots each) are built before {@code /readyz}
 * says 200, so no caller's first call pays for building one: the calls after it run on the pools
 * that were already there.
 */
class PoolsBeforeReadyTest {
  @Test
  void readyz_200_means_the_pools_are_built_and_the_first_calls_build_none() throws Exception {
    try (TestGateway gw = CapacityGateway.start("pools-before-ready", Map.of())) {
      // TestGateway.start returns once /readyz answered 200.
      int atReady = pools(gw);
      // Both providers point at the one simulator: one pool, or two if their settings differ.
      assertTrue(atReady >= 1, "pools built by the time /readyz is 200: " + atReady);

      Brand brand = Brand.fresh("pools");
      HttpResponse<String> chat =
          gw.send(gw.postJson(TestGateway.CHAT, CapacityGateway.chatStream(), brand).build());
      assertEquals(200, chat.statusCode(), chat.body());
      HttpResponse<String> messages =
          gw.send(
              gw.postJson(TestGateway.ANTHROPIC, CapacityGateway.messagesStream(), brand)
                  .header("anthropic-version", "2023-06-01")
                  .build());
      assertEquals(200, messages.statusCode(), messages.body());
      assertTrue(chat.body().contains("[DONE]"), chat.body());

      assertEquals(atReady, pools(gw), "the first calls ran on the pools built at start");
    }
  }

  private static int pools(TestGateway gw) throws Exception {
    return UpstreamClient.poolsRunning(gw.system()).toCompletableFuture().get(30, TimeUnit.SECONDS);
  }
}
