package dev.spendgateway.edge.router;

import static dev.spendgateway.edge.router.RouterGateway.post;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.testkit.GatewayPerClass;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every routing metric names the profile of the call it counts (issue 38, item 3): an operator
 * reading a latency, a status, a 429 or a failover can tell which profile's calls it was. One row
 * per kind of call; each row's series must have moved by at least one after its call.
 */
class RoutingMetricsProfileTest extends GatewayPerClass {
  @Override
  protected TestGateway startGateway() throws Exception {
    return RouterGateway.start("router/resilience-test.conf", "RoutingMetricsProfileTest");
  }

  /** What a row does to the gateway (scripts the simulator, makes one call), and its answer. */
  private interface CallUnderTest extends Function<TestGateway, HttpResponse<String>> {}

  static Stream<Arguments> rows() {
    return Stream.of(
        Arguments.of(
            "a fast-summary call whose OpenAI attempt failed is counted, both attempts and the"
                + " switch, under fast-summary",
            (CallUnderTest)
                gw -> {
                  gw.sim.script(SimRoute.OPENAI_CHAT, Fault.status(503));
                  return routed(gw, "fast-summary");
                },
            "anthropic",
            List.of(
                "gateway_upstream_responses_total{model=\"gpt-6.1-sol-mini\",profile=\"fast-summary\",provider=\"openai\",status=\"503\"}",
                "gateway_upstream_ttfb_seconds_count{model=\"gpt-6.1-sol-mini\",profile=\"fast-summary\",provider=\"openai\"}",
                "gateway_upstream_responses_total{model=\"claude-haiku-5-5\",profile=\"fast-summary\",provider=\"anthropic\",status=\"200\"}",
                "gateway_upstream_latency_seconds_count{model=\"claude-haiku-5-5\",profile=\"fast-summary\",provider=\"anthropic\"}",
                "gateway_router_attempts_total{outcome=\"ok\",profile=\"fast-summary\",provider=\"anthropic\"}",
                "gateway_router_failovers_total{profile=\"fast-summary\",to=\"anthropic\"}")),
        Arguments.of(
            "a long-draft call refused by OpenAI's rate limit counts the 429 under long-draft",
            (CallUnderTest)
                gw -> {
                  gw.sim.script(SimRoute.OPENAI_CHAT, Fault.rateLimited(30));
                  return routed(gw, "long-draft");
                },
            "anthropic",
            List.of(
                "gateway_upstream_too_many_requests_total{kind=\"rate_limit\",model=\"gpt-6.1-sol\",profile=\"long-draft\",provider=\"openai\"}",
                "gateway_upstream_responses_total{model=\"gpt-6.1-sol\",profile=\"long-draft\",provider=\"openai\",status=\"429\"}",
                "gateway_router_failovers_total{profile=\"long-draft\",to=\"anthropic\"}",
                "gateway_upstream_latency_seconds_count{model=\"claude-opus-5-5\",profile=\"long-draft\",provider=\"anthropic\"}")),
        Arguments.of(
            "a solo call answered at once is counted under solo",
            (CallUnderTest) gw -> routed(gw, "solo"),
            "openai",
            List.of(
                "gateway_upstream_responses_total{model=\"gpt-6.1-sol\",profile=\"solo\",provider=\"openai\",status=\"200\"}",
                "gateway_router_attempts_total{outcome=\"ok\",profile=\"solo\",provider=\"openai\"}",
                "gateway_upstream_ttfb_seconds_count{model=\"gpt-6.1-sol\",profile=\"solo\",provider=\"openai\"}")),
        Arguments.of(
            "a provider-route call names no profile: its series carry the empty one",
            (CallUnderTest) RoutingMetricsProfileTest::direct,
            null,
            List.of(
                "gateway_upstream_responses_total{model=\"gpt-6.1-sol-mini\",profile=\"\",provider=\"openai\",status=\"200\"}",
                "gateway_upstream_latency_seconds_count{model=\"gpt-6.1-sol-mini\",profile=\"\",provider=\"openai\"}")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void aCallsMetricsCarryItsProfile(
      String sentence, CallUnderTest call, String answeredBy, List<String> series) {
    Map<String, Double> before = samples(gw);
    HttpResponse<String> r = call.apply(gw);
    assertEquals(200, r.statusCode(), r.body());
    if (answeredBy != null) {
      assertEquals(answeredBy, r.headers().firstValue("x-gateway-provider").orElse(""));
    }
    Map<String, Double> after = samples(gw);
    for (String s : series) {
      double moved = after.getOrDefault(s, 0.0) - before.getOrDefault(s, 0.0);
      assertTrue(moved >= 1, s + " moved by " + moved + "; served: " + after.keySet());
    }
  }

  @Test
  void everyProfilesCallersGoneSeriesIsServedAtZeroFromTheStart() {
    Map<String, Double> s = samples(gw);
    for (String profile : List.of("", "fast-summary", "long-draft", "solo", "legacy-solo")) {
      for (String wait : List.of("queue", "pace", "before", "reserve")) {
        String series =
            "gateway_callers_gone_total{profile=\""
                + profile
                + "\",provider=\"anthropic\",wait=\""
                + wait
                + "\"}";
        assertTrue(s.containsKey(series), series + "; served: " + s.keySet());
      }
    }
  }

  private static HttpResponse<String> routed(TestGateway gw, String profile) {
    return post(gw, RouterGateway.chat(profile, false), RouterGateway.spendHeaders(id("metrics-")));
  }

  private static HttpResponse<String> direct(TestGateway gw) {
    var b =
        java.net.http.HttpRequest.newBuilder(java.net.URI.create(gw.base + TestGateway.CHAT))
            .header("content-type", "application/json")
            .POST(
                java.net.http.HttpRequest.BodyPublishers.ofString(
                    "{\"model\":\"gpt-6.1-sol-mini\",\"max_completion_tokens\":64,"
                        + "\"messages\":[{\"role\":\"user\",\"content\":\"Say hello.\"}]}"));
    RouterGateway.spendHeaders(id("direct-")).forEach(b::header);
    try {
      return gw.send(b.build());
    } catch (IOException | InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String id(String prefix) {
    return prefix + UUID.randomUUID();
  }

  /** Every sample of {@code /metrics}, keyed by its series as served (labels sorted by name). */
  private static Map<String, Double> samples(TestGateway gw) {
    try {
      String body =
          gw.send(
                  gw.get("/metrics")
                      .header("authorization", "Bearer " + RouterGateway.TOKEN)
                      .build())
              .body();
      Map<String, Double> out = new LinkedHashMap<>();
      body.lines()
          .filter(l -> !l.startsWith("#") && !l.isBlank())
          .forEach(
              l -> {
                int space = l.lastIndexOf(' ');
                out.put(l.substring(0, space), Double.parseDouble(l.substring(space + 1)));
              });
      return out;
    } catch (IOException | InterruptedException e) {
      throw new IllegalStateException(e);
    }
  }
}
