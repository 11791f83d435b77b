package dev.spendgateway.loadtest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.math.BigDecimal;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class BookCheckTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static List<BookCheck.CapRow> rows(String caps) throws Exception {
    return BookCheck.parse(JSON.readTree("{\"caps\":[" + caps + "],\"openReservations\":0}"));
  }

  private static String row(
      String cap, String subject, String window, String limit, String spent, String reserved) {
    return "{\"cap\":\"%s\",\"subject\":%s,\"window\":\"%s\",\"limitUsd\":%s,\"spentUsd\":%s,\"reservedUsd\":%s,\"remainingUsd\":0}"
        .formatted(
            cap, subject == null ? "null" : "\"" + subject + "\"", window, limit, spent, reserved);
  }

  private static final String GLOBALS =
      row("global_daily", null, "2026-11-30", "40", "1.25", "0.5")
          + ","
          + row("global_monthly", null, "2026-11", "600", "10", "0.5")
          + ","
          + row("free_daily", null, "2026-11-30", "3", "0", "0")
          + ","
          + row("trial_daily", null, "2026-11-30", "25", "0", "0");

  @ParameterizedTest(name = "spent {0} + reserved {1} against limit {2}: overshoot {3}, ok={4}")
  @CsvSource({
    "1.25,      0.5,       40, 0,         true", // within the cap
    "39.5,      0.5,       40, 0,         true", // exactly at the cap is fine
    "39.5,      0.500001,  40, 0.000001,  false", // one micro-dollar over is a violation
    "40,        2,         40, 2,         false", // reserved past the limit
    "0.1,       0.2,       0.3, 0,        true", // decimal exactness: 0.1 + 0.2 == 0.3
  })
  void aCapIsAViolationOnlyWhenSpentPlusReservedExceedsItsLimit(
      String spent, String reserved, String limit, String overshoot, boolean ok) throws Exception {
    BookCheck.Result r =
        BookCheck.check(
            rows(row("brand_daily", "acme", "2026-11-30", limit, spent, reserved)),
            Optional.empty(),
            0);
    assertEquals(0, new BigDecimal(overshoot).compareTo(r.overshootUsd()));
    assertEquals(ok, r.ok());
  }

  @ParameterizedTest(name = "expected {0} accepted, got {1}: ok={2}")
  @CsvSource({
    "500, 500, true",
    "500, 499, false",
    "500, 501, false",
  })
  void theAcceptedCountMustMatchExactly(long expected, long accepted, boolean ok) throws Exception {
    BookCheck.Result r = BookCheck.check(rows(GLOBALS), Optional.of(expected), accepted);
    assertEquals(ok, r.ok());
  }

  @ParameterizedTest(name = "headroom {0} / amount {1} with {2} attempts: {3} fit")
  @CsvSource({
    "5,        0.01,      1000,     500", // floor(5 / 0.01)
    "5,        0.03,      1000,     166", // floor, not round: 166.67 -> 166
    "5,        0.01,       100,     100", // never more than were attempted
    "0.9,      0.000001, 1000000, 900000",
    "0,        0.01,        10,       0",
  })
  void expectedAcceptedIsFloorOfHeadroomOverAmount(
      String headroom, String amount, long attempted, long expected) {
    assertEquals(
        expected,
        BookCheck.expectedAccepted(new BigDecimal(headroom), new BigDecimal(amount), attempted));
  }

  @Test
  void appHeadroomIsTheTightestOfGlobalAndBrandCapsAndAFreshBrandHasItsWholeCap() throws Exception {
    var lane =
        new BookCheck.Lane(
            "app", "fresh", new BigDecimal("5"), new BigDecimal("50"), new BigDecimal("0.60"));
    // global daily: 40 - 1.25 - 0.5 = 38.25; brand daily (no row yet): 5
    assertEquals(
        0, new BigDecimal("5").compareTo(BookCheck.headroom(rows(GLOBALS), lane).orElseThrow()));
  }

  @Test
  void anExistingBrandRowCountsWhatItAlreadyHolds() throws Exception {
    var lane =
        new BookCheck.Lane(
            "app", "acme", new BigDecimal("5"), new BigDecimal("50"), new BigDecimal("0.60"));
    var usage =
        rows(
            GLOBALS
                + ","
                + row("brand_daily", "acme", "2026-11-30", "5", "1", "0.3")
                + ","
                + row("brand_monthly", "acme", "2026-11", "50", "1", "0.3"));
    assertEquals(0, new BigDecimal("3.7").compareTo(BookCheck.headroom(usage, lane).orElseThrow()));
  }

  @Test
  void theLatestWindowOfACapIsTheOneThatCounts() throws Exception {
    var lane = new BookCheck.Lane("free", null, null, null, null);
    var usage =
        rows(
            GLOBALS.replace(
                row("free_daily", null, "2026-11-30", "3", "0", "0"),
                row("free_daily", null, "2026-11-29", "3", "2.9", "0")
                    + ","
                    + row("free_daily", null, "2026-11-30", "3", "1", "0")));
    assertEquals(0, new BigDecimal("2").compareTo(BookCheck.headroom(usage, lane).orElseThrow()));
  }

  @Test
  void trialHeadroomIncludesThePreviewLifetimeCap() throws Exception {
    var lane = new BookCheck.Lane("trial", "p1", null, null, new BigDecimal("0.60"));
    assertEquals(
        0, new BigDecimal("0.60").compareTo(BookCheck.headroom(rows(GLOBALS), lane).orElseThrow()));
  }

  @Test
  void headroomIsUnknownWhenAGlobalCapIsMissing() throws Exception {
    var lane = new BookCheck.Lane("free", null, null, null, null);
    assertFalse(
        BookCheck.headroom(rows(row("free_daily", null, "2026-11-30", "3", "0", "0")), lane)
            .isPresent());
  }

  @Test
  void overshootOnSeveralCapsIsSummedAndEachNamed() throws Exception {
    BookCheck.Result r =
        BookCheck.check(
            rows(
                row("global_daily", null, "2026-11-30", "40", "40", "1")
                    + ","
                    + row("brand_daily", "acme", "2026-11-30", "5", "5.5", "0")),
            Optional.of(10L),
            9);
    assertEquals(0, new BigDecimal("1.5").compareTo(r.overshootUsd()));
    assertEquals(3, r.violations().size());
    assertTrue(r.violations().get(1).contains("brand_daily(acme)"));
  }
}
