package dev.spendgateway.edge.e2e;

import static dev.spendgateway.edge.testkit.TestGateway.cap;
import static dev.spendgateway.edge.testkit.TestGateway.money;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.Eventually;
import dev.spendgateway.edge.testkit.GatewayPerClass;
import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.sim.Fault;
import dev.spendgateway.sim.SimRoute;
import dev.spendgateway.sim.Usage;
import java.math.BigDecimal;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Through the whole gateway: the ledger API cannot stop all traffic or touch a provider call's
 * reservation, and an upstream reporting a usage no real call can have neither breaks the call nor
 * leaves its reservation open.
 */
class LedgerOwnershipE2ETest extends GatewayPerClass {
  @Override
  protected TestGateway startGateway() throws Exception {
    return E2eGateway.start("ownership");
  }

  private HttpResponse<String> ledger(String path, String body) throws Exception {
    return gw.send(
        gw.get(path)
            .header("authorization", "Bearer " + E2eGateway.TOKEN)
            .header("content-type", "application/json")
            .POST(java.net.http.HttpRequest.BodyPublishers.ofString(body))
            .build());
  }

  private static final String CLAUDE_CALL =
      "{\"model\":\"claude-opus-5-5\",\"max_tokens\":1000,\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";

  // --- 1. the ledger API cannot stop all traffic -------------------------------------------------

  @Test
  void anEmptyHoldSettledAtAFortuneIsRefusedAndProviderCallsGoOn() throws Exception {
    HttpResponse<String> zero =
        ledger("/ledger/reservations", "{\"id\":\"dos-1\",\"lane\":\"free\",\"amountUsd\":0}");
    assertEquals(400, zero.statusCode(), zero.body());
    assertTrue(zero.body().contains("\"field\":\"amountUsd\""), zero.body());

    assertEquals(
        201,
        ledger(
                "/ledger/reservations",
                "{\"id\":\"dos-2\",\"lane\":\"free\",\"amountUsd\":0.000001}")
            .statusCode());
    HttpResponse<String> fortune =
        ledger("/ledger/reservations/dos-2/settle", "{\"actualUsd\":1000000}");
    assertEquals(400, fortune.statusCode(), fortune.body());
    assertTrue(fortune.body().contains("\"field\":\"actualUsd\""), fortune.body());
    assertEquals(
        200,
        ledger("/ledger/reservations/dos-2/void", "").statusCode(),
        "its own reservation it may void");

    Brand brand = Brand.fresh("after-dos");
    HttpResponse<String> call =
        gw.send(gw.postJson(TestGateway.ANTHROPIC, CLAUDE_CALL, brand).build());
    assertEquals(200, call.statusCode(), call.body());
    JsonNode usage = gw.awaitSettled(brand.id());
    assertTrue(money(cap(usage, "global_daily"), "remainingUsd").signum() > 0, usage.toString());
  }

  @Test
  void theGatewaysIdNamespaceIsClosedToTheLedgerApi() throws Exception {
    HttpResponse<String> reserve =
        ledger("/ledger/reservations", "{\"id\":\"gw-mine\",\"lane\":\"free\",\"amountUsd\":0.10}");
    assertEquals(400, reserve.statusCode(), reserve.body());
    assertTrue(reserve.body().contains("\"field\":\"id\""), reserve.body());
  }

  /**
   * A provider call in flight holds a {@code gw-} reservation. The ledger API is refused every id
   * of that namespace, and the call still settles at exactly what the provider billed.
   */
  @Test
  void aProviderCallsReservationIsOutOfTheLedgerApisReachAndSettlesNormally() throws Exception {
    Brand brand = Brand.fresh("owned");
    gw.sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.delayed(Duration.ofMillis(800)));
    CompletableFuture<HttpResponse<String>> call =
        gw.http.sendAsync(
            gw.postJson(TestGateway.ANTHROPIC, CLAUDE_CALL, brand).build(),
            HttpResponse.BodyHandlers.ofString());
    awaitHeld(brand);

    String someGatewayId = Owner.newGatewayId();
    HttpResponse<String> settle =
        ledger("/ledger/reservations/" + someGatewayId + "/settle", "{\"actualUsd\":0}");
    HttpResponse<String> voided = ledger("/ledger/reservations/" + someGatewayId + "/void", "");
    HttpResponse<String> read =
        gw.send(
            gw.get("/ledger/reservations/" + someGatewayId)
                .header("authorization", "Bearer " + E2eGateway.TOKEN)
                .build());
    assertEquals(403, settle.statusCode(), settle.body());
    assertEquals(403, voided.statusCode(), voided.body());
    assertEquals(404, read.statusCode(), read.body());
    assertFalse(read.body().contains(someGatewayId), read.body());

