package dev.spendgateway.edge.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import dev.spendgateway.edge.Gateway;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.sim.SimConfig;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The operator's credential through the real composition root ({@code Gateway.start}): with an
 * admin token configured, only it opens {@code /admin} (the callers' token gets 401, in either
 * header); without one, every {@code /admin} path is a 404 saying the routes are off; and the two
 * tokens may not be equal.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdminCredentialTest {
  /** As set in {@code admin/admin-credential-test.conf}. */
  private static final String CALLER_TOKEN = "gw-caller-token-Hq42";

  private static final String ADMIN_TOKEN = "gw-operator-token-Zt97";

  private static final TestGateway.Suite SUITE =
      new TestGateway.Suite("admin/admin-credential-test.conf", "admin-cred", SimConfig.defaults());

  private TestGateway withAdmin;
  private TestGateway withoutAdmin;

  @BeforeAll
  void start() throws Exception {
    withAdmin = TestGateway.start(SUITE, "on");
    withoutAdmin = TestGateway.start(SUITE, "off", Map.of("gateway.admin-token", ""));
  }

  @AfterAll
  void stop() throws Exception {
    withAdmin.close();
    withoutAdmin.close();
  }

  /** A well-formed admin write; {@code header} is {@code "name: value"} or {@code none}. */
  private static HttpResponse<String> post(TestGateway gw, String path, String body, String header)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(gw.base + path))
            .timeout(Duration.ofSeconds(20))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (!header.equals("none")) {
      int colon = header.indexOf(':');
      b.header(header.substring(0, colon), header.substring(colon + 2));
    }
    return gw.send(b.build());
  }

  /** Settled spend of {@code brand} through the ledger API, so there is something to credit. */
  private static void spend(TestGateway gw, String brand) throws Exception {
    String bearer = "authorization: Bearer " + CALLER_TOKEN;
    assertEquals(
        201,
        post(
                gw,
                "/ledger/reservations",
                "{\"id\":\""
                    + brand
                    + "-r\",\"lane\":\"app\",\"brand\":\""
                    + brand
                    + "\",\"amountUsd\":1,\"brandDailyUsd\":5,\"brandMonthlyUsd\":50}",
                bearer)
            .statusCode());
    assertEquals(
        200,
        post(gw, "/ledger/reservations/" + brand + "-r/settle", "{\"actualUsd\":1}", bearer)
            .statusCode());
  }

  private static String globalDailySpent(TestGateway gw) throws Exception {
    return TestGateway.money(
            TestGateway.cap(TestGateway.JSON.readTree(gw.usageText()), "global_daily"), "spentUsd")
        .stripTrailingZeros()
        .toPlainString();
  }

  /**
   * Each row: a path and a body the admin token would get through, then how the caller token is
   * sent.
   */
  private static final String ROWS =
      """
      /admin/brands/b1/credit          | {"usd":1000000,"operator":"m","reason":"r"}                   | authorization: Bearer gw-caller-token-Hq42
      /admin/brands/b1/credit          | {"usd":1000000,"operator":"m","reason":"r"}                   | x-api-key: gw-caller-token-Hq42
      /admin/adjustments               | {"lane":"free","deltaUsd":-1000000,"operator":"m","reason":"r"} | authorization: Bearer gw-caller-token-Hq42
      /admin/adjustments               | {"lane":"free","deltaUsd":-1000000,"operator":"m","reason":"r"} | x-api-key: gw-caller-token-Hq42
      /admin/reservations/x/settle     | {"actualUsd":0.01,"operator":"m","reason":"r"}                | authorization: Bearer gw-caller-token-Hq42
      /admin/reservations/x/void       | {"operator":"m","reason":"r"}                                 | x-api-key: gw-caller-token-Hq42
      /admin/adjustments               | {"lane":"free","deltaUsd":-1,"operator":"m","reason":"r"}     | none
      """;

  @ParameterizedTest(name = "admin on: {0} with [{2}] → 401, books unchanged")
  @CsvSource(delimiter = '|', textBlock = ROWS)
  void theCallerTokenGetsA401OnEveryAdminRoute(String path, String body, String header)
      throws Exception {
    String before = globalDailySpent(withAdmin);
    HttpResponse<String> refused = post(withAdmin, path, body, header);
    assertEquals(401, refused.statusCode(), refused.body());
    assertTrue(refused.body().contains("GATEWAY_ADMIN_TOKEN"), refused.body());
    assertEquals(before, globalDailySpent(withAdmin));
  }

  /**
   * Off, every {@code /admin} path is a 404 that says the routes are off and which setting turns
   * them on, whatever token came with it: an operator whose gateway-admin sent its admin token got
   * "Missing or wrong gateway token" (401) and went looking for a wrong token, not the setting.
   * Nothing is written, and the admin token, unset here, opens nothing.
   */
  @ParameterizedTest(name = "admin off: {0} with [{2}] → 404 saying so, books unchanged")
  @CsvSource(delimiter = '|', textBlock = ROWS)
  void withoutAnAdminTokenTheAdminRoutesAreOffAndSaySo(String path, String body, String header)
      throws Exception {
    String before = globalDailySpent(withoutAdmin);
    for (String presented : new String[] {header, "x-api-key: " + ADMIN_TOKEN}) {
      HttpResponse<String> refused = post(withoutAdmin, path, body, presented);
      assertEquals(404, refused.statusCode(), refused.body());
      assertTrue(refused.body().contains("admin routes are off"), refused.body());
      assertTrue(refused.body().contains("GATEWAY_ADMIN_TOKEN"), refused.body());
    }
    assertEquals(before, globalDailySpent(withoutAdmin));
  }

  @Test
  void theAdminTokenOpensTheAdminRoutesInEitherHeader() throws Exception {
    String brand = Brand.fresh("cred").id();
    spend(withAdmin, brand);
    for (String header :
        new String[] {"x-api-key: " + ADMIN_TOKEN, "authorization: Bearer " + ADMIN_TOKEN}) {
      HttpResponse<String> credit =
          post(
              withAdmin,
              "/admin/brands/" + brand + "/credit",
              "{\"usd\":0.25,\"window\":\""
                  + dev.spendgateway.policy.caps.CapWindows.dayKey(java.time.Instant.now())
                  + "\",\"scope\":\"refund\",\"operator\":\"alice\",\"reason\":\"refund\"}",
              header);
      assertEquals(200, credit.statusCode(), credit.body());
    }
    String spent =
        TestGateway.money(TestGateway.cap(withAdmin.usage(brand), "brand_daily"), "spentUsd")
            .stripTrailingZeros()
            .toPlainString();
    assertEquals("0.5", spent);
    assertTrue(
        withAdmin.logs.allText().stream().noneMatch(l -> l.contains(ADMIN_TOKEN)),
        "the admin token is never logged");
  }

  @Test
  void theAdminTokenIsNoCallerToken() throws Exception {
    HttpResponse<String> usage =
        withAdmin.send(withAdmin.get("/usage").header("x-api-key", ADMIN_TOKEN).build());
    assertEquals(401, usage.statusCode(), usage.body());
  }

  @Test
  void aGatewayWhoseAdminTokenEqualsTheCallerTokenDoesNotStart() throws Exception {
    Config config =
        ConfigFactory.parseMap(Map.of("gateway.admin-token", CALLER_TOKEN, "gateway.port", 0))
            .withFallback(ConfigFactory.parseResources(SUITE.confResource()))
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "admin-cred-same", config);
    try {
      IllegalArgumentException refused =
          assertThrows(
              IllegalArgumentException.class,
              () -> Gateway.start(system, config, Clock.systemUTC()));
      assertTrue(
          refused.getMessage().startsWith("GATEWAY_ADMIN_TOKEN equals GATEWAY_TOKEN"),
          refused.getMessage());
      assertTrue(!refused.getMessage().contains(CALLER_TOKEN), "the message never holds the token");
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
