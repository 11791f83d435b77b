package dev.spendgateway.edge.admin;

import static dev.spendgateway.edge.testkit.LedgerApiServer.assertUsd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.GatewayRoutes;
import dev.spendgateway.edge.auth.GatewayAuth;
import dev.spendgateway.edge.ledger.LedgerRoutes;
import dev.spendgateway.edge.testkit.LedgerApiServer;
import dev.spendgateway.edge.testkit.LedgerApiServer.Answer;
import dev.spendgateway.edge.testkit.LogCapture;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.audit.JournalReader;
import dev.spendgateway.ledger.audit.Journaled;
import dev.spendgateway.operator.GatewayAdmin;
import dev.spendgateway.policy.caps.CapWindows;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
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
 * The admin API over real HTTP, behind the operator's admin token, against a real ledger (in-memory
 * H2): each write is in the journal with its operator and reason, and shows in {@code /usage}; a
 * credit or adjustment retried with its {@code adjustmentId} is applied once, also through the CLI.
 * The routes are composed as the gateway composes them: admin ahead of the caller-token check.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AdminRoutesTest {
  /** gateway.body-read-timeout of these routes. */
  private static final Duration BODY_READ = Duration.ofSeconds(30);

  /** The callers' token: the ledger API and /usage. */
  private static final String TOKEN = "caller-test-token";

  /** The operator's token: the only one /admin takes. */
  private static final String ADMIN_TOKEN = "operator-test-token";

  private LedgerApiServer server;
  private ActorSystem<Void> system;
  private LogCapture logs;

  @BeforeAll
  void start() throws Exception {
    logs = LogCapture.attach();
    server =
        LedgerApiServer.start(
            AdminRoutesTest.class,
            "admin-routes-test.conf",
            TOKEN,
            ledger ->
                GatewayRoutes.compose(
                    new GatewayAuth(TOKEN),
                    List.of(
                        new AdminRoutes(
                                ledger,
                                LedgerApiServer.JSON,
                                new GatewayAuth(ADMIN_TOKEN),
                                BODY_READ)
                            .route()),
                    List.of(),
                    List.of(
                        new LedgerRoutes(ledger, LedgerApiServer.JSON, 20, BODY_READ).route())));
    system = server.system;
  }

  @AfterAll
  void stop() throws Exception {
    server.close();
    logs.detach();
  }

  /** The token a route takes: the admin token under /admin, else the callers'. */
  private static String tokenFor(String path) {
    return path.startsWith("/admin/") ? ADMIN_TOKEN : TOKEN;
  }

  private Answer post(String path, String body, String token) throws Exception {
    return post(path, body, token, "application/json");
  }

  /** {@code token} or {@code contentType} null: that header is not sent. */
  private Answer post(String path, String body, String token, String contentType) throws Exception {
    return server.post(path, targeted(path, body), token, contentType);
  }

  /** Today's UTC day: the window the credits and adjustments of this class correct. */
  private static String today() {
    return CapWindows.dayKey(Instant.now());
  }

  /**
   * A credit or adjustment body here corrects today's window as a refund unless it names its own
   * window or scope: most rows are about ids, amounts, text and tokens; windows and scopes have
   * their own tests ({@code aCreditNamesItsWindowAndScope...}).
   */
  private static String targeted(String path, String body) {
    boolean adjustment = path.endsWith("/credit") || path.equals("/admin/adjustments");
    if (!adjustment
        || body == null
        || !body.startsWith("{")
        || body.contains("\"window\"")
        || body.contains("\"scope\"")) {
      return body;
    }
    String rest = body.substring(1);
    return "{\"window\":\""
        + today()
        + "\",\"scope\":\"refund\""
        + (rest.startsWith("}") ? "" : ",")
        + rest;
  }

  private Answer post(String path, String body) throws Exception {
    return post(path, body, tokenFor(path));
  }

  private Answer get(String path) throws Exception {
    return server.get(path);
  }

  private List<GlobalBudget.Event> journal() throws Exception {
    return new JournalReader(system)
        .current(1)
        .map(Journaled::event)
        .runWith(Sink.seq(), system)
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
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
        .filter(
            e -> e instanceof GlobalBudget.SpendAdjusted a && a.adjustmentId().equals(adjustmentId))
        .count();
  }

  private static String creditBody(String adjustmentId, String usd) {
    return "{\"adjustmentId\":\""
        + adjustmentId
        + "\",\"usd\":"
        + usd
        + ",\"operator\":\"alice\",\"reason\":\"refund\"}";
  }

  /** Reserves and settles {@code usd} for {@code brand}, so there is spend to credit. */
  private void spend(String brand, String usd) throws Exception {
    String id = brand + "-spend";
    assertEquals(
        201,
        post(
                "/ledger/reservations",
                "{\"id\":\""
                    + id
                    + "\",\"lane\":\"app\",\"brand\":\""
                    + brand
                    + "\",\"amountUsd\":"
                    + usd
                    + ",\"brandDailyUsd\":5,\"brandMonthlyUsd\":50}")
            .status());
    assertEquals(
        200,
        post("/ledger/reservations/" + id + "/settle", "{\"actualUsd\":" + usd + "}").status());
  }

  @Test
  void creditIsJournaledWithOperatorAndReasonAndShowsInUsage() throws Exception {
    String reserve =
        "{\"id\":\"c-r1\",\"lane\":\"app\",\"brand\":\"credit-b\",\"amountUsd\":1.00,\"brandDailyUsd\":5,\"brandMonthlyUsd\":50}";
    assertEquals(201, post("/ledger/reservations", reserve).status());
    assertEquals(200, post("/ledger/reservations/c-r1/settle", "{\"actualUsd\":0.80}").status());

    Answer credit =
        post(
            "/admin/brands/credit-b/credit",
            "{\"usd\":0.30,\"operator\":\"alice\",\"reason\":\"refund: duplicate call\"}");
    assertEquals(200, credit.status(), credit.raw().body());
    assertEquals("app", credit.body().get("lane").textValue());
    assertEquals("credit-b", credit.body().get("brand").textValue());
    assertUsd("-0.30", credit.body().get("deltaUsd"));
    String adjustmentId = credit.body().get("adjustmentId").textValue();
    assertTrue(
        adjustmentId.startsWith("adj-"), adjustmentId); // chosen by the server: none was sent

    JsonNode usage = get("/usage?brand=credit-b").body();
    assertUsd("0.50", cap(usage, "brand_daily", "credit-b").get("spentUsd"));
    assertUsd("0.50", cap(usage, "brand_monthly", "credit-b").get("spentUsd"));

    GlobalBudget.SpendAdjusted adjusted =
        journal().stream()
            .filter(
                e ->
                    e instanceof GlobalBudget.SpendAdjusted a
                        && a.adjustmentId().equals(adjustmentId))
            .map(GlobalBudget.SpendAdjusted.class::cast)
            .findFirst()
            .orElseThrow();
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

    assertUsd(
        "0.70", cap(get("/usage?brand=retry-b").body(), "brand_daily", "retry-b").get("spentUsd"));
    assertEquals(1, adjustmentsWithId("ticket-812:refund"));
  }

  @Test
  void anAdjustmentIdReusedForADifferentAdjustmentIsAConflict() throws Exception {
    spend("conflict-b", "1.00");
    assertEquals(
        200, post("/admin/brands/conflict-b/credit", creditBody("adj-reused", "0.30")).status());
    long events = journal().size();

    for (String[] reuse :
        new String[][] {
          {"/admin/brands/conflict-b/credit", creditBody("adj-reused", "0.40")}, // another amount
          {"/admin/brands/other-b/credit", creditBody("adj-reused", "0.30")}, // another brand
          {
            "/admin/adjustments",
            "{\"adjustmentId\":\"adj-reused\",\"lane\":\"free\",\"deltaUsd\":-0.30,"
                + "\"operator\":\"alice\",\"reason\":\"refund\"}"
          }
        }) { // another lane
      Answer conflict = post(reuse[0], reuse[1]);
      assertEquals(409, conflict.status(), conflict.raw().body());
      assertEquals("conflict", conflict.body().at("/error/type").textValue());
      assertTrue(
          conflict.body().at("/error/message").textValue().contains("adjustment id adj-reused"),
          conflict.raw().body());
      assertEquals("true", conflict.raw().headers().firstValue("x-gateway-error").orElse(null));
    }
    assertEquals(events, journal().size());
    assertUsd(
        "0.70",
        cap(get("/usage?brand=conflict-b").body(), "brand_daily", "conflict-b").get("spentUsd"));
  }

  /** Each row is the JSON value sent as adjustmentId. */
  @ParameterizedTest(name = "adjustmentId {0} is refused naming the field")
  @ValueSource(
      strings = {
        "\"\"",
        "\"has space\"",
        "\"a/b\"",
        "\"a-65-char-id-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"",
        "42",
        "null",
      })
  void aMalformedAdjustmentIdIsA400NamingIt(String json) throws Exception {
    for (String[] write :
        new String[][] {
          {
            "/admin/brands/b/credit",
            "{\"adjustmentId\":" + json + ",\"usd\":1,\"operator\":\"a\",\"reason\":\"r\"}"
          },
          {
            "/admin/adjustments",
            "{\"adjustmentId\":"
                + json
                + ",\"lane\":\"free\",\"deltaUsd\":1,\"operator\":\"a\",\"reason\":\"r\"}"
          }
        }) {
      Answer bad = post(write[0], write[1]);
      assertEquals(400, bad.status(), bad.raw().body());
      assertEquals("adjustmentId", bad.body().at("/error/field").textValue());
      assertTrue(
          bad.body()
              .at("/error/message")
              .textValue()
              .startsWith("adjustmentId must be 1-64 characters"),
          bad.raw().body());
    }
  }

  @Test
  void theCliRerunWithTheSameIdCreditsOnce() throws Exception {
    spend("cli-b", "1.00");
    String[] credit = {
      "credit",
      "--brand",
      "cli-b",
      "--usd",
      "0.25",
      "--window",
      today(),
      "--scope",
      "refund",
      "--reason",
      "refund",
      "--id",
      "cli-credit-1",
      "--host",
      "127.0.0.1",
      "--port",
      String.valueOf(server.port()),
      "--admin-token",
      ADMIN_TOKEN,
      "--operator",
      "alice"
    };
    List<String> outs = new java.util.ArrayList<>();
    for (int run = 0; run < 2; run++) {
      StringWriter out = new StringWriter();
      StringWriter err = new StringWriter();
      int exit =
          GatewayAdmin.commandLine()
              .setOut(new PrintWriter(out))
              .setErr(new PrintWriter(err))
              .execute(credit);
      assertEquals(0, exit, err.toString());
      assertTrue(err.toString().startsWith("adjustment id: cli-credit-1"), err.toString());
      outs.add(out.toString());
    }
    assertEquals(outs.get(0), outs.get(1));
    assertEquals(
        "cli-credit-1", LedgerApiServer.JSON.readTree(outs.get(0)).get("adjustmentId").textValue());
    assertUsd(
        "0.75", cap(get("/usage?brand=cli-b").body(), "brand_daily", "cli-b").get("spentUsd"));
    assertEquals(1, adjustmentsWithId("cli-credit-1"));
  }

  @Test
  void operatorSettleAndVoidAreJournaledWithWhoAndWhy() throws Exception {
    for (String id : List.of("o-1", "o-2")) {
      assertEquals(
          201,
          post(
                  "/ledger/reservations",
                  "{\"id\":\""
                      + id
                      + "\",\"lane\":\"app\",\"brand\":\"ops-b\",\"amountUsd\":0.40,\"brandDailyUsd\":5,\"brandMonthlyUsd\":50}")
              .status());
    }
    Answer settled =
        post(
            "/admin/reservations/o-1/settle",
            "{\"actualUsd\":0.25,\"operator\":\"bob\",\"reason\":\"caller crashed; invoice says 0.25\"}");
    assertEquals(200, settled.status(), settled.raw().body());
    assertEquals("settled", settled.body().get("status").textValue());
    Answer voided =
        post(
            "/admin/reservations/o-2/void",
            "{\"operator\":\"bob\",\"reason\":\"provider did not bill\"}");
    assertEquals(200, voided.status(), voided.raw().body());
    assertEquals("voided", voided.body().get("status").textValue());

    JsonNode usage = get("/usage?brand=ops-b").body();
    assertUsd("0.25", cap(usage, "brand_daily", "ops-b").get("spentUsd"));
    assertUsd("0", cap(usage, "brand_daily", "ops-b").get("reservedUsd"));

    List<GlobalBudget.Event> events = journal();
    var settle =
        events.stream()
            .filter(e -> e instanceof GlobalBudget.ReservationSettled s && s.id().equals("o-1"))
            .map(GlobalBudget.ReservationSettled.class::cast)
            .findFirst()
            .orElseThrow();
    assertEquals("bob", settle.operator());
    assertEquals("caller crashed; invoice says 0.25", settle.reason());
    var voidEvent =
        events.stream()
            .filter(e -> e instanceof GlobalBudget.ReservationVoided v && v.id().equals("o-2"))
            .map(GlobalBudget.ReservationVoided.class::cast)
            .findFirst()
            .orElseThrow();
    assertEquals("provider did not bill", voidEvent.reason());

    // A second close gets the first result and writes nothing.
    Answer again =
        post("/admin/reservations/o-1/void", "{\"operator\":\"bob\",\"reason\":\"oops\"}");
    assertEquals(200, again.status());
    assertEquals("settled", again.body().get("status").textValue());
    assertEquals(events.size(), journal().size());
  }

  /** The answer names what was corrected; a grant leaves the company's caps alone. */
  @Test
  void aCreditNamesItsWindowAndScopeAndAGrantMovesOnlyTheBrandsCaps() throws Exception {
    spend("grant-b", "1.00");
    BigDecimal globalBefore =
        cap(get("/usage").body(), "global_daily", "null").get("spentUsd").decimalValue();

    Answer grant =
        post(
            "/admin/brands/grant-b/credit",
            "{\"usd\":0.40,\"window\":\""
                + today()
                + "\",\"scope\":\"grant\",\"operator\":\"alice\",\"reason\":\"goodwill\"}");
    assertEquals(200, grant.status(), grant.raw().body());
    assertEquals(today(), grant.body().get("window").textValue());
    assertEquals("grant", grant.body().get("scope").textValue());

    JsonNode usage = get("/usage?brand=grant-b").body();
    assertUsd("0.60", cap(usage, "brand_daily", "grant-b").get("spentUsd"));
    assertUsd("0.60", cap(usage, "brand_monthly", "grant-b").get("spentUsd"));
    assertEquals(
        0,
        globalBefore.compareTo(
            cap(get("/usage").body(), "global_daily", "null").get("spentUsd").decimalValue()));
  }

  /** A correction of the month gives the month back, never today's daily caps. */
  @Test
  void aRefundOfTheMonthMovesNoDailyCap() throws Exception {
    spend("month-b", "1.00");
    String month = today().substring(0, 7);
    Answer refund =
        post(
            "/admin/brands/month-b/credit",
            "{\"usd\":0.30,\"window\":\""
                + month
                + "\",\"scope\":\"refund\",\"operator\":\"alice\",\"reason\":\"provider refund\"}");
    assertEquals(200, refund.status(), refund.raw().body());

    JsonNode usage = get("/usage?brand=month-b").body();
    assertUsd("1", cap(usage, "brand_daily", "month-b").get("spentUsd"));
    assertUsd("0.70", cap(usage, "brand_monthly", "month-b").get("spentUsd"));
  }

  @ParameterizedTest(name = "{0} -> 400 naming {1}, nothing journaled")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      {"usd":0.10,"scope":"refund","operator":"a","reason":"r"}                          | window
      {"usd":0.10,"window":"yesterday","scope":"refund","operator":"a","reason":"r"}     | window
      {"usd":0.10,"window":"2999-01-01","scope":"refund","operator":"a","reason":"r"}    | window
      {"usd":0.10,"window":"2026-11-30","operator":"a","reason":"r"}                     | scope
      {"usd":0.10,"window":"2026-11-30","scope":"gift","operator":"a","reason":"r"}      | scope
      """)
  void aCreditWithoutARealWindowOrScopeIs400(String body, String field) throws Exception {
    int before = journal().size();
    Answer bad = post("/admin/brands/w-b/credit", body);
    assertEquals(400, bad.status(), bad.raw().body());
    assertEquals(field, bad.body().at("/error/field").textValue(), bad.raw().body());
    assertEquals(before, journal().size());
  }

  /** Numbers no BigDecimal holds were a plain-text 500 (Jackson throws NumberFormatException). */
  @ParameterizedTest(name = "{0} {1} -> 400 naming {2}, nothing journaled")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      /admin/brands/x-b/credit         | {"usd":1e2147483648,"operator":"a","reason":"r"}                       | usd
      /admin/adjustments               | {"lane":"free","deltaUsd":-1e-2147483648,"operator":"a","reason":"r"}  | deltaUsd
      /admin/reservations/x-o/settle   | {"actualUsd":0.01e-2147483647,"operator":"a","reason":"r"}            | actualUsd
      """)
  void aNumberOutOfAnyRangeIs400NamingItsField(String path, String body, String field)
      throws Exception {
    post("/ledger/reservations", "{\"id\":\"x-o\",\"lane\":\"free\",\"amountUsd\":0.20}");
    int before = journal().size();
    Answer bad = post(path, body);
    assertEquals(400, bad.status(), bad.raw().body());
    assertEquals(field, bad.body().at("/error/field").textValue(), bad.raw().body());
    assertEquals("true", bad.raw().headers().firstValue("x-gateway-error").orElse(null));
    assertEquals(before, journal().size());
  }

  /** Cents typed as dollars: refused naming the bound, and the reservation stays open. */
  @Test
  void anOperatorSettleAboveTheMaxSettleMultipleIs400NamingTheBound() throws Exception {
    assertEquals(
        201,
        post("/ledger/reservations", "{\"id\":\"o-big\",\"lane\":\"free\",\"amountUsd\":0.12}")
            .status());
    Answer mistake =
        post(
            "/admin/reservations/o-big/settle",
            "{\"actualUsd\":12,\"operator\":\"bob\",\"reason\":\"invoice says 12 (cents)\"}");
    assertEquals(400, mistake.status(), mistake.raw().body());
    assertEquals("actualUsd", mistake.body().at("/error/field").textValue());
    assertTrue(
        mistake.body().at("/error/message").textValue().contains("ledger.max-settle-multiple (10)"),
        mistake.raw().body());
    assertEquals("reserved", get("/ledger/reservations/o-big").body().get("status").textValue());
  }

  @Test
  void adjustmentOnTheFreeLaneMovesTheGlobalAndPoolCaps() throws Exception {
    JsonNode before = get("/usage").body();
    Answer adjusted =
        post(
            "/admin/adjustments",
            "{\"lane\":\"free\",\"deltaUsd\":0.10,\"operator\":\"carol\",\"reason\":\"missed invoice line\"}");
    assertEquals(200, adjusted.status(), adjusted.raw().body());
    JsonNode after = get("/usage").body();
    BigDecimal freeBefore = cap(before, "free_daily", "null").get("spentUsd").decimalValue();
    assertEquals(
        0,
        freeBefore
            .add(new BigDecimal("0.10"))
            .compareTo(cap(after, "free_daily", "null").get("spentUsd").decimalValue()));
  }

  @Test
  void refusesWithoutTokenOperatorOrReasonAndOnUnknownIds() throws Exception {
    assertEquals(
        401,
        post("/admin/brands/b/credit", "{\"usd\":1,\"operator\":\"a\",\"reason\":\"r\"}", null)
            .status());
    Answer noReason = post("/admin/brands/b/credit", "{\"usd\":1,\"operator\":\"a\"}");
    assertEquals(400, noReason.status());
    assertEquals("reason", noReason.body().at("/error/field").textValue());
    assertEquals("true", noReason.raw().headers().firstValue("x-gateway-error").orElse(null));
    Answer noOperator = post("/admin/reservations/x/void", "{\"reason\":\"r\"}");
    assertEquals("operator", noOperator.body().at("/error/field").textValue());
    assertEquals(
        400,
        post("/admin/brands/b/credit", "{\"usd\":-1,\"operator\":\"a\",\"reason\":\"r\"}")
            .status());
    assertEquals(
        404,
        post("/admin/reservations/nope/void", "{\"operator\":\"a\",\"reason\":\"r\"}").status());
  }

  @ParameterizedTest(name = "content-type [{0}] on {1} → 415 naming the header, nothing journaled")
  @CsvSource(
      delimiter = '|',
      nullValues = "none",
      textBlock =
          """
      multipart/form-data; boundary=b   | /admin/brands/ct-b/credit       | {"usd":1,"operator":"a","reason":"r"}
      multipart/mixed; boundary=b       | /admin/adjustments              | {"lane":"free","deltaUsd":0.1,"operator":"a","reason":"r"}
      multipart/form-data; boundary=b   | /admin/reservations/ct-o/settle | {"actualUsd":0.1,"operator":"a","reason":"r"}
      multipart/form-data; boundary=b   | /admin/reservations/ct-o/void   | {"operator":"a","reason":"r"}
      """)
  void aBodyUnderAnotherContentTypeIs415AndWritesNothing(
      String contentType, String path, String body) throws Exception {
    post("/ledger/reservations", "{\"id\":\"ct-o\",\"lane\":\"free\",\"amountUsd\":0.20}");
    int events = journal().size();

    Answer refused = post(path, body, ADMIN_TOKEN, contentType);

    assertEquals(415, refused.status(), refused.raw().body());
    assertEquals("unsupported_media_type", refused.body().at("/error/type").textValue());
    assertEquals("content-type", refused.body().at("/error/field").textValue());
    assertEquals("true", refused.raw().headers().firstValue("x-gateway-error").orElse(null));
    assertEquals(events, journal().size());
    assertEquals("reserved", get("/ledger/reservations/ct-o").body().get("status").textValue());
  }

  @Test
  void theTokenIsCheckedBeforeTheContentType() throws Exception {
    assertEquals(
        401,
        post("/admin/brands/b/credit", "usd=1", "wrong-token", "application/x-www-form-urlencoded")
            .status());
  }

  @Test
  void aFieldNamedTwiceIsRefusedNotReadAsItsLastValue() throws Exception {
    Answer twice =
        post(
            "/admin/brands/b/credit",
            "{\"usd\":1,\"usd\":500,\"operator\":\"a\",\"reason\":\"r\"}");
    assertEquals(400, twice.status());
    assertEquals("body", twice.body().at("/error/field").textValue());
  }

  // --- the operator's credential ----------------------------------------------------------------

  /**
   * Each row: an admin write and its body, all well-formed (the admin token would be answered 200
   * or 404).
   */
  private static final String[][] WRITES = {
    {"/admin/brands/cred-b/credit", "{\"usd\":0.10,\"operator\":\"mallory\",\"reason\":\"r\"}"},
    {
      "/admin/adjustments",
      "{\"lane\":\"free\",\"deltaUsd\":-0.10,\"operator\":\"mallory\",\"reason\":\"r\"}"
    },
    {
      "/admin/reservations/cred-o/settle",
      "{\"actualUsd\":0.01,\"operator\":\"mallory\",\"reason\":\"r\"}"
    },
    {"/admin/reservations/cred-o/void", "{\"operator\":\"mallory\",\"reason\":\"r\"}"}
  };

  @Test
  void theCallerTokenNeverOpensAnAdminRouteAndNothingIsJournaled() throws Exception {
    spend("cred-b", "1.00");
    post("/ledger/reservations", "{\"id\":\"cred-o\",\"lane\":\"free\",\"amountUsd\":0.20}");
    int events = journal().size();
    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();

    for (String[] write : WRITES) {
      for (String header :
          new String[] {"authorization: Bearer " + TOKEN, "x-api-key: " + TOKEN, "none"}) {
        var request =
            java.net.http.HttpRequest.newBuilder(
                    java.net.URI.create("http://127.0.0.1:" + server.port() + write[0]))
                .header("content-type", "application/json")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString(write[1]));
        if (!header.equals("none")) {
          request.header(
              header.substring(0, header.indexOf(':')), header.substring(header.indexOf(':') + 2));
        }
        Answer refused = server.send(request.build());
        assertEquals(
            401, refused.status(), write[0] + " with " + header + ": " + refused.raw().body());
        assertEquals("unauthorized", refused.body().at("/error/type").textValue());
        assertTrue(
            refused.body().at("/error/message").textValue().contains("GATEWAY_ADMIN_TOKEN"),
            refused.raw().body());
      }
    }
    assertEquals(events, journal().size());
    assertEquals("reserved", get("/ledger/reservations/cred-o").body().get("status").textValue());
    assertUsd(
        "1.00", cap(get("/usage?brand=cred-b").body(), "brand_daily", "cred-b").get("spentUsd"));
  }

  @Test
  void anUnknownAdminRouteWithTheAdminTokenIsA404() throws Exception {
    Answer unknown = post("/admin/brands/b/refund", "{}");
    assertEquals(404, unknown.status(), unknown.raw().body());
  }

  @Test
  void aCreditThatWouldTakeSpendBelowZeroIsRefusedNamingTheCapAndWritesNothing() throws Exception {
    spend("neg-b", "1.00");
    int events = journal().size();

    Answer refused = post("/admin/brands/neg-b/credit", creditBody("neg-credit", "1.50"));
    assertEquals(409, refused.status(), refused.raw().body());
    assertEquals("adjustment_refused", refused.body().at("/error/type").textValue());
    assertEquals("brand_daily", refused.body().at("/error/cap").textValue());
    assertEquals("neg-b", refused.body().at("/error/subject").textValue());
    assertUsd("1.00", refused.body().at("/error/spentUsd"));
    assertTrue(
        refused.body().at("/error/message").textValue().contains("below zero"),
        refused.raw().body());
    assertEquals("true", refused.raw().headers().firstValue("x-gateway-error").orElse(null));
    assertEquals(events, journal().size());
    assertUsd(
        "1.00", cap(get("/usage?brand=neg-b").body(), "brand_daily", "neg-b").get("spentUsd"));

    // The probe's shape: a million-dollar credit of the free lane.
    Answer free =
        post(
            "/admin/adjustments",
            "{\"lane\":\"free\",\"deltaUsd\":-999,\"operator\":\"alice\",\"reason\":\"r\"}");
    assertEquals(409, free.status(), free.raw().body());
    assertEquals(events, journal().size());
  }

  @ParameterizedTest(name = "{0} {1} USD is refused naming {2}")
  @CsvSource({
    "/admin/brands/big-b/credit, usd,      usd,      1000000",
    "/admin/brands/big-b/credit, usd,      usd,      1000.01",
    "/admin/adjustments,         deltaUsd, deltaUsd, -1000000",
    "/admin/adjustments,         deltaUsd, deltaUsd, 1000.000001",
  })
  void anAmountAboveTheLimitIsA400NamingTheField(
      String path, String bodyField, String field, String usd) throws Exception {
    int events = journal().size();
    String lane = path.endsWith("adjustments") ? "\"lane\":\"free\"," : "";
    Answer bad =
        post(
            path,
            "{" + lane + "\"" + bodyField + "\":" + usd + ",\"operator\":\"a\",\"reason\":\"r\"}");
    assertEquals(400, bad.status(), bad.raw().body());
    assertEquals(field, bad.body().at("/error/field").textValue());
    assertTrue(
        bad.body().at("/error/message").textValue().startsWith(field + " must be at most 1000 USD"),
        bad.raw().body());
    assertEquals(events, journal().size());
  }

  /** Each row: the field and the JSON string sent in it. */
  @ParameterizedTest(name = "{0} {1} is refused naming it")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      reason   | refund\\n05:00:00.000 INFO  d.s.l.GlobalBudget - FORGED LINE
      reason   | refund\\r\\nFORGED
      reason   | tab\\there
      reason   | escape \\u001b[2J clears the screen
      reason   | next line \\u0085 (NEL)
      reason   | line separator \\u2028 here
      reason   | bidi \\u202e override
      operator | alice\\nFORGED
      operator | bob\\u0000
      """)
  void operatorAndReasonMustBePlainPrintableText(String field, String json) throws Exception {
    int events = journal().size();
    String operator = field.equals("operator") ? json : "alice";
    String reason = field.equals("reason") ? json : "refund";
    for (String[] write :
        new String[][] {
          {"/admin/brands/text-b/credit", "\"usd\":0.01,"},
          {"/admin/adjustments", "\"lane\":\"free\",\"deltaUsd\":0.01,"},
          {"/admin/reservations/text-o/void", ""}
        }) {
      Answer bad =
          post(
              write[0],
              "{" + write[1] + "\"operator\":\"" + operator + "\",\"reason\":\"" + reason + "\"}");
      assertEquals(400, bad.status(), write[0] + ": " + bad.raw().body());
      assertEquals(field, bad.body().at("/error/field").textValue());
      assertTrue(
          bad.body().at("/error/message").textValue().contains("plain printable text"),
          bad.raw().body());
    }
    assertEquals(events, journal().size());
    assertTrue(
        logs.allText().stream().noneMatch(l -> l.contains("FORGED")),
        () -> String.join("\n", logs.allText()));
  }

  @Test
  void operatorAndReasonAreAtMost200Characters() throws Exception {
    String longest = "x".repeat(200);
    assertEquals(
        200,
        post(
                "/admin/adjustments",
                "{\"lane\":\"free\",\"deltaUsd\":0.01,\"operator\":\""
                    + longest
                    + "\",\"reason\":\""
                    + longest
                    + "\"}")
            .status());
    Answer tooLong =
        post(
            "/admin/adjustments",
            "{\"lane\":\"free\",\"deltaUsd\":0.01,\"operator\":\"a\",\"reason\":\""
                + longest
                + "y\"}");
    assertEquals(400, tooLong.status());
    assertEquals("reason", tooLong.body().at("/error/field").textValue());
  }

  @Test
  void everyAdminWriteIsOneJsonLogLineWhateverItsPrintableText() throws Exception {
    spend("log-b", "1.00");
    String reason =
        "refund \\\"quoted\\\" \\\\ back\\\\slash {\\\"status\\\":200} ünïcödé ✓ 05:00:00.000 INFO x - y";
    Answer credit =
        post(
            "/admin/brands/log-b/credit",
            "{\"adjustmentId\":\"log-credit-1\",\"usd\":0.25,"
                + "\"operator\":\"o'brien <ops>\",\"reason\":\""
                + reason
                + "\"}");
    assertEquals(200, credit.status(), credit.raw().body());
    String expectedReason = credit.body().get("reason").textValue();
    assertTrue(expectedReason.contains("ünïcödé ✓"), expectedReason);

    List<String> lines =
        logs.messagesOf("admin").stream().filter(l -> l.contains("log-credit-1")).toList();
    assertEquals(1, lines.size(), lines::toString);
    String line = lines.get(0);
    assertTrue(
        line.chars().allMatch(c -> c >= 0x20 && c < 0x7f), "one line of printable ASCII: " + line);
    JsonNode json = LedgerApiServer.JSON.readTree(line);
    assertEquals("credit", json.get("action").textValue());
    assertEquals("log-credit-1", json.get("id").textValue());
    assertEquals("client", json.get("id_chosen_by").textValue());
    assertEquals("log-b", json.get("brand").textValue());
    assertUsd("-0.25", json.get("usd"));
    assertEquals("o'brien <ops>", json.get("operator").textValue());
    assertEquals(expectedReason, json.get("reason").textValue());
    assertEquals(200, json.get("status").intValue());
    assertTrue(
        logs.allText().stream().noneMatch(l -> l.contains(ADMIN_TOKEN) || l.contains(TOKEN)));

    // A refused write is logged with its status too, still one line.
    post("/admin/brands/log-b/credit", creditBody("log-credit-2", "5"));
    JsonNode refused =
        LedgerApiServer.JSON.readTree(
            logs.messagesOf("admin").stream()
                .filter(l -> l.contains("log-credit-2"))
                .findFirst()
                .orElseThrow());
    assertEquals(409, refused.get("status").intValue());
  }
}
