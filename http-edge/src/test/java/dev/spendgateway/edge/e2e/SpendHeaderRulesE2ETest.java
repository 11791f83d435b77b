package dev.spendgateway.edge.e2e;

import static dev.spendgateway.edge.e2e.E2eGateway.TOKEN;
import static dev.spendgateway.edge.testkit.TestGateway.ANTHROPIC;
import static dev.spendgateway.edge.testkit.TestGateway.CHAT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.testkit.TestGateway;
import dev.spendgateway.edge.testkit.TestGateway.Brand;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One spend-header reader and one id rule on every surface: the pass-through routes, the failover
 * router, the ledger API, {@code /usage} and the admin routes answer the same input the same way.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SpendHeaderRulesE2ETest {
  private static final String ROUTER = "/v1/chat/completions";
  private static final String TRAVERSAL = "a/../b";
  private static final String TRAVERSAL_IN_A_URL = "a%2F..%2Fb";

  /** The operator's credential: only it reaches the admin routes. */
  private static final String ADMIN_TOKEN = "spend-rules-operator-token";

  private TestGateway gw;

  @BeforeAll
  void start() throws Exception {
    gw = E2eGateway.start("spend-rules", java.util.Map.of("gateway.admin-token", ADMIN_TOKEN));
  }

  @AfterAll
  void stop() throws Exception {
    gw.close();
  }

  @BeforeEach
  void resetSimulator() {
    gw.sim.reset();
  }

  private static String bodyFor(String path) {
    return E2eGateway.smallChat(path);
  }

  static Stream<Arguments> headersSentTwice() {
    return Stream.of(
        Arguments.of(ROUTER, "x-spend-brand", "someone-else"),
        Arguments.of(ROUTER, "x-spend-brand-daily-usd", "999999"),
        Arguments.of(ROUTER, "x-spend-lane", "free"),
        Arguments.of(CHAT, "x-spend-brand-daily-usd", "999999"),
        Arguments.of(ANTHROPIC, "x-spend-brand", "someone-else"));
  }

  @ParameterizedTest(name = "{0}: {1} sent twice is a 400 naming it")
  @MethodSource("headersSentTwice")
  void aSpendHeaderSentTwiceIsRefusedOnEveryRoute(String path, String header, String second)
      throws Exception {
    Brand brand = new Brand("b-twice", "5", "50");
    HttpResponse<String> r =
        gw.send(gw.postJson(path, bodyFor(path), brand).header(header, second).build());

    assertEquals(400, r.statusCode(), r.body());
    assertTrue(r.body().contains(header + " was sent 2 times"), r.body());
    assertTrue(gw.sim.received().isEmpty(), "nothing reached a provider");
  }

  /**
   * One request per surface that names the brand {@code a/../b}, and the field its 400 must name.
   */
  static Stream<Arguments> traversalBrand() {
    return Stream.of(
        Arguments.of("Anthropic pass-through", "provider", ANTHROPIC, "x-spend-brand"),
        Arguments.of("OpenAI pass-through", "provider", CHAT, "x-spend-brand"),
        Arguments.of("failover router", "provider", ROUTER, "x-spend-brand"),
        Arguments.of("ledger reservation", "ledger", "/ledger/reservations", "brand"),
        Arguments.of("usage query", "usage", "/usage?brand=" + TRAVERSAL_IN_A_URL, "brand"),
        Arguments.of(
            "admin credit", "admin", "/admin/brands/" + TRAVERSAL_IN_A_URL + "/credit", "brand"));
  }

  @ParameterizedTest(name = "{0} refuses brand a/../b naming {3}")
  @MethodSource("traversalBrand")
  void oneIdRuleEverywhere(String surface, String kind, String path, String field)
      throws Exception {
    HttpRequest request =
        switch (kind) {
          case "provider" ->
              gw.postJson(path, bodyFor(path), new Brand(TRAVERSAL, "5", "50")).build();
          case "ledger" ->
              gw.postJson(
                      path,
                      "{\"id\":\"r-traversal\",\"lane\":\"app\",\"brand\":\""
                          + TRAVERSAL
                          + "\",\"amountUsd\":0.10,\"brandDailyUsd\":5,\"brandMonthlyUsd\":50}",
                      Brand.fresh("unused"))
                  .build();
          case "usage" -> gw.get(path).header("authorization", "Bearer " + TOKEN).build();
          default ->
              gw.get(path)
                  .header("authorization", "Bearer " + ADMIN_TOKEN)
                  .header("content-type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"adjustmentId\":\"adj-traversal\",\"usd\":1,\"operator\":\"ops\",\"reason\":\"probe\"}"))
                  .build();
        };
    HttpResponse<String> r = gw.send(request);

    assertEquals(400, r.statusCode(), surface + ": " + r.body());
    assertTrue(r.body().contains(field), surface + " names " + field + ": " + r.body());
    assertTrue(r.body().contains("[A-Za-z0-9._:-]"), surface + " states the one rule: " + r.body());
    assertTrue(gw.sim.received().isEmpty(), "nothing reached a provider");
  }

  /**
   * One amount rule for a cap on a header and in a ledger body: the same value gets the same
   * verdict and the same reason on both. Zeros past the sixth decimal are exact (were refused on
   * the header, accepted in the body); a value that is not exact, negative or too large was "is
   * required" on the header.
   */
  @ParameterizedTest(name = "daily cap {0}: {1}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      5.000000000 | accepted
      5.0000010   | accepted
      5.0000001   | must have at most 6 decimals
      -1          | must not be negative
      1000000.5   | must be at most 1000000
      """)
  void aCapGetsTheSameVerdictOnAHeaderAndInTheLedgerApi(String dailyUsd, String verdict)
      throws Exception {
    boolean accepted = verdict.equals("accepted");
    Brand brand = Brand.fresh("cap-rule").withDaily(dailyUsd);

    HttpResponse<String> header = gw.send(gw.postJson(CHAT, bodyFor(CHAT), brand).build());
    HttpResponse<String> ledger =
        gw.send(
            gw.postJson(
                    "/ledger/reservations",
                    "{\"id\":\"r-"
                        + brand.id()
                        + "\",\"lane\":\"app\",\"brand\":\""
                        + brand.id()
                        + "\",\"amountUsd\":0.10,\"brandDailyUsd\":"
                        + dailyUsd
                        + ",\"brandMonthlyUsd\":50}",
                    brand)
                .build());

    if (accepted) {
      assertEquals(200, header.statusCode(), header.body());
      assertEquals(201, ledger.statusCode(), ledger.body());
    } else {
      assertEquals(400, header.statusCode(), header.body());
      assertTrue(
          header.body().contains("x-spend-brand-daily-usd is malformed: it " + verdict),
          header.body());
      assertEquals(400, ledger.statusCode(), ledger.body());
      assertTrue(ledger.body().contains("brandDailyUsd " + verdict), ledger.body());
      assertTrue(gw.sim.received().isEmpty(), "nothing reached a provider");
    }
  }

  /**
   * A malformed spend header is a caller bug even on a lane that does not read it: 400 naming it on
   * every route, nothing sent. (It was ignored: the call went through.)
   */
  @ParameterizedTest(name = "{0} on the free lane with {1}: {2} is a 400")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
      /openai/v1/chat/completions | x-spend-brand-daily-usd   | banana
      /anthropic/v1/messages      | x-spend-brand-monthly-usd | -5
      /v1/chat/completions        | x-spend-brand-daily-usd   | 5.0000001
      /v1/chat/completions        | x-spend-brand             | a/../b
      """)
  void aMalformedHeaderIsRefusedOnALaneThatDoesNotUseIt(String path, String header, String value)
      throws Exception {
    HttpResponse<String> r =
        gw.send(
            gw.postJson(path, bodyFor(path), Brand.fresh("unused"))
                .setHeader("x-spend-lane", "free")
                .setHeader(header, value)
                .build());

    assertEquals(400, r.statusCode(), r.body());
    assertTrue(r.body().contains(header), r.body());
    assertTrue(r.body().contains("the free lane does not use it"), r.body());
    assertTrue(gw.sim.received().isEmpty(), "nothing reached a provider");
  }
}
