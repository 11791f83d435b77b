package dev.spendgateway.edge.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimConfig;
import dev.spendgateway.sim.SimRoute;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The operator's status and circuit reset through the real composition root: behind the admin token
 * only; a 410 opens a model's circuit, status shows it, the reset closes it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OpsAdminRoutesTest {
  private static final String CALLER_TOKEN = "gw-caller-token-Hq42";
  private static final String ADMIN_TOKEN = "gw-operator-token-Zt97";
  private static final TestGateway.Suite SUITE =
      new TestGateway.Suite("admin/admin-credential-test.conf", "ops-admin", SimConfig.defaults());

  private TestGateway gateway;

  @BeforeAll
  void start() throws Exception {
    gateway = TestGateway.start(SUITE, "ops");
  }

  @AfterAll
  void stop() throws Exception {
    gateway.close();
  }

  @Test
  void statusShowsReadinessCapsAndCircuitsAndOnlyTheAdminTokenSeesIt() throws Exception {
    assertEquals(
        401,
        gateway
            .send(gateway.get("/admin/status").header("x-api-key", CALLER_TOKEN).build())
            .statusCode());
    JsonNode status = status();
    assertTrue(status.path("ready").asBoolean(), status.toString());
    assertEquals(
        "global_daily", status.path("caps").get(0).path("cap").asText(), status.toString());
    assertEquals(
        "closed", status.path("providerCircuits").path("openai").asText(), status.toString());
    assertEquals(0, status.path("openModelCircuits").size(), status.toString());
  }

  @Test
  void aModelCircuitOpenedByA410IsShownAndResetByTheOperator() throws Exception {
    gateway.sim.script(SimRoute.OPENAI_CHAT, Fault.status(410));
    HttpResponse<String> routed =
        gateway.send(
            HttpRequest.newBuilder(java.net.URI.create(gateway.base + "/v1/chat/completions"))
                .header("authorization", "Bearer " + CALLER_TOKEN)
                .header("content-type", "application/json")
                .header("x-spend-lane", "free")
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        "{\"model\":\"fast-summary\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"max_tokens\":16}"))
                .build());
    assertEquals(200, routed.statusCode(), "answered by the fallback: " + routed.body());
    JsonNode open = status();
    assertEquals(1, open.path("openModelCircuits").size(), open.toString());
    String model = open.path("openModelCircuits").get(0).asText();

    HttpResponse<String> reset = reset(model, ADMIN_TOKEN);
    assertEquals(200, reset.statusCode(), reset.body());
    assertTrue(reset.body().contains("\"wasOpen\":true"), reset.body());
    assertEquals(0, status().path("openModelCircuits").size());
    assertEquals(401, reset("x", CALLER_TOKEN).statusCode());
  }

  /**
   * A model the catalog does not know (a typo) is refused, not answered {@code "open": false} as if
   * a circuit had been closed; a catalog model with no open circuit is a harmless no-op.
   */
  @ParameterizedTest(name = "{0}: {1}")
  @CsvSource({
    "gpt-6.1-sol,  200", // in the catalog, circuit closed: nothing to do, said so
    "gpt-6.1-sool, 400", // not in the catalog
  })
  void aResetNamesAModelOfTheCatalog(String model, int status) throws Exception {
    HttpResponse<String> reset = reset(model, ADMIN_TOKEN);
    assertEquals(status, reset.statusCode(), reset.body());
    if (status == 400) {
      assertTrue(reset.body().contains("not in the model catalog"), reset.body());
    } else {
      assertTrue(reset.body().contains("\"wasOpen\":false"), reset.body());
    }
  }

  private HttpResponse<String> reset(String model, String token) throws Exception {
    return gateway.send(
        HttpRequest.newBuilder(
                java.net.URI.create(gateway.base + "/admin/circuits/" + model + "/reset"))
            .header("x-api-key", token)
            .POST(HttpRequest.BodyPublishers.noBody())
            .build());
  }

  private JsonNode status() throws Exception {
    HttpResponse<String> r =
        gateway.send(gateway.get("/admin/status").header("x-api-key", ADMIN_TOKEN).build());
    assertEquals(200, r.statusCode(), r.body());
    return TestGateway.JSON.readTree(r.body());
  }
}
