package dev.spendgateway.edge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** When the gateway refuses to start, and the demo's pair of tokens. */
class GatewaySettingsTest {
  private static GatewaySettings settings(String token, String adminToken) {
    return new GatewaySettings(
        "127.0.0.1", 0, token, adminToken, Duration.ofSeconds(1), Duration.ofSeconds(1));
  }

  @ParameterizedTest(name = "port {0}, http2-port {1}: {2}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      8787 | 0     | starts
      8787 | 8788  | starts
      8787 | 8787  | gateway.http2-port = 8787 cannot be used
      8787 | -1    | gateway.http2-port = -1 cannot be used
      8787 | 70000 | gateway.http2-port = 70000 cannot be used
      """)
  void http2PortMustBeOffOrAnotherPort(int port, int http2Port, String expected) {
    Optional<String> problem =
        new GatewaySettings(
                "127.0.0.1",
                port,
                http2Port,
                "t",
                "",
                Duration.ofSeconds(1),
                Duration.ofSeconds(1),
                Optional.empty())
            .startupProblem(false);
    if (expected.equals("starts")) {
      assertEquals(Optional.empty(), problem);
    } else {
      assertTrue(problem.orElseThrow().startsWith(expected), problem.get());
    }
  }

  @ParameterizedTest(name = "caller [{0}], admin [{1}], demo {2}: {3}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      ''       | ''        | false | GATEWAY_TOKEN is not set
      ''       | ''        | true  | starts
      caller-1 | ''        | false | starts
      caller-1 | admin-1   | false | starts
      caller-1 | caller-1  | false | GATEWAY_ADMIN_TOKEN equals GATEWAY_TOKEN
      caller-1 | ' caller-1 ' | false | GATEWAY_ADMIN_TOKEN equals GATEWAY_TOKEN
      caller-1 | caller-1  | true  | GATEWAY_ADMIN_TOKEN equals GATEWAY_TOKEN
      """)
  void startupProblem(String token, String adminToken, boolean demo, String expected) {
    Optional<String> problem = settings(token, adminToken).startupProblem(demo);
    if (expected.equals("starts")) {
      assertEquals(Optional.empty(), problem);
    } else {
      assertTrue(problem.orElseThrow().startsWith(expected), problem.get());
      assertFalse(problem.get().contains("caller-1"), "a token is never printed: " + problem.get());
    }
  }

  @Test
  void theAdminTokenIsReadFromTheShippedConfigAndNeverPrinted() {
    GatewaySettings shipped = GatewaySettings.fromConfig(ConfigFactory.load());
    assertFalse(shipped.hasAdminToken(), "no default: /admin is off until an operator sets one");
    GatewaySettings set = settings("caller-1", "admin-secret-1");
    assertTrue(set.hasAdminToken());
    assertFalse(set.toString().contains("admin-secret-1"), set.toString());
    assertFalse(set.toString().contains("caller-1"), set.toString());
  }

  @Test
  void theDemoRunsWithTwoDifferentTokens() {
    dev.spendgateway.edge.demo.DemoTokens tokens = dev.spendgateway.edge.demo.DemoTokens.generate();
    GatewaySettings demo =
        GatewaySettings.fromConfig(
            GatewayMain.demoConfig(ConfigFactory.load(), "http://127.0.0.1:1", tokens));
    assertEquals(tokens.caller(), demo.token());
    assertEquals(tokens.admin(), demo.adminToken());
    assertNotEquals(demo.token(), demo.adminToken());
    assertEquals(Optional.empty(), demo.startupProblem(true));
  }

  @Test
  void theDemoServesMediaFromTheSimulatorWithAFakeKey() {
    dev.spendgateway.edge.demo.DemoTokens tokens = dev.spendgateway.edge.demo.DemoTokens.generate();
    dev.spendgateway.edge.media.MediaSettings media =
        dev.spendgateway.edge.media.MediaSettings.fromConfig(
            GatewayMain.demoConfig(ConfigFactory.load(), "http://127.0.0.1:1", tokens));
    assertTrue(media.enabled(), "the demo's media routes are on");
    assertEquals("http://127.0.0.1:1", media.baseUrl());
    assertEquals(GatewayMain.DEMO_MEDIA_KEY, media.apiKey());
  }
}
