package dev.spendgateway.edge.ledger;

import static dev.spendgateway.edge.testkit.LedgerApiServer.assertUsd;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.spendgateway.edge.testkit.LedgerApiServer;
import dev.spendgateway.edge.testkit.LedgerApiServer.Answer;
import dev.spendgateway.ledger.GlobalBudget;
import dev.spendgateway.ledger.LedgerClient;
import dev.spendgateway.policy.caps.CapWindows;
import java.math.BigDecimal;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every status and body shape of the ledger API, over real HTTP against a real (in-memory H2)
 * ledger.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LedgerRoutesTest {
  /** gateway.usage-top-subjects and gateway.body-read-timeout of these routes. */
  private static final int TOP = 20;

  private static final Duration BODY_READ = Duration.ofSeconds(30);
  private LedgerApiServer server;
  private ActorSystem<Void> system;

  @BeforeAll
  void start() throws Exception {
    server =
        LedgerApiServer.start(
            LedgerRoutesTest.class,
            "ledger-routes-test.conf",
            null,
            ledger -> new LedgerRoutes(ledger, LedgerApiServer.JSON, TOP, BODY_READ).route());
    system = server.system;
  }

  @AfterAll
  void stop() throws Exception {
    server.close();
  }

  private Answer post(String path, String body) throws Exception {
    return post(path, body, "application/json");
  }

  /** {@code contentType} null sends no content-type header. */
  private Answer post(String path, String body, String contentType) throws Exception {
    return server.post(path, body, null, contentType);
  }

  private Answer get(String path) throws Exception {
    return server.get(path);
  }

  private static void assertGatewayError(Answer a) {
    assertEquals("true", a.raw().headers().firstValue("x-gateway-error").orElse(null));
  }

  @Test
  void reserveAnswers201AndTheSameAgainForTheSameId() throws Exception {
    String body =
        "{\"id\":\"r-1\",\"lane\":\"app\",\"brand\":\"b1\",\"amountUsd\":0.30,\"brandDailyUsd\":5,\"brandMonthlyUsd\":50}";
    Answer first = post("/ledger/reservations", body);
    assertEquals(201, first.status());
    assertEquals("r-1", first.body().get("id").textValue());
    assertEquals("reserved", first.body().get("status").textValue());
    assertUsd("0.30", first.body().get("amountUsd"));
    assertEquals(3, first.body().size());

    Answer again = post("/ledger/reservations", body);
    assertEquals(201, again.status());
    assertEquals(first.body(), again.body());
  }

  @Test
  void sameIdWithDifferentFieldsIs409() throws Exception {
    post("/ledger/reservations", "{\"id\":\"c-1\",\"lane\":\"free\",\"amountUsd\":0.01}");
    Answer conflict =
        post("/ledger/reservations", "{\"id\":\"c-1\",\"lane\":\"free\",\"amountUsd\":0.02}");
    assertEquals(409, conflict.status());
    assertEquals("conflict", conflict.body().at("/error/type").textValue());
    assertGatewayError(conflict);
  }

  @Test
  void refusalIs402NamingTheCapAndHeadroom() throws Exception {
    assertEquals(
        201,
        post(
                "/ledger/reservations",
                "{\"id\":\"p-1\",\"lane\":\"trial\",\"brand\":\"preview-9\",\"amountUsd\":0.40}")
            .status());
    Answer refused =
        post(
            "/ledger/reservations",
            "{\"id\":\"p-2\",\"lane\":\"trial\",\"brand\":\"preview-9\",\"amountUsd\":0.30}");
    assertEquals(402, refused.status());
    JsonNode error = refused.body().get("error");
    assertEquals("budget_exceeded", error.get("type").textValue());
    assertEquals("preview_lifetime", error.get("cap").textValue());
    assertEquals("preview-9", error.get("subject").textValue());
    assertTrue(error.get("message").textValue().contains("preview_lifetime"));
    assertTrue(
        error.get("message").textValue().contains("$0.2 headroom"),
        error.get("message").textValue());
    assertGatewayError(refused);
  }

  @Test
  void refusalOfAGlobalCapHasANullSubject() throws Exception {
    Answer refused =
        post(
            "/ledger/reservations",
            "{\"id\":\"g-1\",\"lane\":\"app\",\"brand\":\"b9\",\"amountUsd\":41,\"brandDailyUsd\":100,\"brandMonthlyUsd\":100}");
    assertEquals(402, refused.status());
    assertEquals("global_daily", refused.body().at("/error/cap").textValue());
    assertTrue(refused.body().get("error").has("subject"));
    assertTrue(refused.body().at("/error/subject").isNull());
    // the refused id stays refused, and it shows as such
    assertEquals(
        402,
        post(
                "/ledger/reservations",
                "{\"id\":\"g-1\",\"lane\":\"app\",\"brand\":\"b9\",\"amountUsd\":41,\"brandDailyUsd\":100,\"brandMonthlyUsd\":100}")
            .status());
    assertEquals("refused", get("/ledger/reservations/g-1").body().get("status").textValue());
  }

  @Test
  void settleAnswers200WithTheActualAndTheSameAgainForTheSameAmount() throws Exception {
    post("/ledger/reservations", "{\"id\":\"s-1\",\"lane\":\"free\",\"amountUsd\":0.30}");
    Answer settled = post("/ledger/reservations/s-1/settle", "{\"actualUsd\":0.12}");
    assertEquals(200, settled.status());
    assertEquals("s-1", settled.body().get("id").textValue());
    assertEquals("settled", settled.body().get("status").textValue());
    assertUsd("0.12", settled.body().get("actualUsd"));

    Answer again = post("/ledger/reservations/s-1/settle", "{\"actualUsd\":0.12}");
    assertEquals(200, again.status());
    assertEquals(settled.body(), again.body());
  }

  /**
   * The caller and the books disagree about what it cost: the caller must hear it, not a silent
   * 200.
   */
  @Test
  void aRepeatedSettleWithAnotherAmountIs409AndTheFirstAmountStays() throws Exception {
    post("/ledger/reservations", "{\"id\":\"s-2\",\"lane\":\"free\",\"amountUsd\":0.30}");
    assertEquals(200, post("/ledger/reservations/s-2/settle", "{\"actualUsd\":0.12}").status());

    Answer conflict = post("/ledger/reservations/s-2/settle", "{\"actualUsd\":0.20}");
    assertEquals(409, conflict.status());
    assertEquals("conflict", conflict.body().at("/error/type").textValue());
    assertTrue(
        conflict
            .body()
            .at("/error/message")
            .textValue()
            .contains("already settled at actualUsd 0.12"),
        conflict.raw().body());
    assertGatewayError(conflict);
    assertUsd("0.12", get("/ledger/reservations/s-2").body().get("actualUsd"));
  }

  /**
   * A units mistake (cents sent as dollars) is refused naming the bound; the reservation stays
   * open.
   */
  @Test
  void aSettleAboveTheMaxSettleMultipleIs400NamingTheBound() throws Exception {
    post("/ledger/reservations", "{\"id\":\"s-3\",\"lane\":\"free\",\"amountUsd\":0.12}");
    Answer mistake = post("/ledger/reservations/s-3/settle", "{\"actualUsd\":12}");
    assertEquals(400, mistake.status());
    assertEquals("actualUsd", mistake.body().at("/error/field").textValue());
    assertTrue(
        mistake.body().at("/error/message").textValue().contains("ledger.max-settle-multiple (10)"),
        mistake.raw().body());
    assertEquals("reserved", get("/ledger/reservations/s-3").body().get("status").textValue());
  }

  @Test
  void voidAnswers200AtZero() throws Exception {
    post("/ledger/reservations", "{\"id\":\"v-1\",\"lane\":\"free\",\"amountUsd\":0.30}");
    Answer voided = post("/ledger/reservations/v-1/void", "");
    assertEquals(200, voided.status());
    assertEquals("voided", voided.body().get("status").textValue());
    assertUsd("0", voided.body().get("actualUsd"));
  }

  /**
   * Any holder of the gateway token can void a ledger API reservation whose id it knows; the
   * service that reserved it then settles its real cost. That settle was a 200 ("voided") while the
   * books kept $0: the cost went unbooked and the caller was told all was well.
   */
  @Test
  void aSettleAboveZeroAfterAVoidIs409AndTheBooksKeepTheVoid() throws Exception {
    post("/ledger/reservations", "{\"id\":\"sv-1\",\"lane\":\"free\",\"amountUsd\":0.30}");
    assertEquals(200, post("/ledger/reservations/sv-1/void", "").status());
    JsonNode before = get("/usage").body();

    Answer late = post("/ledger/reservations/sv-1/settle", "{\"actualUsd\":0.12}");

    assertEquals(409, late.status(), late.raw().body());
    assertEquals("conflict", late.body().at("/error/type").textValue());
    assertTrue(
        late.body().at("/error/message").textValue().contains("actualUsd 0.12 was not booked"),
        late.raw().body());
    assertEquals(before, get("/usage").body());
    assertEquals("voided", get("/ledger/reservations/sv-1").body().get("status").textValue());
    // The same close again (a settle at $0) still repeats the void.
    assertEquals(200, post("/ledger/reservations/sv-1/settle", "{\"actualUsd\":0}").status());
  }

  @Test
  void settlingARefusedIdIs409() throws Exception {
    post("/ledger/reservations", "{\"id\":\"rf-1\",\"lane\":\"free\",\"amountUsd\":3.5}");
    Answer a = post("/ledger/reservations/rf-1/settle", "{\"actualUsd\":0.1}");
    assertEquals(409, a.status());
  }

  @Test
  void unknownIdsAre404() throws Exception {
    assertEquals(404, get("/ledger/reservations/nope").status());
    assertEquals(404, post("/ledger/reservations/nope/settle", "{\"actualUsd\":0.1}").status());
    Answer voided = post("/ledger/reservations/nope/void", "");
    assertEquals(404, voided.status());
    assertEquals("not_found", voided.body().at("/error/type").textValue());
  }

  @Test
  void getShowsTheReservationWithActualNullWhileOpen() throws Exception {
    post(
        "/ledger/reservations",
        "{\"id\":\"q-1\",\"lane\":\"app\",\"brand\":\"b2\",\"amountUsd\":0.30,\"brandDailyUsd\":5,\"brandMonthlyUsd\":50}");
    JsonNode open = get("/ledger/reservations/q-1").body();
    assertEquals("q-1", open.get("id").textValue());
    assertEquals("reserved", open.get("status").textValue());
    assertEquals("app", open.get("lane").textValue());
    assertEquals("b2", open.get("brand").textValue());
    assertUsd("0.30", open.get("amountUsd"));
    assertTrue(open.has("actualUsd") && open.get("actualUsd").isNull());

    post("/ledger/reservations/q-1/settle", "{\"actualUsd\":0.12}");
    JsonNode settled = get("/ledger/reservations/q-1").body();
    assertEquals("settled", settled.get("status").textValue());
    assertUsd("0.12", settled.get("actualUsd"));
  }

  @Test
  void usageShowsEveryCapWindow() throws Exception {
    post(
        "/ledger/reservations",
        "{\"id\":\"u-1\",\"lane\":\"app\",\"brand\":\"ub\",\"amountUsd\":1.50,\"brandDailyUsd\":5,\"brandMonthlyUsd\":50}");
    Answer usage = get("/usage?brand=ub");
    assertEquals(200, usage.status());
    JsonNode caps = usage.body().get("caps");
    JsonNode global = caps.get(0);
    assertEquals("global_daily", global.get("cap").textValue());
    assertTrue(global.get("subject").isNull());
    assertEquals(CapWindows.dayKey(Instant.now()), global.get("window").textValue());
    // The windows' zone is named (ledger.window-zone, UTC in this test's config).
    assertEquals("UTC", usage.body().get("zone").textValue());
    assertUsd("40", global.get("limitUsd"));
    BigDecimal remaining =
        global
            .get("limitUsd")
            .decimalValue()
            .subtract(global.get("spentUsd").decimalValue())
            .subtract(global.get("reservedUsd").decimalValue());
    assertUsd(remaining.toPlainString(), global.get("remainingUsd"));
    JsonNode brandDaily = null;
    for (JsonNode cap : caps) {
      if (cap.get("cap").textValue().equals("brand_daily")) {
        brandDaily = cap;
      }
    }
    assertEquals("ub", brandDaily.get("subject").textValue());
    assertUsd("5", brandDaily.get("limitUsd"));
    assertUsd("1.5", brandDaily.get("reservedUsd"));
    assertUsd("3.5", brandDaily.get("remainingUsd"));
    assertTrue(usage.body().get("openReservations").asInt() >= 1);
    assertEquals(200, get("/usage").status());
  }

  static Stream<Arguments> malformed() {
    String tooLong = "x".repeat(200);
    return Stream.of(
        Arguments.of("{not json", "body"),
        Arguments.of("[1,2]", "body"),
        Arguments.of("{\"lane\":\"free\",\"amountUsd\":1}", "id"),
        Arguments.of("{\"id\":\"" + tooLong + "\",\"lane\":\"free\",\"amountUsd\":1}", "id"),
        Arguments.of("{\"id\":\"a b\",\"lane\":\"free\",\"amountUsd\":1}", "id"),
        Arguments.of("{\"id\":\"m-1\",\"amountUsd\":1}", "lane"),
        Arguments.of("{\"id\":\"m-1\",\"lane\":\"gold\",\"amountUsd\":1}", "lane"),
        Arguments.of(
            "{\"id\":\"m-1\",\"lane\":\"app\",\"amountUsd\":1,\"brandDailyUsd\":5,\"brandMonthlyUsd\":5}",
            "brand"),
        Arguments.of(
            "{\"id\":\"m-1\",\"lane\":\"trial\",\"brand\":\"" + tooLong + "\",\"amountUsd\":0.1}",
            "brand"),
        Arguments.of("{\"id\":\"m-1\",\"lane\":\"free\"}", "amountUsd"),
        Arguments.of("{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":-0.30}", "amountUsd"),
        Arguments.of("{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":0}", "amountUsd"),
        Arguments.of("{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":0.000000}", "amountUsd"),
        Arguments.of("{\"id\":\"gw-m-1\",\"lane\":\"free\",\"amountUsd\":1}", "id"),
        Arguments.of("{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":\"NaN\"}", "amountUsd"),
        Arguments.of("{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":NaN}", "body"),
        Arguments.of("{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":1e12}", "amountUsd"),
        Arguments.of("{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":0.0000001}", "amountUsd"),
        // Exponents a BigDecimal cannot hold: Jackson throws a NumberFormatException, not a parse
        // error (was a plain-text 500).
        Arguments.of("{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":1e2147483648}", "amountUsd"),
        Arguments.of("{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":1e-2147483648}", "amountUsd"),
        Arguments.of(
            "{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":0.01e-2147483647}", "amountUsd"),
        Arguments.of(
            "{\"id\":\"m-1\",\"lane\":\"app\",\"brand\":\"b1\",\"amountUsd\":1,\"brandDailyUsd\":1e2147483648,\"brandMonthlyUsd\":5}",
            "brandDailyUsd"),
        Arguments.of(
            "{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":1,\"note\":{\"x\":[1e-2147483648]}}",
            "note"),
        Arguments.of(
            "{\"id\":\"m-1\",\"lane\":\"app\",\"brand\":\"b1\",\"amountUsd\":1,\"brandMonthlyUsd\":5}",
            "brandDailyUsd"),
        Arguments.of(
            "{\"id\":\"m-1\",\"lane\":\"app\",\"brand\":\"b1\",\"amountUsd\":1,\"brandDailyUsd\":5}",
            "brandMonthlyUsd"),
        // A field the lane does not use is still refused when malformed (was ignored: the reserve
        // went on to the ledger).
        Arguments.of(
            "{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":1,\"brandDailyUsd\":\"banana\"}",
            "brandDailyUsd"),
        Arguments.of(
            "{\"id\":\"m-1\",\"lane\":\"trial\",\"brand\":\"p1\",\"amountUsd\":1,\"brandMonthlyUsd\":-5}",
            "brandMonthlyUsd"),
        Arguments.of(
            "{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":1,\"brand\":\"a/../b\"}", "brand"),
        Arguments.of("{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":1,\"tag\":\"a,b\"}", "tag"),
        Arguments.of("{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":1,\"tag\":\"\"}", "tag"),
        Arguments.of("{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":1,\"tag\":7}", "tag"),
        Arguments.of(
            "{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":1,\"model\":\"gpt 6\"}", "model"),
        Arguments.of("{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":1,\"model\":\"\"}", "model"),
        Arguments.of(
            "{\"id\":\"m-1\",\"lane\":\"free\",\"amountUsd\":1,\"provider\":\"%s\"}"
                .formatted("p".repeat(129)),
            "provider"));
  }

  @ParameterizedTest(name = "{0} -> 400 naming {1}")
  @MethodSource("malformed")
  void malformedReservationsAre400NamingTheFieldAndChangeNothing(String body, String field)
      throws Exception {
    JsonNode before = get("/usage").body();
    Answer bad = post("/ledger/reservations", body);
    assertEquals(400, bad.status());
    assertEquals("invalid_request", bad.body().at("/error/type").textValue());
    assertEquals(field, bad.body().at("/error/field").textValue());
    assertTrue(bad.body().at("/error/message").textValue().contains(field));
    assertGatewayError(bad);
    assertEquals(before, get("/usage").body());
    assertEquals(404, get("/ledger/reservations/m-1").status());
  }

  @Test
  void malformedSettlesAre400() throws Exception {
    post("/ledger/reservations", "{\"id\":\"ms-1\",\"lane\":\"free\",\"amountUsd\":0.30}");
    assertEquals(
        "actualUsd",
        post("/ledger/reservations/ms-1/settle", "{\"actualUsd\":-1}")
            .body()
            .at("/error/field")
            .textValue());
    assertEquals(
        "actualUsd",
        post("/ledger/reservations/ms-1/settle", "{}").body().at("/error/field").textValue());
    assertEquals(
        "body",
        post("/ledger/reservations/ms-1/settle", "nope").body().at("/error/field").textValue());
    Answer hugeExponent = post("/ledger/reservations/ms-1/settle", "{\"actualUsd\":1e2147483648}");
    assertEquals(400, hugeExponent.status());
    assertEquals("actualUsd", hugeExponent.body().at("/error/field").textValue());
    assertEquals(
        400,
        post("/ledger/reservations/" + "y".repeat(200) + "/settle", "{\"actualUsd\":1}").status());
    assertEquals("reserved", get("/ledger/reservations/ms-1").body().get("status").textValue());
  }

  @ParameterizedTest(
      name = "content-type [{0}] on {1} → 415 naming the header, and the books stay as they were")
  @CsvSource(
      delimiter = '|',
      nullValues = "none",
      textBlock =
          """
      multipart/form-data; boundary=b       | /ledger/reservations
      multipart/mixed; boundary=b           | /ledger/reservations
      multipart/form-data; boundary=b       | /ledger/reservations/ct-open/settle
      """)
  void aBodyUnderAnotherContentTypeIs415AndChangesNothing(String contentType, String path)
      throws Exception {
    post("/ledger/reservations", "{\"id\":\"ct-open\",\"lane\":\"free\",\"amountUsd\":0.30}");
    JsonNode before = get("/usage").body();
    String body =
        path.endsWith("/settle")
            ? "{\"actualUsd\":0.10}"
            : "{\"id\":\"ct-1\",\"lane\":\"free\",\"amountUsd\":0.30}";

    Answer refused = post(path, body, contentType);

    assertEquals(415, refused.status());
    assertEquals("unsupported_media_type", refused.body().at("/error/type").textValue());
    assertEquals("content-type", refused.body().at("/error/field").textValue());
    assertTrue(
        refused
            .body()
            .at("/error/message")
            .textValue()
            .contains("`content-type: application/json`"),
        refused.raw().body());
    assertGatewayError(refused);
    assertEquals(before, get("/usage").body());
    assertEquals(404, get("/ledger/reservations/ct-1").status());
    assertEquals("reserved", get("/ledger/reservations/ct-open").body().get("status").textValue());
  }

  /**
   * curl -d sends a form type, fetch text/plain, some clients nothing: the body is still read as
   * JSON.
   */
  @ParameterizedTest(name = "content-type [{0}] is read as JSON")
  @CsvSource(
      delimiter = '|',
      nullValues = "none",
      textBlock =
          """
      none                                  | lenient-1
      application/x-www-form-urlencoded     | lenient-2
      text/plain;charset=UTF-8              | lenient-3
      application/octet-stream              | lenient-4
      """)
  void aRawClientsDefaultContentTypeIsReadAsJson(String contentType, String id) throws Exception {
    assertEquals(
        201,
        post(
                "/ledger/reservations",
                "{\"id\":\"" + id + "\",\"lane\":\"free\",\"amountUsd\":0.01}",
                contentType)
            .status());
    assertEquals(
        200,
        post("/ledger/reservations/" + id + "/settle", "{\"actualUsd\":0.01}", contentType)
            .status());
    assertEquals("settled", get("/ledger/reservations/" + id).body().get("status").textValue());
  }

  @Test
  void jsonWithACharsetIsJsonAndAnEmptyBodyIsA400NotA415() throws Exception {
    assertEquals(
        201,
        post(
                "/ledger/reservations",
                "{\"id\":\"cs-1\",\"lane\":\"free\",\"amountUsd\":0.01}",
                "application/json; charset=utf-8")
            .status());
    Answer empty = post("/ledger/reservations", "", null);
    assertEquals(400, empty.status());
    assertEquals("body", empty.body().at("/error/field").textValue());
  }

  @Test
  void aBodyOverTheApisLimitIs413BeforeItIsBuffered() throws Exception {
    JsonNode before = get("/usage").body();
    String padded =
        "{\"id\":\"big-1\",\"lane\":\"free\",\"amountUsd\":0.01,\"pad\":\""
            + "x".repeat(64 * 1024)
            + "\"}";

    Answer big = post("/ledger/reservations", padded);

    assertEquals(413, big.status());
    assertEquals("request_too_large", big.body().at("/error/type").textValue());
    assertEquals("body", big.body().at("/error/field").textValue());
    assertGatewayError(big);
    assertEquals(before, get("/usage").body());
    assertEquals(404, get("/ledger/reservations/big-1").status());
  }

  @Test
  void aLedgerThatDoesNotAnswerIs503() throws Exception {
    TestProbe<GlobalBudget.Command> silent = TestProbe.create(system);
    LedgerClient client =
        new LedgerClient(
            silent.ref(), system.scheduler(), system.executionContext(), Duration.ofMillis(200));
    ServerBinding other =
        server.bind(new LedgerRoutes(client, LedgerApiServer.JSON, TOP, BODY_READ).route());
    try {
      Answer answer =
          server.send(
              HttpRequest.newBuilder(
                      URI.create(
                          "http://127.0.0.1:"
                              + other.localAddress().getPort()
                              + "/ledger/reservations/x-1"))
                  .GET()
                  .build());
      assertEquals(503, answer.status());
      assertEquals("ledger_unavailable", answer.body().at("/error/type").textValue());
    } finally {
      other.unbind().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  /** A ledger whose queue is full answers every reserve, settle and void busy at once. */
  private static org.apache.pekko.actor.typed.Behavior<GlobalBudget.Command> fullLedger() {
    return org.apache.pekko.actor.typed.javadsl.Behaviors.receiveMessage(
        command -> {
          if (command instanceof GlobalBudget.Reserve r) {
            r.replyTo().tell(new GlobalBudget.Busy(r.id(), 1));
          } else if (command instanceof GlobalBudget.Settle s) {
            s.replyTo().tell(new GlobalBudget.Busy(s.id(), 1));
          } else if (command instanceof GlobalBudget.VoidReservation v) {
            v.replyTo().tell(new GlobalBudget.Busy(v.id(), 1));
          }
          return org.apache.pekko.actor.typed.javadsl.Behaviors.same();
        });
  }

  @ParameterizedTest(
      name = "POST {0} to a ledger whose queue is full: 503 ledger_busy with retry-after, at once")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      /ledger/reservations            | {"id":"busy-1","lane":"free","amountUsd":0.10}
      /ledger/reservations/busy-1/settle | {"actualUsd":0.10}
      /ledger/reservations/busy-1/void   | {}
      """)
  void aLedgerWhoseQueueIsFullIs503LedgerBusyWithRetryAfter(String path, String body)
      throws Exception {
    var full =
        system.systemActorOf(
            fullLedger(),
            "full-ledger-" + Math.abs(path.hashCode()),
            org.apache.pekko.actor.typed.Props.empty());
    LedgerClient client =
        new LedgerClient(
            full, system.scheduler(), system.executionContext(), Duration.ofSeconds(5));
    ServerBinding other =
        server.bind(new LedgerRoutes(client, LedgerApiServer.JSON, TOP, BODY_READ).route());
    try {
      long started = System.nanoTime();
      Answer answer =
          server.send(
              HttpRequest.newBuilder(
                      URI.create("http://127.0.0.1:" + other.localAddress().getPort() + path))
                  .header("content-type", "application/json")
                  .POST(HttpRequest.BodyPublishers.ofString(body))
                  .build());
      assertEquals(503, answer.status(), answer.raw().body());
      assertEquals("ledger_busy", answer.body().at("/error/type").textValue());
      assertEquals("1", answer.raw().headers().firstValue("retry-after").orElse(null));
      assertGatewayError(answer);
      assertTrue(
          Duration.ofNanos(System.nanoTime() - started).compareTo(Duration.ofSeconds(5)) < 0);
    } finally {
      other.unbind().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }
  }

  // --- the API's bounds and the gateway's own reservations --------------------------------------

  private BigDecimal globalDailySpent() throws Exception {
    return get("/usage").body().get("caps").get(0).get("spentUsd").decimalValue();
  }

  /** One request must not stop all traffic: an empty hold settled at a fortune. */
  @Test
  void aZeroReservationSettledAtAFortuneIsRefusedAtBothSteps() throws Exception {
    BigDecimal spentBefore = globalDailySpent();
    Answer zero =
        post("/ledger/reservations", "{\"id\":\"dos-1\",\"lane\":\"free\",\"amountUsd\":0}");
    assertEquals(400, zero.status());
    assertEquals("amountUsd", zero.body().at("/error/field").textValue());
    assertEquals("amountUsd must be greater than 0", zero.body().at("/error/message").textValue());
    assertEquals(404, get("/ledger/reservations/dos-1").status());

    assertEquals(
        201,
        post("/ledger/reservations", "{\"id\":\"dos-2\",\"lane\":\"free\",\"amountUsd\":0.000001}")
            .status());
    Answer fortune = post("/ledger/reservations/dos-2/settle", "{\"actualUsd\":1000000}");
    assertEquals(400, fortune.status());
    assertEquals("invalid_request", fortune.body().at("/error/type").textValue());
    assertEquals("actualUsd", fortune.body().at("/error/field").textValue());
    assertTrue(
        fortune
            .body()
            .at("/error/message")
            .textValue()
            .contains("above the reserved amountUsd 0.000001"),
        fortune.raw().body());
    assertGatewayError(fortune);
    assertEquals("reserved", get("/ledger/reservations/dos-2").body().get("status").textValue());
    assertEquals(0, spentBefore.compareTo(globalDailySpent()));
  }

  @Test
  void aSettleUpToTheReservedAmountIsAcceptedAndOneAboveItChangesNothing() throws Exception {
    post("/ledger/reservations", "{\"id\":\"sb-1\",\"lane\":\"free\",\"amountUsd\":0.30}");
    assertEquals(
        400, post("/ledger/reservations/sb-1/settle", "{\"actualUsd\":0.300001}").status());
    assertEquals("reserved", get("/ledger/reservations/sb-1").body().get("status").textValue());

    Answer atReserve = post("/ledger/reservations/sb-1/settle", "{\"actualUsd\":0.30}");
    assertEquals(200, atReserve.status());
    assertUsd("0.30", atReserve.body().get("actualUsd"));
  }

  /**
   * A reservation the provider routes hold, made as they make it: through the gateway's own client.
   */
  private String gatewayReservation() throws Exception {
    String id = dev.spendgateway.ledger.Reservation.Owner.newGatewayId();
    var reply =
        server
            .ledger
            .reserve(
                new dev.spendgateway.ledger.ReserveRequest(
                    id, dev.spendgateway.policy.access.Lane.FREE, null, 300_000, 0, 0))
            .toCompletableFuture()
            .get(10, TimeUnit.SECONDS);
    assertEquals(new GlobalBudget.Reserved(id, 300_000), reply);
    return id;
  }

  private GlobalBudget.ReservationView view(String id) throws Exception {
    return (GlobalBudget.ReservationView)
        server.ledger.get(id).toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @ParameterizedTest(
      name =
          "{0} of a provider call''s reservation through the ledger API is 403 and it stays open")
  @CsvSource({"settle", "void"})
  void theProviderRoutesReservationsCannotBeClosedHere(String action) throws Exception {
    String id = gatewayReservation();
    BigDecimal spentBefore = globalDailySpent();

    Answer refused =
        action.equals("settle")
            ? post("/ledger/reservations/" + id + "/settle", "{\"actualUsd\":0}")
            : post("/ledger/reservations/" + id + "/void", "");

    assertEquals(403, refused.status());
    assertEquals("forbidden", refused.body().at("/error/type").textValue());
    assertEquals(
        "reservations made by the gateway's provider routes are settled and voided by the gateway only",
        refused.body().at("/error/message").textValue());
    assertFalse(refused.raw().body().contains(id));
    assertGatewayError(refused);
    assertEquals(GlobalBudget.ReservationView.class, view(id).getClass());
    assertEquals(dev.spendgateway.ledger.Reservation.Status.RESERVED, view(id).status());
    assertEquals(0, spentBefore.compareTo(globalDailySpent()));

    // The provider call that holds it settles it as usual, at what the provider billed.
    var closed = server.ledger.settle(id, 450_000).toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals(
        new GlobalBudget.Closed(id, dev.spendgateway.ledger.Reservation.Status.SETTLED, 450_000),
        closed);
  }

  @Test
  void anyIdOfTheGatewaysNamespaceIs403ToCloseAnd404ToReadWhetherItExistsOrNot() throws Exception {
    String held = gatewayReservation();
    String never = dev.spendgateway.ledger.Reservation.Owner.newGatewayId();

    Answer readHeld = get("/ledger/reservations/" + held);
    Answer readNever = get("/ledger/reservations/" + never);
    assertEquals(404, readHeld.status());
    assertEquals(readNever.status(), readHeld.status());
    assertEquals(readNever.body(), readHeld.body());
    assertFalse(readHeld.raw().body().contains(held));

    Answer settleNever = post("/ledger/reservations/" + never + "/settle", "{\"actualUsd\":0}");
    Answer settleHeld = post("/ledger/reservations/" + held + "/settle", "{\"actualUsd\":0}");
    assertEquals(403, settleNever.status());
    assertEquals(settleNever.body(), settleHeld.body());
  }

  @Test
  void theGatewayCannotCloseTheLedgerApisReservationsEither() throws Exception {
    post("/ledger/reservations", "{\"id\":\"own-1\",\"lane\":\"free\",\"amountUsd\":0.30}");
    var reply = server.ledger.settle("own-1", 0).toCompletableFuture().get(10, TimeUnit.SECONDS);
    assertEquals(GlobalBudget.Forbidden.class, reply.getClass());
    assertEquals("reserved", get("/ledger/reservations/own-1").body().get("status").textValue());
  }
}
