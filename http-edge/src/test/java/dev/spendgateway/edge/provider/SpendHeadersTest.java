package dev.spendgateway.edge.provider;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.edge.provider.SpendHeaders.Priority;
import dev.spendgateway.edge.provider.SpendHeaders.SpendContext;
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
    "x-request-id"
  })
  void aSpendHeaderSentTwiceIsRefused(String twice) {
    Map<String, java.util.List<String>> headers =
        Map.of(
            "x-spend-lane", java.util.List.of("app"),
            "x-spend-brand", java.util.List.of("b1"),
            "x-spend-brand-daily-usd", java.util.List.of("5"),
            "x-spend-brand-monthly-usd", java.util.List.of("50"),
            "x-request-id", java.util.List.of("r1"));
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