    assertEquals(200, call.get().statusCode());
    JsonNode usage = gw.awaitSettled(brand.id());
    assertTrue(
        Costs.same(
            Costs.anthropic(Costs.CLAUDE_OPUS, E2eGateway.USAGE),
            money(cap(usage, "brand_daily"), "spentUsd")),
        usage.toString());
  }

  /** Waits until the call's reservation shows in the brand's caps (its row appears with it). */
  private void awaitHeld(Brand brand) throws Exception {
    Eventually.until(
        "the call's reservation shows in " + brand.id() + "'s caps",
        Duration.ofSeconds(10),
        () -> holds(gw.usage(brand.id())));
  }

  private static boolean holds(JsonNode usage) {
    for (JsonNode row : usage.get("caps")) {
      if (row.get("cap").asText().equals("brand_daily")) {
        return money(row, "reservedUsd").signum() > 0;
      }
    }
    return false;
  }

  // --- 2. a usage no real call can have
  // ------------------------------------------------------------

  private static final String OPENAI_CALL =
      "{\"model\":\"gpt-6.1-sol\",\"max_completion_tokens\":900,\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";
  private static final String ROUTED_CALL =
      "{\"model\":\"fast-summary\",\"max_tokens\":500,\"messages\":[{\"role\":\"user\",\"content\":\"Say hello\"}]}";

  private static String anthropicAnswer(String usage) {
    return "{\"id\":\"msg_absurd\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-opus-5-5\","
        + "\"content\":[{\"type\":\"text\",\"text\":\"Hello\"}],\"stop_reason\":\"end_turn\",\"stop_sequence\":null,"
        + "\"usage\":"
        + usage
        + "}";
  }

  private static String chatAnswer(String usage) {
    return "{\"id\":\"chatcmpl-absurd\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"gpt-6.1-sol\","
        + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hello\"},"
        + "\"finish_reason\":\"stop\"}],\"usage\":"
        + usage
        + "}";
  }

  private static Fault answering(String body) {
    return Fault.status(200, Map.of("content-type", "application/json"), body);
  }

  static Stream<Arguments> impossibleUsages() {
    long huge = Long.MAX_VALUE / 2;
    return Stream.of(
        Arguments.of(
            "an Anthropic answer reporting 1e30 input tokens",
            SimRoute.ANTHROPIC_MESSAGES,
            TestGateway.ANTHROPIC,
            CLAUDE_CALL,
            answering(anthropicAnswer("{\"input_tokens\":1e30,\"output_tokens\":10}")),
            "usage_missing"),
        Arguments.of(
            "an Anthropic answer reporting 10^30 input tokens written out",
            SimRoute.ANTHROPIC_MESSAGES,
            TestGateway.ANTHROPIC,
            CLAUDE_CALL,
            answering(
                anthropicAnswer("{\"input_tokens\":1" + "0".repeat(30) + ",\"output_tokens\":10}")),
            "usage_missing"),
        Arguments.of(
            "an OpenAI answer reporting 1e30 prompt tokens",
            SimRoute.OPENAI_CHAT,
            TestGateway.CHAT,
            OPENAI_CALL,
            answering(
                chatAnswer(
                    "{\"prompt_tokens\":1e30,\"completion_tokens\":5,\"total_tokens\":1e30}")),
            "usage_missing"),
        Arguments.of(
            "an Anthropic answer whose cost overflows micro-dollars",
            SimRoute.ANTHROPIC_MESSAGES,
            TestGateway.ANTHROPIC,
            CLAUDE_CALL,
            Fault.usage(new Usage(huge, 10, 0, 0, 0)),
            "usage_implausible"),
        Arguments.of(
            "an Anthropic answer beyond the model's context window",
            SimRoute.ANTHROPIC_MESSAGES,
            TestGateway.ANTHROPIC,
            CLAUDE_CALL,
            Fault.usage(new Usage(500_000, 10, 0, 0, 0)),
            "usage_implausible"),
        Arguments.of(
            "an OpenAI answer with more output than the budget sent",
            SimRoute.OPENAI_CHAT,
            TestGateway.CHAT,
            OPENAI_CALL,
            Fault.usage(new Usage(10, 5_000, 0, 0, 0)),
            "usage_implausible"),
        Arguments.of(
            "an Anthropic stream whose usage overflows micro-dollars",
            SimRoute.ANTHROPIC_MESSAGES,
            TestGateway.ANTHROPIC,
            CLAUDE_CALL.replace("{\"model\"", "{\"stream\":true,\"model\""),
            Fault.usage(new Usage(huge, 10, 0, 0, 0)),
            "usage_implausible"),
        Arguments.of(
            "a routed call whose provider reports an overflowing usage",
            SimRoute.OPENAI_CHAT,
            "/v1/chat/completions",
            ROUTED_CALL,
            Fault.usage(new Usage(huge, 10, 0, 0, 0)),
            "usage_implausible"));
  }

  @ParameterizedTest(
      name = "{0}: the caller gets the answer, the reservation closes at its worst case")
  @MethodSource("impossibleUsages")
  void anImpossibleUsageKeepsTheWorstCaseAndNeverBreaksTheCall(
      String what, SimRoute route, String path, String body, Fault fault, String errorClass)
      throws Exception {
    Brand brand = Brand.fresh("absurd");
    String requestId = "absurd-" + System.nanoTime();
    gw.sim.script(route, fault);
    int errorsBefore = gw.logs.errorLines().size();

    HttpResponse<String> r =
        gw.send(gw.postJson(path, body, brand).header("x-request-id", requestId).build());

    assertEquals(200, r.statusCode(), r.body());
    assertFalse(r.body().contains("internal_error"), r.body());
    JsonNode usage = gw.awaitSettled(brand.id());
    JsonNode line = gw.awaitAccessLine(l -> requestId.equals(l.path("request_id").asText()));
    assertEquals(errorClass, line.path("error").asText(), line.toString());
    assertEquals(200, line.path("status").asInt(), line.toString());
    String reserved = line.path("reserved_usd").asText();
    assertNotNull(reserved);
    assertEquals(reserved, line.path("settled_usd").asText(), "settled at the worst case: " + line);
    BigDecimal worstCase = new BigDecimal(reserved);
    assertTrue(
        Costs.same(worstCase, money(cap(usage, "brand_daily"), "spentUsd")), usage.toString());
    assertTrue(
        Costs.same(BigDecimal.ZERO, money(cap(usage, "brand_daily"), "reservedUsd")),
        usage.toString());
    List<String> errors = gw.logs.errorLines();
    assertEquals(List.of(), errors.subList(errorsBefore, errors.size()));
  }

  // --- 3. a provider call's reservation id stays out of the logs
  // ----------------------------------

  private static final java.util.regex.Pattern GATEWAY_RESERVATION_ID =
      java.util.regex.Pattern.compile("gw-[0-9a-f]{8}-[0-9a-f]{4}-");

  @Test
  void aSettleAboveTheReserveIsLoggedByRequestIdNeverByReservationId() throws Exception {
    Brand brand = Brand.fresh("above");
    String requestId = "above-" + System.nanoTime();
    // Real, but far more input than a 100-byte body suggests: settled above its reserve.
    gw.sim.script(SimRoute.ANTHROPIC_MESSAGES, Fault.usage(new Usage(150_000, 10, 0, 0, 0)));

    HttpResponse<String> r =
        gw.send(
            gw.postJson(TestGateway.ANTHROPIC, CLAUDE_CALL, brand)
                .header("x-request-id", requestId)
                .build());
    assertEquals(200, r.statusCode(), r.body());
    gw.awaitSettled(brand.id());
    JsonNode line = gw.awaitAccessLine(l -> requestId.equals(l.path("request_id").asText()));
    assertTrue(
        new BigDecimal(line.path("settled_usd").asText())
                .compareTo(new BigDecimal(line.path("reserved_usd").asText()))
            > 0,
        line.toString());

    Eventually.until(
        "an above-reserve warning names " + requestId,
        Duration.ofSeconds(10),
        () ->
            gw.logs.allText().stream()
                .anyMatch(l -> l.contains("settled above reserve: request " + requestId)));
    List<String> leaking =
        gw.logs.allText().stream()
            .filter(l -> !l.startsWith("access "))
            .filter(l -> GATEWAY_RESERVATION_ID.matcher(l).find())
            .toList();
    assertEquals(List.of(), leaking);
  }
}
