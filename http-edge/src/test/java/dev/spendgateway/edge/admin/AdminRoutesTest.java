package dev.spendgateway.edge.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static dev.spendgateway.edge.testkit.LedgerApiServer.assertUsd;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.GatewayRoutes;
import dev.spendgateway.edge.auth.GatewayAuth;
import dev.spendgateway.edge.ledger.LedgerRoutes;
import dev.spendgateway.edge.testkit.LedgerApiServer;
import dev.spendgateway.edge.testkit.LedgerApiServer.Answer;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.audit.GatewayAdmin;
import dev.spendgateway.ledger.audit.JournalReader;
import dev.spendgateway.ledger.audit.Journaled;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.stream.javadsl.Sink;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The admin API over real HTTP, behind the token, against a real ledger (in-memory H2): each
 * write is in the journal with its operator and reason, and shows in {@code /usage}; a credit or
 * adjustment retried with its {@code adjustmentId} is applied once, also through the CLI.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdminRoutesTest {
  private static final String TOKEN = "admin-test-token";
  private LedgerApiServer server;
  private ActorSystem<Void> system;

  @BeforeAll
  void start() throws Exception {
    server = LedgerApiServer.start(AdminRoutesTest.class, "admin-routes-test.conf", TOKEN,
        ledger -> GatewayRoutes.compose(new GatewayAuth(TOKEN), List.of(), List.of(), List.of(
            new LedgerRoutes(ledger, LedgerApiServer.JSON).route(), new AdminRoutes(ledger, LedgerApiServer.JSON).route())));
    system = server.system;
  }

  @AfterAll
  void stop() throws Exception {
    server.close();
  }

  private Answer post(String path, String body, String token) throws Exception {
    return post(path, body, token, "application/json");
  }

  /** {@code token} or {@code contentType} null: that header is not sent. */
  private Answer post(String path, String body, String token, String contentType) throws Exception {
    return server.post(path, body, token, contentType);
  }

  private Answer post(String path, String body) throws Exception {
    return post(path, body, TOKEN);
  }

  private Answer get(String path) throws Exception {
    return server.get(path);
  }

  private List<GlobalBudget.Event> journal() throws Exception {
    return new JournalReader(system).current(1).map(Journaled::event).runWith(Sink.seq(), system)
        .toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static JsonNode cap(JsonNode usage, String cap, String subject) {
    for (JsonNode c : usage.get("caps")) {
      String s = c.get("subject").isNull() ? "null" : c.get("subject").textValue();
      if (c.get("cap").textValue().equals(cap) && subject.equals(s)) {
        return c;
      }
    }
    throw new AssertionError("no " + cap + " for " + subject + " in " + usage);
  }

  private long adjustmentsWithId(String adjustmentId) throws Exception {
    return journal().stream()
        .filter(e -> e instanceof GlobalBudget.SpendAdjusted a && a.adjustmentId().equals(adjustmentId)).count();
  }

  private static String creditBody(String adjustmentId, String usd) {
    return "{\"adjustmentId\":\"" + adjustmentId + "\",\"usd\":" + usd
        + ",\"operator\":\"alice\",\"reason\":\"refund\"}";
  }

  /** Reserves and settles {@code usd} for {@code brand}, so there is spend to credit. */
  private void spend(String brand, String usd) throws Exception {
    String id = brand + "-spend";
    assertEquals(201, post("/ledger/reservations", "{\"id\":\"" + id + "\",\"lane\":\"app\",\"brand\":\"" + brand
        + "\",\"amountUsd\":" + usd + ",\"brandDailyUsd\":5,\"brandMonthlyUsd\":50}").status());
    assertEquals(200, post("/ledger/reservations/" + id + "/settle", "{\"actualUsd\":" + usd + "}").status());
  }


  @Test
  void creditIsJournaledWithOperatorAndReasonAndShowsInUsage() throws Exception {
    String reserve = "{\"id\":\"c-r1\",\"lane\":\"app\",\"brand\":\"credit-b\",\"amountUsd\":1.00,\"brandDailyUsd\":5,\"brandMonthlyUsd\":50}";
    assertEquals(201, post("/ledger/reservations", reserve).status());
    assertEquals(200, post("/ledger/reservations/c-r1/settle", "{\"actualUsd\":0.80}").status());

    Answer credit = post("/admin/brands/credit-b/credit",
        "{\"usd\":0.30,\"operator\":\"alice\",\"reason\":\"refund: duplicate call\"}");
    assertEquals(200, credit.status(), credit.raw().body());
    assertEquals("app", credit.body().get("lane").textValue());
    assertEquals("credit-b", credit.body().get("brand").textValue());
    assertUsd("-0.30", credit.body().get("deltaUsd"));
    String adjustmentId = credit.body().get("adjustmentId").textValue();
    assertTrue(adjustmentId.startsWith("adj-"), adjustmentId); // chosen by the server: none was sent

    JsonNode usage = get("/usage?brand=credit-b").body();
    assertUsd("0.50", cap(usage, "brand_daily", "credit-b").get("spentUsd"));
    assertUsd("0.50", cap(usage, "brand_monthly", "credit-b").get("spentUsd"));

    GlobalBudget.SpendAdjusted adjusted = journal().stream()
        .filter(e -> e instanceof GlobalBudget.SpendAdjusted a && a.adjustmentId().equals(adjustmentId))
        .map(GlobalBudget.SpendAdjusted.class::cast).findFirst().orElseThrow();
    assertEquals("alice", adjusted.operator());
    assertEquals("refund: duplicate call", adjusted.reason());
    assertEquals(-300_000, adjusted.deltaMicros());
  }

  @Test
  void aCreditRetriedWithItsAdjustmentIdAnswersTheSameAndCreditsOnce() throws Exception {
    spend("retry-b", "1.00");
    String credit = creditBody("ticket-812:refund", "0.30");

    Answer first = post("/admin/brands/retry-b/credit", credit);
    assertEquals(200, first.status(), first.raw().body());
    assertEquals("ticket-812:refund", first.body().get("adjustmentId").textValue());
    Answer again = post("/admin/brands/retry-b/credit", credit);
    assertEquals(200, again.status(), again.raw().body());
    assertEquals(first.raw().body(), again.raw().body());

    assertUsd("0.70", cap(get("/usage?brand=retry-b").body(), "brand_daily", "retry-b").get("spentUsd"));
    assertEquals(1, adjustmentsWithId("ticket-812:refund"));
  }

  @Test
  void anAdjustmentIdReusedForADifferentAdjustmentIsAConflict() throws Exception {
    spend("conflict-b", "1.00");
    assertEquals(200, post("/admin/brands/conflict-b/credit", creditBody("adj-reused", "0.30")).status());
    long events = journal().size();

    for (String[] reuse : new String[][] {
        {"/admin/brands/conflict-b/credit", creditBody("adj-reused", "0.40")}, // another amount
        {"/admin/brands/other-b/credit", creditBody("adj-reused", "0.30")}, // another brand
        {"/admin/adjustments", "{\"adjustmentId\":\"adj-reused\",\"lane\":\"free\",\"deltaUsd\":-0.30,"
            + "\"operator\":\"alice\",\"reason\":\"refund\"}"}}) { // another lane
      Answer conflict = post(reuse[0], reuse[1]);
      assertEquals(409, conflict.status(), conflict.raw().body());
      assertEquals("conflict", conflict.body().at("/error/type").textValue());
      assertTrue(conflict.body().at("/error/message").textValue().contains("adjustment id adj-reused"),
          conflict.raw().body());
      assertEquals("true", conflict.raw().headers().firstValue("x-gateway-error").orElse(null));
    }
    assertEquals(events, journal().size());
    assertUsd("0.70", cap(get("/usage?brand=conflict-b").body(), "brand_daily", "conflict-b").get("spentUsd"));
  }

  /** Each row is the JSON value sent as adjustmentId. */
  @ParameterizedTest(name = "adjustmentId {0} is refused naming the field")
  @ValueSource(strings = {
    "\"\"",
    "\"has space\"",
    "\"a/b\"",
    "\"a-65-char-id-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"",
    "42",
    "null",
  })
  void aMalformedAdjustmentIdIsA400NamingIt(String json) throws Exception {
    for (String[] write : new String[][] {
        {"/admin/brands/b/credit", "{\"adjustmentId\":" + json + ",\"usd\":1,\"operator\":\"a\",\"reason\":\"r\"}"},
        {"/admin/adjustments",
            "{\"adjustmentId\":" + json + ",\"lane\":\"free\",\"deltaUsd\":1,\"operator\":\"a\",\"reason\":\"r\"}"}}) {
      Answer bad = post(write[0], write[1]);
      assertEquals(400, bad.status(), bad.raw().body());
      assertEquals("adjustmentId", bad.body().at("/error/field").textValue());
      assertTrue(bad.body().at("/error/message").textValue().startsWith("adjustmentId must be 1-64 characters"),
          bad.raw().body());
    }
  }

  @Test
  void theCliRerunWithTheSameIdCreditsOnce() throws Exception {
    spend("cli-b", "1.00");
    String[] credit = {"credit", "--brand", "cli-b", "--usd", "0.25", "--reason", "refund", "--id", "cli-credit-1",
        "--host", "127.0.0.1", "--port", String.valueOf(server.port()), "--token", TOKEN,
        "--operator", "alice"};
    List<String> outs = new java.util.ArrayList<>();
    for (int run = 0; run < 2; run++) {
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      int exit = GatewayAdmin.commandLine().setOut(new PrintWriter(out)).setErr(new PrintWriter(err)).execute(credit);
      assertEquals(0, exit, err.toString());
      assertTrue(err.toString().startsWith("adjustment id: cli-credit-1"), err.toString());
      outs.add(out.toString());
    }
    assertEquals(outs.get(0), outs.get(1));
    assertEquals("cli-credit-1", LedgerApiServer.JSON.readTree(outs.get(0)).get("adjustmentId").textValue());
    assertUsd("0.75", cap(get("/usage?brand=cli-b").body(), "brand_daily", "cli-b").get("spentUsd"));
    assertEquals(1, adjustmentsWithId("cli-credit-1"));
  }

  @Test
  void operatorSettleAndVoidAreJournaledWithWhoAndWhy() throws Exception {
    for (String id : List.of("o-1", "o-2")) {
      assertEquals(201, post("/ledger/reservations",
          "{\"id\":\"" + id + "\",\"lane\":\"app\",\"brand\":\"ops-b\",\"amountUsd\":0.40,\"brandDailyUsd\":5,\"brandMonthlyUsd\":50}").status());
    }
    Answer settled = post("/admin/reservations/o-1/settle",
        "{\"actualUsd\":0.25,\"operator\":\"bob\",\"reason\":\"caller crashed; invoice says 0.25\"}");
    assertEquals(200, settled.status(), settled.raw().body());
    assertEquals("settled", settled.body().get("status").textValue());
    Answer voided = post("/admin/reservations/o-2/void", "{\"operator\":\"bob\",\"reason\":\"provider did not bill\"}");
    assertEquals(200, voided.status(), voided.raw().body());
    assertEquals("voided", voided.body().get("status").textValue());

    JsonNode usage = get("/usage?brand=ops-b").body();
    assertUsd("0.25", cap(usage, "brand_daily", "ops-b").get("spentUsd"));
    assertUsd("0", cap(usage, "brand_daily", "ops-b").get("reservedUsd"));

    List<GlobalBudget.Event> events = journal();
    var settle = events.stream().filter(e -> e instanceof GlobalBudget.ReservationSettled s && s.id().equals("o-1"))
        .map(GlobalBudget.ReservationSettled.class::cast).findFirst().orElseThrow();
    assertEquals("bob", settle.operator());
    assertEquals("caller crashed; invoice says 0.25", settle.reason());
    var voidEvent = events.stream().filter(e -> e instanceof GlobalBudget.ReservationVoided v && v.id().equals("o-2"))
        .map(GlobalBudget.ReservationVoided.class::cast).findFirst().orElseThrow();
    assertEquals("provider did not bill", voidEvent.reason());

    // A second close gets the first result and writes nothing.
    Answer again = post("/admin/reservations/o-1/void", "{\"operator\":\"bob\",\"reason\":\"oops\"}");
    assertEquals(200, again.status());
    assertEquals("settled", again.body().get("status").textValue());
    assertEquals(events.size(), journal().size());
  }

  @Test
  void adjustmentOnTheFreeLaneMovesTheGlobalAndPoolCaps() throws Exception {
    JsonNode before = get("/usage").body();
    Answer adjusted = post("/admin/adjustments",
        "{\"lane\":\"free\",\"deltaUsd\":0.10,\"operator\":\"carol\",\"reason\":\"missed invoice line\"}");
    assertEquals(200, adjusted.status(), adjusted.raw().body());
    JsonNode after = get("/usage").body();
    BigDecimal freeBefore = cap(before, "free_daily", "null").get("spentUsd").decimalValue();
    assertEquals(0, freeBefore.add(new BigDecimal("0.10"))
        .compareTo(cap(after, "free_daily", "null").get("spentUsd").decimalValue()));
  }

  @Test
  void refusesWithoutTokenOperatorOrReasonAndOnUnknownIds() throws Exception {
    assertEquals(401, post("/admin/brands/b/credit", "{\"usd\":1,\"operator\":\"a\",\"reason\":\"r\"}", null).status());
    Answer noReason = post("/admin/brands/b/credit", "{\"usd\":1,\"operator\":\"a\"}");
    assertEquals(400, noReason.status());
    assertEquals("reason", noReason.body().at("/error/field").textValue());
    assertEquals("true", noReason.raw().headers().firstValue("x-gateway-error").orElse(null));
    Answer noOperator = post("/admin/reservations/x/void", "{\"reason\":\"r\"}");
    assertEquals("operator", noOperator.body().at("/error/field").textValue());
    assertEquals(400, post("/admin/brands/b/credit", "{\"usd\":-1,\"operator\":\"a\",\"reason\":\"r\"}").status());
    assertEquals(404, post("/admin/reservations/nope/void", "{\"operator\":\"a\",\"reason\":\"r\"}").status());
  }

  @ParameterizedTest(name = "content-type [{0}] on {1} → 415 naming the header, nothing journaled")
  @CsvSource(delimiter = '|', nullValues = "none", textBlock = """
      multipart/form-data; boundary=b   | /admin/brands/ct-b/credit       | {"usd":1,"operator":"a","reason":"r"}
      multipart/mixed; boundary=b       | /admin/adjustments              | {"lane":"free","deltaUsd":0.1,"operator":"a","reason":"r"}
      multipart/form-data; boundary=b   | /admin/reservations/ct-o/settle | {"actualUsd":0.1,"operator":"a","reason":"r"}
      multipart/form-data; boundary=b   | /admin/reservations/ct-o/void   | {"operator":"a","reason":"r"}
      """)
  void aBodyUnderAnotherContentTypeIs415AndWritesNothing(String contentType, String path, String body) throws Exception {
    post("/ledger/reservations", "{\"id\":\"ct-o\",\"lane\":\"free\",\"amountUsd\":0.20}");
    int events = journal().size();

    Answer refused = post(path, body, TOKEN, contentType);

    assertEquals(415, refused.status(), refused.raw().body());
    assertEquals("unsupported_media_type", refused.body().at("/error/type").textValue());
    assertEquals("content-type", refused.body().at("/error/field").textValue());
    assertEquals("true", refused.raw().headers().firstValue("x-gateway-error").orElse(null));
    assertEquals(events, journal().size());
    assertEquals("reserved", get("/ledger/reservations/ct-o").body().get("status").textValue());
  }

  @Test
  void theTokenIsCheckedBeforeTheContentType() throws Exception {
    assertEquals(401, post("/admin/brands/b/credit", "usd=1", "wrong-token", "application/x-www-form-urlencoded").status());
  }

  @Test
  void aFieldNamedTwiceIsRefusedNotReadAsItsLastValue() throws Exception {
    Answer twice = post("/admin/brands/b/credit", "{\"usd\":1,\"usd\":500,\"operator\":\"a\",\"reason\":\"r\"}");
    assertEquals(400, twice.status());
    assertEquals("body", twice.body().at("/error/field").textValue());
  }
}
