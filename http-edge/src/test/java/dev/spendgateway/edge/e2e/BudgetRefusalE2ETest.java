package dev.spendgateway.edge.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import java.math.BigDecimal;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A call over a cap is refused with one wording on every route, and the 402 names what the call
 * needed: its worst case, never $0.
 */
class BudgetRefusalE2ETest {
  private static final Pattern NEEDS = Pattern.compile("this call needs up to \\$([0-9.]+)\\.");
  private static TestGateway gw;

  @BeforeAll
  static void start() throws Exception {
    gw = E2eGateway.start("refusal402");
  }

  @AfterAll
  static void stop() throws Exception {
    gw.close();
  }

  private static final String CLAUDE_CALL =
      "{\"model\":\"claude-opus-5-5\",\"max_tokens\":1000,\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";
  private static final String CHAT_CALL =
      "{\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":900,\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";
  private static final String ROUTED_CALL =
      "{\"model\":\"fast-summary\",\"max_tokens\":500,\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";

  static Stream<Arguments> routes() {
    BigDecimal claudeWorstCase =
        Costs.worstCase(
            Costs.CLAUDE_OPUS, CLAUDE_CALL.getBytes(StandardCharsets.UTF_8).length, 1000);
    return Stream.of(
        Arguments.of(
            "an Anthropic call over its brand's daily cap",
            TestGateway.ANTHROPIC,
            CLAUDE_CALL,
            claudeWorstCase),
        Arguments.of(
            "an OpenAI chat call over its brand's daily cap", TestGateway.CHAT, CHAT_CALL, null),
        Arguments.of(
            "a routed call over its brand's daily cap", "/v1/chat/completions", ROUTED_CALL, null));
  }

  @ParameterizedTest(name = "{0} is a 402 that names the call's worst case")
  @MethodSource("routes")
  void the402NamesTheWorstCase(String what, String path, String body, BigDecimal expectedWorstCase)
      throws Exception {
    Brand tiny = Brand.fresh("tiny").withDaily("0.000001");
    String requestId = "tiny-" + System.nanoTime();

    HttpResponse<String> r =
        gw.send(gw.postJson(path, body, tiny).header("x-request-id", requestId).build());

    assertEquals(402, r.statusCode(), what + ": " + r.body());
    JsonNode error = TestGateway.JSON.readTree(r.body()).path("error");
    assertEquals("budget_exceeded", error.path("type").asText(), r.body());
    assertEquals("brand_daily", error.path("cap").asText(), r.body());
    Matcher needs = NEEDS.matcher(error.path("message").asText());
    assertTrue(needs.find(), what + ": the message names what the call needs: " + r.body());
    BigDecimal worstCase = new BigDecimal(needs.group(1));
    assertTrue(worstCase.signum() > 0, what + ": the call's worst case, not $0: " + r.body());
    if (expectedWorstCase != null) {
      assertTrue(
          Costs.same(expectedWorstCase, worstCase),
          what + ": expected " + expectedWorstCase + ": " + r.body());
    }
    JsonNode line = gw.awaitAccessLine(l -> requestId.equals(l.path("request_id").asText()));
    assertEquals("budget_exceeded", line.path("error").asText(), line.toString());
    assertEquals(402, line.path("status").asInt(), line.toString());
    assertTrue(line.path("reserved_usd").isNull(), "nothing was held: " + line);
  }
}
