package dev.spendgateway.ledger.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.LedgerEvents.AllowanceIn;
import dev.spendgateway.ledger.LedgerEvents.AllowanceOut;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerState;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapLimits;
import dev.spendgateway.policy.caps.CapName;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * {@code verify} on journals holding allowance transfers: one journal's own checks ({@link
 * LedgerAudit}: out within headroom, each id once, reserves against the moved allowance) and the
 * check across regions ({@link AllowanceAudit}: never more in than out per transfer id).
 */
class AllowanceAuditTest {
  private static final Instant AT = Instant.parse("2026-03-14T12:00:00Z");
  // This region's share: $10/day.
  private static final CapLimits SHARE =
      new CapLimits(10_000_000, 100_000_000, 50_000_000, 50_000_000, 1_000_000);

  private static AllowanceOut out(String id, String from, String to, long micros) {
    return new AllowanceOut(
        id, from, to, CapName.GLOBAL_DAILY, null, "2026-03-14", micros, "PULL", null, AT);
  }

  private static ReservationMade made(String id, long micros) {
    return new ReservationMade(id, Lane.FREE, null, micros, 0, 0, AT, AT.plusSeconds(600));
  }

  /** The first violation of {@code events} as one journal, or empty. */
  private static Optional<Violation> verify(Event... events) {
    LedgerAudit audit = new LedgerAudit(SHARE);
    long seq = 0;
    for (Event e : events) {
      Optional<Violation> v = audit.accept(new Journaled(++seq, e, true));
      if (v.isPresent()) {
        return v;
      }
    }
    return Optional.empty();
  }

  @Test
  void aJournalThatLendsWithinHeadroomAndSpendsWhatItBorrowedVerifies() {
    assertEquals(
        Optional.empty(),
        verify(
            made("r-1", 4_000_000),
            out("t-1", "eu", "us", 6_000_000), // all the headroom left
            AllowanceIn.of(out("t-2", "ap", "eu", 3_000_000), AT),
            made("r-2", 3_000_000))); // fits only with the $3 taken in
  }

  @Test
  void aReserveAboveTheMovedAllowanceIsNamed() {
    Optional<Violation> v = verify(out("t-1", "eu", "us", 6_000_000), made("r-1", 5_000_000));
    assertTrue(v.orElseThrow().message().contains("accepted past cap global_daily"), v.toString());
    assertEquals(2, v.get().sequenceNr());
  }

  @Test
  void anOutAboveTheHeadroomOrTwiceOrAnInTwiceIsNamed() {
    assertTrue(
        verify(made("r-1", 4_000_000), out("t-1", "eu", "us", 6_000_001))
            .orElseThrow()
            .message()
            .contains("with only $6 of headroom"));
    assertTrue(
        verify(out("t-1", "eu", "us", 1), out("t-1", "eu", "us", 1))
            .orElseThrow()
            .message()
            .contains("taken out twice"));
    AllowanceIn in = AllowanceIn.of(out("t-2", "ap", "eu", 1), AT);
    assertTrue(verify(in, in).orElseThrow().message().contains("taken in twice"));
  }

  @Test
  void acrossRegionsNoTransferIsTakenInAboveWhatWasTakenOut() {
    AllowanceOut lent = out("t-1", "eu", "us", 2_000_000);
    LedgerState eu = LedgerState.empty().applied(lent).applied(out("t-2", "eu", "ap", 1_000_000));
    LedgerState us = LedgerState.empty().applied(AllowanceIn.of(lent, AT));
    AllowanceAudit ok = new AllowanceAudit().add(eu).add(us);
    assertEquals(List.of(), ok.violations());
    assertEquals(1, ok.inFlight(), "t-2 is taken out and not yet in: in flight, not broken");

    AllowanceOut more = out("t-1", "eu", "us", 2_000_001);
    List<String> broken =
        new AllowanceAudit()
            .add(eu)
            .add(LedgerState.empty().applied(AllowanceIn.of(more, AT)))
            .violations();
    assertEquals(1, broken.size(), broken.toString());
    assertTrue(broken.get(0).contains("taken in for more than was taken out"), broken.toString());

    List<String> fromNowhere =
        new AllowanceAudit()
            .add(LedgerState.empty().applied(AllowanceIn.of(out("t-9", "ap", "us", 1), AT)))
            .violations();
    assertTrue(
        fromNowhere.get(0).contains("taken out in none of the journals"), fromNowhere.toString());
  }
}
