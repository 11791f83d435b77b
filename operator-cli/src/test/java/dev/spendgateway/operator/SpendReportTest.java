package dev.spendgateway.operator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.AdjustmentScope;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.ReservationExpired;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerEvents.ReservationRefused;
import dev.spendgateway.ledger.LedgerEvents.ReservationSettled;
import dev.spendgateway.ledger.LedgerEvents.ReservationVoided;
import dev.spendgateway.ledger.LedgerEvents.SpendAdjusted;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapName;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SpendReportTest {
  private static final ZoneId ISTANBUL = ZoneId.of("Europe/Istanbul");
  private static final LocalDate DEC_1 = LocalDate.parse("2026-12-01");
  private static final LocalDate DEC_31 = LocalDate.parse("2026-12-31");

  private static ReservationMade made(String id, String brand, long micros, String at) {
    Instant t = Instant.parse(at);
    return new ReservationMade(
        id, Lane.APP, brand, micros, 5_000_000, 50_000_000, t, t.plusSeconds(900));
  }

  private static ReservationSettled settled(ReservationMade m, long actual) {
    return new ReservationSettled(
        m.id(), m.lane(), m.subject(), m.at(), m.amountMicros(), actual, m.at().plusSeconds(5));
  }

  /** A small journal: two brands over two Istanbul days, every kind of close. */
  private static List<Event> journal() {
    List<Event> events = new ArrayList<>();
    ReservationMade a1 = made("a1", "acme", 300_000, "2026-12-04T22:00:00Z"); // Istanbul 12-05
    ReservationMade a2 = made("a2", "acme", 200_000, "2026-12-05T10:00:00Z");
    ReservationMade b1 = made("b1", "beta", 100_000, "2026-12-05T10:00:01Z");
    ReservationMade b2 = made("b2", "beta", 400_000, "2026-12-05T21:30:00Z"); // Istanbul 12-06
    ReservationMade old = made("old", "acme", 999_999, "2026-11-30T20:00:00Z"); // Istanbul 11-30
    events.addAll(List.of(old, a1, a2, b1, b2));
    events.add(settled(a1, 123_456));
    events.add(
        new ReservationVoided("a2", Lane.APP, "acme", a2.at(), 200_000, a2.at().plusSeconds(1)));
    events.add(settled(b1, 1));
    events.add(
        new ReservationExpired("b2", Lane.APP, "beta", b2.at(), 400_000, b2.at().plusSeconds(900)));
    events.add(settled(old, 999_999)); // a November reservation closed in December: November's
    events.add(
        new ReservationRefused(
            "r1",
            Lane.APP,
            "acme",
            9_000_000,
            5_000_000,
            50_000_000,
            CapName.BRAND_DAILY,
            "acme",
            "2026-12-05",
            5_000_000,
            4_000_000,
            Instant.parse("2026-12-05T11:00:00Z"),
            null));
    events.add(
        new SpendAdjusted(
            "adj-1",
            "alice",
            "provider refund",
            Lane.APP,
            "acme",
            -23_456,
            Instant.parse("2026-12-06T08:00:00Z"),
            "2026-12-05",
            AdjustmentScope.REFUND));
    events.add(
        new SpendAdjusted(
            "adj-2",
            "alice",
            "goodwill room",
            Lane.APP,
            "beta",
            -50_000,
            Instant.parse("2026-12-06T08:00:00Z"),
            "2026-12-06",
            AdjustmentScope.GRANT));
    return events;
  }

  private static SpendReport report(String by, LocalDate from, LocalDate to) {
    List<SpendReport.Key> keys = new ArrayList<>();
    for (String k : by.split(",")) {
      keys.add(SpendReport.Key.parse(k));
    }
    SpendReport report = new SpendReport(keys, ISTANBUL, from, to);
    journal().forEach(report::add);
    return report;
  }

  @Test
  void csvHasTheKeysThenTheColumnsAndOneRowPerGroupInTheZonesDays() {
    assertEquals(
        String.join(
            "\n",
            "day,brand,calls,settled_usd,voided,expired_usd,refused",
            // a1 settled at 0.123456, less the 0.023456 refund; a2 voided; r1 refused
            "2026-12-05,acme,2,0.100000,1,0.000000,1",
            "2026-12-05,beta,1,0.000001,0,0.000000,0",
            // reserved at 21:30Z, already the 6th in Istanbul; expired at its worst case
            "2026-12-06,beta,1,0.000000,0,0.400000,0",
            ""),
        report("day,brand", DEC_1, DEC_31).csv());
  }

  @ParameterizedTest(name = "--by {0} from {1} to {2}: total calls {3}, spent {4}")
  @CsvSource({
    // every grouping of the same period adds up to the same total
    "day,       2026-12-01, 2026-12-31, 4, 0.500001",
    "brand,     2026-12-01, 2026-12-31, 4, 0.500001",
    "'month,lane', 2026-12-01, 2026-12-31, 4, 0.500001",
    "tag,       2026-12-01, 2026-12-31, 4, 0.500001",
    "'day,brand,model,provider,tag', 2026-12-01, 2026-12-31, 4, 0.500001",
    // one day: the 6th has only b2
    "day,       2026-12-06, 2026-12-06, 1, 0.400000",
    // November: the reservation of the 30th, closed in December, counts in November
    "month,     2026-11-01, 2026-11-30, 1, 0.999999",
  })
  void everyGroupingAddsUpToTheSameTotal(
      String by, LocalDate from, LocalDate to, long calls, String spentUsd) {
    SpendReport.Totals total = report(by, from, to).total();
    assertEquals(calls, total.calls);
    assertEquals(spentUsd, SpendReport.usd(total.settledMicros + total.expiredMicros));
  }

  @Test
  void jsonNamesThePeriodZoneAndGroups() {
    String json =
        report("brand", LocalDate.parse("2026-12-06"), LocalDate.parse("2026-12-06")).json();
    assertEquals(
        "{\"zone\":\"Europe/Istanbul\",\"from\":\"2026-12-06\",\"to\":\"2026-12-06\","
            + "\"by\":[\"brand\"],\"groups\":[{\"brand\":\"beta\",\"calls\":1,\"settled_usd\":0.000000,"
            + "\"voided\":0,\"expired_usd\":0.400000,\"refused\":0}],\"total\":{\"calls\":1,"
            + "\"settled_usd\":0.000000,\"voided\":0,\"expired_usd\":0.400000,\"refused\":0}}",
        json);
  }

  @Test
  void aBrandWithACommaIsQuotedInCsv() {
    SpendReport report = new SpendReport(List.of(SpendReport.Key.BRAND), ISTANBUL, DEC_1, DEC_31);
    report.add(made("x", "a,\"b\"", 1, "2026-12-05T10:00:00Z"));
    assertEquals(
        "brand,calls,settled_usd,voided,expired_usd,refused\n\"a,\"\"b\"\"\",1,0.000000,0,0.000000,0\n",
        report.csv());
  }

  private static ReservationMade labelled(
      String id, String tag, String model, String provider, String at) {
    Instant t = Instant.parse(at);
    return new ReservationMade(
        id,
        Lane.FREE,
        null,
        100_000,
        0,
        0,
        t,
        t.plusSeconds(900),
        dev.spendgateway.ledger.Reservation.Owner.GATEWAY,
        tag,
        model,
        provider);
  }

  private static ReservationMade tagged(String id, String tag, String at) {
    return labelled(id, tag, null, null, at);
  }

  private static ReservationRefused refusedFree(
      String id, String tag, String model, String provider) {
    return new ReservationRefused(
        id,
        Lane.FREE,
        null,
        9_000_000,
        0,
        0,
        CapName.FREE_DAILY,
        null,
        "2026-12-05",
        3_000_000,
        2_000_000,
        Instant.parse("2026-12-05T11:00:00Z"),
        null,
        tag,
        model,
        provider);
  }

  @Test
  void byTagGroupsTheJournaledTagsAndTheUntaggedAsTheirOwnRow() {
    SpendReport report =
        new SpendReport(List.of(SpendReport.Key.TAG), ZoneId.of("UTC"), DEC_1, DEC_31);
    ReservationMade a = tagged("t1", "onboarding", "2026-12-05T10:00:00Z");
    ReservationMade b = tagged("t2", "support", "2026-12-05T10:00:01Z");
    ReservationMade c = tagged("t3", null, "2026-12-05T10:00:02Z");
    List.of(a, b, c).forEach(report::add);
    report.add(settled(a, 70_000));
    report.add(settled(b, 20_000));
    report.add(settled(c, 3));
    report.add(refusedFree("t4", "onboarding", null, null));
    assertEquals(
        String.join(
            "\n",
            "tag,calls,settled_usd,voided,expired_usd,refused",
            ",1,0.000003,0,0.000000,0",
            "onboarding,1,0.070000,0,0.000000,1",
            "support,1,0.020000,0,0.000000,0",
            ""),
        report.csv());
  }

  @Test
  void byModelAndProviderGroupsTheJournaledOnesAndOlderReservationsAsAnEmptyRow() {
    SpendReport report =
        new SpendReport(
            List.of(SpendReport.Key.MODEL, SpendReport.Key.PROVIDER),
            ZoneId.of("UTC"),
            DEC_1,
            DEC_31);
    ReservationMade sol = labelled("m1", null, "gpt-6.1-sol", "openai", "2026-12-05T10:00:00Z");
    // The router fell back: the fallback attempt's reservation names the fallback's model.
    ReservationMade haiku =
        labelled("m2", null, "claude-haiku-5-5", "anthropic", "2026-12-05T10:00:01Z");
    ReservationMade sol2 = labelled("m3", "ops", "gpt-6.1-sol", "openai", "2026-12-05T10:00:02Z");
    // Written before models and providers were journaled.
    ReservationMade older = made("m4", "acme", 400_000, "2026-12-05T10:00:03Z");
    List.of(sol, haiku, sol2, older).forEach(report::add);
    report.add(settled(sol, 70_000));
    report.add(
        new ReservationVoided(
            "m2", Lane.FREE, null, haiku.at(), 100_000, haiku.at().plusSeconds(1)));
    report.add(settled(sol2, 30_001));
    report.add(settled(older, 5));
    report.add(refusedFree("m5", null, "claude-haiku-5-5", "anthropic"));
    assertEquals(
        String.join(
            "\n",
            "model,provider,calls,settled_usd,voided,expired_usd,refused",
            ",,1,0.000005,0,0.000000,0",
            "claude-haiku-5-5,anthropic,1,0.000000,1,0.000000,1",
            "gpt-6.1-sol,openai,2,0.100001,0,0.000000,0",
            ""),
        report.csv());
  }

  /**
   * The ledger counted in UTC until the 2nd ended, then in Istanbul: a reservation at 22:30Z on the
   * 2nd is the 2nd's (UTC still), one at 22:30Z on the 3rd is already the 4th's in Istanbul.
   */
  @Test
  void withoutAZoneEachDayIsTheOneTheJournalsZoneHistoryCountedItIn() {
    Instant changeAt = Instant.parse("2026-12-02T08:00:00Z");
    List<Event> journal =
        List.of(
            made("u1", "acme", 100_000, "2026-12-02T22:30:00Z"),
            new dev.spendgateway.ledger.LedgerEvents.WindowZoneChanged(
                "Europe/Istanbul", "UTC", Instant.parse("2026-12-03T00:00:00Z"), changeAt),
            made("i1", "acme", 200_000, "2026-12-03T22:30:00Z"));
    SpendReport history =
        new SpendReport(List.of(SpendReport.Key.DAY), ISTANBUL, DEC_1, DEC_31, true);
    SpendReport oneZone = new SpendReport(List.of(SpendReport.Key.DAY), ISTANBUL, DEC_1, DEC_31);
    journal.forEach(history::add);
    journal.forEach(oneZone::add);
    assertEquals(
        "day,calls,settled_usd,voided,expired_usd,refused\n"
            + "2026-12-02,1,0.000000,0,0.000000,0\n"
            + "2026-12-04,1,0.000000,0,0.000000,0\n",
        history.csv());
    assertEquals("Europe/Istanbul", history.zoneName());
    // Given one zone, the first is regrouped into Istanbul's 3rd.
    assertEquals(
        "day,calls,settled_usd,voided,expired_usd,refused\n"
            + "2026-12-03,1,0.000000,0,0.000000,0\n"
            + "2026-12-04,1,0.000000,0,0.000000,0\n",
        oneZone.csv());
  }

  @Test
  void aJournalThatNeverChangedZoneIsReportedInUtc() {
    SpendReport report =
        new SpendReport(List.of(SpendReport.Key.DAY), ISTANBUL, DEC_1, DEC_31, true);
    report.add(made("u1", "acme", 100_000, "2026-12-02T22:30:00Z"));
    assertEquals("UTC", report.zoneName());
    assertTrue(report.csv().contains("2026-12-02,1,"), report.csv());
  }

  @Test
  void anUnknownKeyIsRefusedNamingTheKeys() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> SpendReport.Key.parse("colour"));
    assertEquals(
        "--by: unknown key 'colour' (day, month, brand, lane, model, provider, tag)",
        e.getMessage());
  }
}
