package dev.spendgateway.edge.e2e;

import static dev.spendgateway.edge.testkit.TestGateway.ANTHROPIC;
import static dev.spendgateway.edge.testkit.TestGateway.CHAT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.GatewayPerClass;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import java.net.http.HttpResponse;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A pass-through call and a routed call go through one call pipeline: the steps they share answer
 * and log the same way on every route (the request id on a refusal, the gateway's own share of the
 * call on {@code /metrics}).
 */
class OnePipelineE2ETest extends GatewayPerClass {
  private static final String ROUTER = "/v1/chat/completions";

  @Override
  protected TestGateway startGateway() throws Exception {
    return E2eGateway.start("one-pipeline");
  }

  private static String bodyFor(String path) {
    return switch (path) {
      case ANTHROPIC ->
          "{\"model\":\"claude-opus-5-5\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
      case CHAT ->
          "{\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
      default ->
          "{\"model\":\"fast-summary\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    };
  }

  @ParameterizedTest(name = "{0}: a bad spend header is a 400 that echoes and logs x-request-id")
  @ValueSource(strings = {ROUTER, CHAT, ANTHROPIC})
  void aRefusedSpendHeaderKeepsTheCallersRequestId(String path) throws Exception {
    String id = "one-pipeline-" + Long.toHexString(System.nanoTime());
    HttpResponse<String> r =
        gw.send(
            gw.postJson(path, bodyFor(path), Brand.fresh("twice"))
                .header("x-spend-lane", "free")
                .header("x-request-id", id)
                .build());

    assertEquals(400, r.statusCode(), r.body());
    assertEquals(Optional.of(id), r.headers().firstValue("x-request-id"));
    JsonNode line = gw.awaitOnlyAccessLine(id);
    assertEquals(400, line.path("status").asInt(), line.toString());
    assertEquals("bad_header", line.path("error").asText(), line.toString());
    assertTrue(gw.sim.received().isEmpty(), "nothing reached a provider");
  }

  @ParameterizedTest(name = "{0}: an answered call counts the gateway's own share of it")
  @ValueSource(strings = {ROUTER, CHAT, ANTHROPIC})
  void everyAnsweredCallRecordsTheGatewaysOverhead(String path) throws Exception {
    String series = "gateway_overhead_seconds_count{route=\"" + path + "\"}";
    Brand brand = Brand.fresh("overhead");
    double before = metric(series);

    HttpResponse<String> r = gw.send(gw.postJson(path, bodyFor(path), brand).build());
    assertEquals(200, r.statusCode(), r.body());
    gw.awaitSettled(brand.id());

    assertTrue(metric(series) > before, series + " stayed at " + before);
  }

  @Test
  void aRefusedRoutedCallCountsTheGatewaysOverheadToo() throws Exception {
    String series = "gateway_overhead_seconds_count{route=\"" + ROUTER + "\"}";
    double before = metric(series);

    HttpResponse<String> r =
        gw.send(
            gw.postJson(
                    ROUTER,
                    bodyFor(ROUTER).replace("fast-summary", "no-such-profile"),
                    Brand.fresh("p"))
                .build());

    assertEquals(400, r.statusCode(), r.body());
    assertTrue(metric(series) > before, series + " stayed at " + before);
  }

  /** One sample of the Prometheus text at /metrics; 0 when the series is not there yet. */
  private double metric(String series) throws Exception {
    HttpResponse<String> r =
        gw.send(gw.get("/metrics").header("x-api-key", E2eGateway.TOKEN).build());
    assertEquals(200, r.statusCode());
    return r.body()
        .lines()
        .filter(l -> l.startsWith(series + " "))
        .mapToDouble(l -> Double.parseDouble(l.substring(series.length() + 1).trim()))
        .findFirst()
        .orElse(0);
  }
}
