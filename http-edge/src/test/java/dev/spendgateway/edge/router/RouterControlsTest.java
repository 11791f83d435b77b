package dev.spendgateway.edge.router;

import static dev.spendgateway.edge.router.RouterGateway.attempts;
import static dev.spendgateway.edge.router.RouterGateway.post;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.testkit.GatewayPerClass;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * What a caller can steer and see on the router: {@code x-failover: never} keeps a call on the
 * profile's primary, and every answer names the model that answered and, for structured output, how
 * the schema was asked for ({@code x-gateway-structured-output}).
 */
class RouterControlsTest extends GatewayPerClass {
  @Override
  protected TestGateway startGateway() throws Exception {
    return RouterGateway.start("router/resilience-test.conf", "RouterControlsTest");
  }

  private static Map<String, String> headers(String id, String... extra) {
    Map<String, String> m = RouterGateway.spendHeaders(id);
    for (int i = 0; i < extra.length; i += 2) {
      m.put(extra[i], extra[i + 1]);
    }
    return m;
  }

  private static String header(HttpResponse<String> r, String name) {
    return r.headers().firstValue(name).orElse(null);
  }

  @Test
  void aPinnedCallAnswersThePrimarysOwnErrorAndNeverCallsTheFallback() {
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.status(401));
    String id = "pin-" + UUID.randomUUID();
    HttpResponse<String> r =
        post(gw, RouterGateway.chat("fast-summary", false), headers(id, "x-failover", "never"));

    assertEquals(401, r.statusCode(), r.body());
    assertEquals("openai", header(r, "x-gateway-provider"));
    assertEquals("false", header(r, "x-gateway-failover"));
    assertEquals("gpt-6.1-sol-mini", header(r, "x-gateway-model"));
    assertEquals(null, header(r, "x-gateway-error"), "the provider's error, not the gateway's");
    assertEquals(List.of(), gw.sim.received(SimRoute.ANTHROPIC_MESSAGES), "Claude never called");
    assertEquals(
        List.of("openai:401:zero"),
        attempts(gw, id, 1).stream().map(RouterGateway.Entry::brief).toList());

    // The same fault without the header fails over, and the answer names Claude's model.
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.status(401));
    HttpResponse<String> free =
        post(gw, RouterGateway.chat("fast-summary", false), headers("pin-" + UUID.randomUUID()));
    assertEquals(200, free.statusCode(), free.body());
    assertEquals("anthropic", header(free, "x-gateway-provider"));
    assertEquals("claude-haiku-5-5", header(free, "x-gateway-model"));
    assertEquals(null, header(free, "x-gateway-structured-output"), "no structured output asked");
  }

  @Test
  void aPinnedCallInAConversationStuckToClaudeStaysOnThePrimary() {
    String conversation = "conv-" + UUID.randomUUID();
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.status(503));
    HttpResponse<String> switched =
        post(
            gw,
            RouterGateway.chat("fast-summary", false),
            headers("pin-" + UUID.randomUUID(), "x-conversation-id", conversation));
    assertEquals("anthropic", header(switched, "x-gateway-provider"), switched.body());

    HttpResponse<String> pinned =
        post(
            gw,
            RouterGateway.chat("fast-summary", false),
            headers(
                "pin-" + UUID.randomUUID(),
                "x-conversation-id",
                conversation,
                "x-failover",
                "never"));
    assertEquals(200, pinned.statusCode(), pinned.body());
    assertEquals("openai", header(pinned, "x-gateway-provider"));
  }

  @Test
  void anUnknownFailoverValueIsRefusedNamingTheHeaderAndNothingIsSent() {
    HttpResponse<String> r =
        post(
            gw,
            RouterGateway.chat("fast-summary", false),
            headers("pin-" + UUID.randomUUID(), "x-failover", "nevr"));
    assertEquals(400, r.statusCode(), r.body());
    assertTrue(r.body().contains("\"param\":\"x-failover\""), r.body());
    assertEquals(List.of(), gw.sim.received(), "nothing reached a provider");
  }

  private static String structured(String property) {
    return "{\"model\":\"structured-analysis\",\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":\"Analyse.\"}],"
        + "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"r\",\"strict\":true,"
        + "\"schema\":{\"type\":\"object\",\"properties\":{\""
        + property
        + "\":{\"type\":\"string\"}}}}}}";
  }

  @Test
  void theCallerSeesWhetherItsSchemaWasEnforced() {
    String property = "p" + UUID.randomUUID().toString().substring(0, 8);
    HttpResponse<String> strict =
        post(gw, structured(property), headers("so-" + UUID.randomUUID()));
    assertEquals(200, strict.statusCode(), strict.body());
    assertEquals("strict", header(strict, "x-gateway-structured-output"));

    // OpenAI refuses the strict schema: the retry in json_object mode is what answered.
    gw.sim.script(
        SimRoute.OPENAI_CHAT,
        Fault.status(
            400,
            Map.of(),
            "{\"error\":{\"message\":\"Invalid schema for response_format 'r': 'additionalProperties' is required to be supplied and to be false.\","
                + "\"type\":\"invalid_request_error\",\"param\":\"response_format\",\"code\":\"invalid_json_schema\"}}"));
    String other = "q" + UUID.randomUUID().toString().substring(0, 8);
    HttpResponse<String> downgraded =
        post(gw, structured(other), headers("so-" + UUID.randomUUID()));
    assertEquals(200, downgraded.statusCode(), downgraded.body());
    assertEquals("json_object", header(downgraded, "x-gateway-structured-output"));

    // OpenAI down, Claude's grammar too large: the schema only reached Claude's prompt.
    gw.sim.script(SimRoute.OPENAI_CHAT, Fault.status(503));
    gw.sim.script(
        SimRoute.ANTHROPIC_MESSAGES,
        Fault.status(
            400,
            Map.of(),
            "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"The compiled grammar is too large.\"}}"));
    String third = "r" + UUID.randomUUID().toString().substring(0, 8);
    HttpResponse<String> inPrompt = post(gw, structured(third), headers("so-" + UUID.randomUUID()));
    assertEquals(200, inPrompt.statusCode(), inPrompt.body());
    assertEquals("anthropic", header(inPrompt, "x-gateway-provider"));
    assertEquals("schema_in_prompt", header(inPrompt, "x-gateway-structured-output"));
    assertFalse(header(inPrompt, "x-gateway-model").isEmpty());
  }
}
