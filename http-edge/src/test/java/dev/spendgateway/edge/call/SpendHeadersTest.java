package dev.spendgateway.edge.call;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.call.SpendHeaders.Priority;
import dev.spendgateway.edge.call.SpendHeaders.SpendContext;
import dev.spendgateway.policy.access.Lane;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SpendHeadersTest {

  /** Headers as "name=value;name=value"; an empty cell means no headers. */
  private static SpendHeaders.Result read(String headers) {
    Map<String, String> map = new HashMap<>();
    if (headers != null) {
      for (String pair : headers.split(";")) {
        String[] kv = pair.split("=", 2);
        map.put(kv[0], kv[1]);
      }
    }
    return SpendHeaders.readAll(
        name -> Optional.ofNullable(map.get(name)).map(List::of).orElse(List.of()));
  }

  @ParameterizedTest(name = "{0} is refused naming {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "                                                                | x-spend-lane",
        "x-spend-lane=paid                                               | x-spend-lane",
        "x-spend-lane=app                                                | x-spend-brand",
        "x-spend-lane=trial                                              | x-spend-brand",
        "x-spend-lane=app;x-spend-brand=b 1                              | x-spend-brand",
        "x-spend-lane=app;x-spend-brand=a/../b                           | x-spend-brand",
        "x-spend-lane=trial;x-spend-brand=a/../b                         | x-spend-brand",
        "x-spend-lane=app;x-spend-brand=ops@acme                         | x-spend-brand",
        "x-spend-lane=app;x-spend-brand=a+b                              | x-spend-brand",
        "x-spend-lane=app;x-spend-brand=b1                               | x-spend-brand-monthly-usd",
        "x-spend-lane=app;x-spend-brand=b1;x-spend-brand-monthly-usd=-1  | x-spend-brand-monthly-usd",
        "x-spend-lane=app;x-spend-brand=b1;x-spend-brand-monthly-usd=NaN | x-spend-brand-monthly-usd",
        "x-spend-lane=app;x-spend-brand=b1;x-spend-brand-monthly-usd=1e9 | x-spend-brand-monthly-usd",
        "x-spend-lane=app;x-spend-brand=b1;x-spend-brand-monthly-usd=50  | x-spend-brand-daily-usd",
        "x-spend-lane=app;x-spend-brand=b1;x-spend-brand-monthly-usd=50;x-spend-brand-daily-usd=0.0000001 | x-spend-brand-daily-usd",
        "x-spend-lane=free;x-priority=urgent                             | x-priority",
        "x-spend-lane=free;x-request-id=has space                        | x-request-id",
        "x-spend-lane=free;x-conversation-id=                            | x-conversation-id",
      })
  void malformedOrMissingHeadersAreNamed(String headers, String header) {
    SpendHeaders.Result result = read(headers);
    assertTrue(result.context().isEmpty());
    assertEquals(header, result.violation().orElseThrow().header());
  }

  /**
   * A present but malformed header is a caller bug on every lane: 400 naming it, saying it is
   * malformed and what to send — never "is required", never silently ignored because the lane does
   * not read it.
   */
  @ParameterizedTest(name = "{0} is refused naming {1}: ''{2}''")
  @CsvSource(
      delimiter = '|',
      value = {
        "x-spend-lane=free;x-spend-brand-daily-usd=banana                                        | x-spend-brand-daily-usd   | x-spend-brand-daily-usd is malformed: it must be a number of US dollars; send a dollar amount from 0 to 1000000 with at most 6 decimals, e.g. 5 or 12.50 (or leave it out: the free lane does not use it)",
        "x-spend-lane=free;x-spend-brand-monthly-usd=-1                                          | x-spend-brand-monthly-usd | x-spend-brand-monthly-usd is malformed: it must not be negative",
        "x-spend-lane=trial;x-spend-brand=p1;x-spend-brand-daily-usd=5.0000001                   | x-spend-brand-daily-usd   | (or leave it out: the trial lane does not use it)",
        "x-spend-lane=free;x-spend-brand=a/../b                                                  | x-spend-brand             | x-spend-brand must be 1-128 characters of [A-Za-z0-9._:-] (or leave it out: the free lane does not use it)",
        "x-spend-lane=app;x-spend-brand=b1;x-spend-brand-monthly-usd=banana                      | x-spend-brand-monthly-usd | x-spend-brand-monthly-usd is malformed: it must be a number of US dollars; send a dollar amount from 0 to 1000000 with at most 6 decimals, e.g. 5 or 12.50",
        "x-spend-lane=app;x-spend-brand=b1;x-spend-brand-monthly-usd=1e9                         | x-spend-brand-monthly-usd | x-spend-brand-monthly-usd is malformed: it must be at most 1000000",
        "x-spend-lane=app;x-spend-brand=b1;x-spend-brand-monthly-usd=50;x-spend-brand-daily-usd=0.0000001 | x-spend-brand-daily-usd | x-spend-brand-daily-usd is malformed: it must have at most 6 decimals",
      })
  void aMalformedHeaderIsRefusedAsMalformedOnEveryLane(
      String headers, String header, String messageContains) {
    SpendHeaders.HeaderViolation v = read(headers).violation().orElseThrow();
    assertEquals(header, v.header());
    assertTrue(v.message().contains(messageContains), v.message());
  }

  /** Caps are exact in micro-dollars by value: zeros past the sixth decimal change nothing. */
  @ParameterizedTest(name = "daily {0}, monthly {1} read as {2} and {3} micros")
  @CsvSource({
    "5.000000000, 50,                5000000, 50000000",
    "0.0000010,   50.0000000000,     1,       50000000",
    "5.2500000,   1000000.000000000, 5250000, 1000000000000"
  })
  void capsWithZerosPastTheSixthDecimalAreAccepted(
      String daily, String monthly, long dailyMicros, long monthlyMicros) {
    SpendHeaders.Result result =
        read(
            "x-spend-lane=app;x-spend-brand=b1;x-spend-brand-monthly-usd="
                + monthly
                + ";x-spend-brand-daily-usd="
                + daily);
    SpendContext c = result.context().orElseThrow(() -> new AssertionError(result.violation()));
    assertEquals(dailyMicros, c.brandDailyMicros());
    assertEquals(monthlyMicros, c.brandMonthlyMicros());
  }

  /**
   * A well-formed header the lane does not read stays ignored (a caller may send one set of headers
   * on every lane); a missing cap on the app lane still says it is required.
   */
  @ParameterizedTest(name = "{0}: {1}")
  @CsvSource(
      delimiter = '|',
      value = {
        "x-spend-lane=free;x-spend-brand=b1;x-spend-brand-daily-usd=5;x-spend-brand-monthly-usd=50 | accepted",
        "x-spend-lane=trial;x-spend-brand=p1;x-spend-brand-daily-usd=5.000000000                   | accepted",
        "x-spend-lane=app;x-spend-brand=b1;x-spend-brand-monthly-usd=50                            | x-spend-brand-daily-usd is required on the app lane: a dollar amount from 0 to 1000000 with at most 6 decimals, e.g. 5 or 12.50",
      })
  void wellFormedUnusedHeadersAreIgnoredAndMissingCapsAreRequired(String headers, String outcome) {
    SpendHeaders.Result result = read(headers);
    if (outcome.equals("accepted")) {
      SpendContext c = result.context().orElseThrow(() -> new AssertionError(result.violation()));
      assertEquals(0, c.brandDailyMicros());
      assertEquals(0, c.brandMonthlyMicros());
      assertEquals(c.lane() == Lane.TRIAL ? "p1" : null, c.subject());
    } else {
      assertEquals(outcome, result.violation().orElseThrow().message());
    }
  }

  @Test
  void appLaneCarriesTheBrandCapsAsMicros() {
    SpendContext c =
        read("x-spend-lane=app;x-spend-brand=b1;x-spend-brand-monthly-usd=50;x-spend-brand-daily-usd=5.25;x-request-id=req-1;x-priority=batch")
            .context()
            .orElseThrow();
    assertEquals(Lane.APP, c.lane());
    assertEquals("b1", c.subject());
    assertEquals(50_000_000L, c.brandMonthlyMicros());
    assertEquals(5_250_000L, c.brandDailyMicros());
    assertEquals("req-1", c.requestId());
    assertEquals(Priority.BATCH, c.priority());
  }

  @ParameterizedTest(name = "{0} sent twice is refused, not resolved by picking one")
  @CsvSource({
    "x-spend-lane",
    "x-spend-brand",
    "x-spend-brand-daily-usd",
    "x-spend-brand-monthly-usd",
    "x-request-id",
    "x-spend-tag"
  })
  void aSpendHeaderSentTwiceIsRefused(String twice) {
    Map<String, java.util.List<String>> headers =
        Map.of(
            "x-spend-lane", java.util.List.of("app"),
            "x-spend-brand", java.util.List.of("b1"),
            "x-spend-brand-daily-usd", java.util.List.of("5"),
            "x-spend-brand-monthly-usd", java.util.List.of("50"),
            "x-request-id", java.util.List.of("r1"),
            "x-spend-tag", java.util.List.of("onboarding"));
    Map<String, java.util.List<String>> withTwice = new HashMap<>(headers);
    withTwice.put(twice, java.util.List.of(headers.get(twice).get(0), "other"));
    SpendHeaders.Result result =
        SpendHeaders.readAll(name -> withTwice.getOrDefault(name, java.util.List.of()));
    assertEquals(twice, result.violation().orElseThrow().header());
    assertTrue(
        SpendHeaders.readAll(name -> headers.getOrDefault(name, java.util.List.of()))
            .context()
            .isPresent());
  }

  /** The brand is a ledger key: the rule the ledger API, /usage and admin apply, no wider. */
  @ParameterizedTest(name = "brand ''{0}'' accepted={1}")
  @CsvSource({
    "b1, true",
    "acme.eu:shop_2-b, true",
    "a/../b, false",
    "ops@acme, false",
    "a+b, false",
    "a=b, false"
  })
  void theBrandFollowsTheLedgerIdRule(String brand, boolean accepted) {
    SpendHeaders.Result result =
        read(
            "x-spend-lane=app;x-spend-brand="
                + brand
                + ";x-spend-brand-monthly-usd=50;x-spend-brand-daily-usd=5");
    assertEquals(accepted, result.context().isPresent(), result.violation().toString());
    assertEquals(accepted, dev.spendgateway.policy.access.LedgerId.isValid(brand));
  }

  /** The workflow tag: optional, and when sent it must obey the tag rule on every lane. */
  @ParameterizedTest(name = "x-spend-tag ''{0}'' on {1}: {2}")
  @CsvSource(
      delimiter = '|',
      value = {
        "onboarding             | free  | onboarding",
        "support.triage_v2-eu   | free  | support.triage_v2-eu",
        "t                      | trial | t",
        "NONE                   | free  | absent",
        "a,b                    | free  | refused",
        "a b                    | free  | refused",
        "a:b                    | free  | refused",
        "a/b                    | trial | refused",
        "EMPTY                  | free  | refused",
        "LONG                   | free  | refused",
      })
  void theWorkflowTagIsOptionalAndRefusedWhenMalformed(String tag, String lane, String outcome) {
    String value =
        switch (tag) {
          case "EMPTY" -> "";
          case "LONG" -> "t".repeat(65);
          default -> tag;
        };
    String headers =
        "x-spend-lane="
            + lane
            + (lane.equals("trial") ? ";x-spend-brand=p1" : "")
            + (tag.equals("NONE") ? "" : ";x-spend-tag=" + value);
    SpendHeaders.Result result = read(headers);
    switch (outcome) {
      case "refused" -> {
        assertTrue(result.context().isEmpty());
        assertEquals("x-spend-tag", result.violation().orElseThrow().header());
        assertTrue(result.violation().get().message().contains("[A-Za-z0-9._-]"));
      }
      case "absent" -> assertEquals(Optional.empty(), result.context().orElseThrow().tag());
      default -> {
        SpendContext c = result.context().orElseThrow();
        assertEquals(Optional.of(outcome), c.tag());
        assertEquals(outcome, c.reserve("r-1", 1).tag());
      }
    }
  }

  /**
   * Correlation ids are never booked or put in a URL: ids minted elsewhere (base64, paths) pass.
   */
  @ParameterizedTest(name = "{0}={1} accepted")
  @CsvSource({"x-request-id, trace/ab+c=", "x-conversation-id, user@host/conv-1"})
  void correlationIdsKeepTheirWiderRule(String header, String value) {
    assertTrue(read("x-spend-lane=free;" + header + "=" + value).context().isPresent());
  }

  @Test
  void freeLaneNeedsNoSubjectAndGetsARequestId() {
    SpendContext c = read("x-spend-lane=free").context().orElseThrow();
    assertEquals(Lane.FREE, c.lane());
    assertEquals(null, c.subject());
    assertEquals(Priority.INTERACTIVE, c.priority());
    assertTrue(c.requestId().length() > 10);
  }

  @Test
  void trialLaneUsesThePreviewIdAsSubject() {
    SpendContext c = read("x-spend-lane=trial;x-spend-brand=preview-7").context().orElseThrow();
    assertEquals("preview-7", c.subject());
  }
}
