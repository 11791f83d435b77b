package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.spendgateway.ledger.AllowanceTransfers.AlreadyIn;
import dev.spendgateway.ledger.AllowanceTransfers.Lend;
import dev.spendgateway.ledger.AllowanceTransfers.NotTaken;
import dev.spendgateway.ledger.AllowanceTransfers.Reply;
import dev.spendgateway.ledger.AllowanceTransfers.TakenIn;
import dev.spendgateway.ledger.AllowanceTransfers.TakenOut;
import dev.spendgateway.ledger.Decider.Decision;
import dev.spendgateway.ledger.LedgerEvents.AllowanceIn;
import dev.spendgateway.ledger.LedgerEvents.AllowanceOut;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerProtocol.Refused;
import dev.spendgateway.ledger.LedgerProtocol.Reserve;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapCheck;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapLimits;
import dev.spendgateway.policy.caps.CapName;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Regional allowance transfers (docs/MULTI-REGION.md): out only within headroom, in once per id,
 * the reserve checked against the moved allowance, the fold and the snapshot keep them — and a
 * single-region ledger, which never has one, decides exactly as before.
 */
class AllowanceTransfersTest {
  private static final Instant NOW = Instant.parse("2026-03-14T12:00:00Z");
  private static final CapKey DAY = new CapKey(CapName.GLOBAL_DAILY, null, "2026-03-14");
  private static final CapKey MONTH = new CapKey(CapName.GLOBAL_MONTHLY, null, "2026-03");
  // The region's share: $10/day, $100/month.
  private static final CapLimits SHARE =
      new CapLimits(10_000_000, 100_000_000, 50_000_000, 50_000_000, 1_000_000);
  private static final LedgerSettings SETTINGS =
      new LedgerSettings(
          SHARE,
          Duration.ofMinutes(10),
          Duration.ofSeconds(1),
          1_000,
          Duration.ofDays(62),
          Duration.ofHours(1),
          Duration.ofSeconds(5),
          100,
          false,
          1_000_000_000L);

  private static LedgerState spent(long micros) {
    return micros == 0
        ? LedgerState.empty()
        : LedgerState.empty()
            .applied(
                new ReservationMade(
                    "held", Lane.FREE, null, micros, 0, 0, NOW, NOW.plusSeconds(600)));
  }

  private static AllowanceOut out(String id, String from, String to, long micros) {
    return new AllowanceOut(
        id, from, to, CapName.GLOBAL_DAILY, null, "2026-03-14", micros, "test", null, NOW);
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "lends what it has spare,                          eu, us, 0,         4000000,  true,  ",
    "lends all its headroom,                           eu, us, 2000000,   8000000,  true,  ",
    "refuses a cent above its headroom,                eu, us, 2000000,   8000001,  false, above this region's headroom",
    "refuses when all is held,                         eu, us, 10000000,  1,        false, above this region's headroom",
    "refuses to lend another region's allowance,       us, ap, 0,         1000000,  false, a region lends only its own allowance",
    "refuses a loan to itself,                         eu, eu, 0,         1000000,  false, toRegion must be another region",
    "refuses nothing,                                  eu, us, 0,         0,        false, amount must be positive",
  })
  void takesOutOnlyWhatTheRegionCouldStillHaveReserved(
      String sentence, String from, String to, long spent, long micros, boolean taken, String why) {
    Decision<Reply> d =
        AllowanceTransfers.takeOut(
            spent(spent),
            SHARE,
            "eu",
            new Lend("t-1", from, to, DAY, micros, "rebalancer", null),
            NOW);
    if (taken) {
      AllowanceOut out = assertInstanceOf(TakenOut.class, d.reply()).out();
      assertEquals(List.of(out), d.events());
      assertEquals(micros, out.micros());
      assertEquals(-micros, spent(spent).applied(out).allowanceMovedIn(DAY));
    } else {
      assertEquals(why.trim(), assertInstanceOf(NotTaken.class, d.reply()).reason());
      assertEquals(List.of(), d.events());
    }
  }

  @Test
  void aRepeatedOutAnswersTheFirstAndAnotherUnderTheSameIdIsRefused() {
    AllowanceOut first = out("t-1", "eu", "us", 3_000_000);
    LedgerState state = LedgerState.empty().applied(first);
    Decision<Reply> again =
        AllowanceTransfers.takeOut(
            state, SHARE, "eu", new Lend("t-1", "eu", "us", DAY, 3_000_000, "retry", null), NOW);
    assertEquals(new TakenOut(first), again.reply());
    assertEquals(List.of(), again.events());
    Decision<Reply> other =
        AllowanceTransfers.takeOut(
            state, SHARE, "eu", new Lend("t-1", "eu", "us", DAY, 5_000_000, "other", null), NOW);
    assertInstanceOf(NotTaken.class, other.reply());
    assertEquals(List.of(), other.events());
  }

  @Test
  void anEndedWindowOrABrandCapIsNotLent() {
    CapKey yesterday = new CapKey(CapName.GLOBAL_DAILY, null, "2026-03-13");
    assertInstanceOf(
        NotTaken.class,
        AllowanceTransfers.takeOut(
                LedgerState.empty(),
                SHARE,
                "eu",
                new Lend("t", "eu", "us", yesterday, 1, "r", null),
                NOW)
            .reply());
    CapKey brand = new CapKey(CapName.BRAND_DAILY, "b1", "2026-03-14");
    assertInstanceOf(
        NotTaken.class,
        AllowanceTransfers.takeOut(
                LedgerState.empty(),
                SHARE,
                "eu",
                new Lend("t", "eu", "us", brand, 1, "r", null),
                NOW)
            .reply());
  }

  @Test
  void anInIsTakenOncePerIdAndAcknowledgedAgainAfterwards() {
    AllowanceOut delivered = out("t-9", "eu", "us", 2_000_000);
    Decision<Reply> first = AllowanceTransfers.takeIn(LedgerState.empty(), "us", delivered, NOW);
    AllowanceIn in = assertInstanceOf(TakenIn.class, first.reply()).in();
    assertEquals(List.of(in), first.events());
    LedgerState after = LedgerState.empty().applied(in);
    assertEquals(2_000_000, after.allowanceMovedIn(DAY));

    Decision<Reply> repeat = AllowanceTransfers.takeIn(after, "us", delivered, NOW.plusSeconds(5));
    assertEquals(new AlreadyIn("t-9"), repeat.reply());
    assertEquals(List.of(), repeat.events());
    // Not to this region, or an id this region took out itself: never taken.
    assertInstanceOf(
        NotTaken.class,
        AllowanceTransfers.takeIn(LedgerState.empty(), "ap", delivered, NOW).reply());
    LedgerState lender = LedgerState.empty().applied(out("t-9", "us", "ap", 1));
    assertInstanceOf(
        NotTaken.class, AllowanceTransfers.takeIn(lender, "us", delivered, NOW).reply());
    // A journal that holds one twice is broken: the fold refuses it (verify names it).
    assertThrows(IllegalStateException.class, () -> after.applied(in));
  }

  @Test
  void aReserveIsDecidedAgainstTheMovedAllowance() {
    Decider decider = new Decider(SETTINGS);
    Reserve twelve =
        new Reserve("r-1", Lane.FREE, null, 12_000_000, 0, 0, Owner.LEDGER_API, null, null);
    // $12 against a $10 share: refused by global_daily, limit $10.
    Refused refused =
        assertInstanceOf(Refused.class, decider.reserve(LedgerState.empty(), twelve, NOW).reply());
    assertEquals(CapName.GLOBAL_DAILY, refused.cap());
    // Lent $3 by another region: $13 allowance, $12 fits.
    LedgerState borrowed =
        LedgerState.empty().applied(AllowanceIn.of(out("t-1", "us", "eu", 3_000_000), NOW));
    assertInstanceOf(Reserved.class, decider.reserve(borrowed, twelve, NOW).reply());
    // Lent $3 away: $7 allowance, $8 does not fit.
    LedgerState lent = LedgerState.empty().applied(out("t-2", "eu", "us", 3_000_000));
    Reserve eight =
        new Reserve("r-2", Lane.FREE, null, 8_000_000, 0, 0, Owner.LEDGER_API, null, null);
    Refused short_ = assertInstanceOf(Refused.class, decider.reserve(lent, eight, NOW).reply());
    assertEquals(7_000_000, short_.headroomMicros());
  }

  @Test
  void aSingleRegionLedgerChecksExactlyTheConfiguredCaps() {
    List<CapCheck.Applicable> caps = CapCheck.capsFor(Lane.FREE, null, 0, 0, NOW, SHARE);
    assertSame(caps, LedgerState.empty().withAllowances(caps));
    assertSame(caps, spent(5_000_000).withAllowances(caps));
  }

  @Test
  void theFoldAndTheSnapshotKeepEveryTransfer() {
    LedgerState state =
        spent(1_000_000)
            .applied(out("t-1", "eu", "us", 2_000_000))
            .applied(
                AllowanceIn.of(
                    new AllowanceOut(
                        "t-2",
                        "ap",
                        "eu",
                        CapName.GLOBAL_MONTHLY,
                        null,
                        "2026-03",
                        5_000_000,
                        "r",
                        "alice",
                        NOW),
                    NOW.plusSeconds(1)));
    assertEquals(-2_000_000, state.allowanceMovedIn(DAY));
    assertEquals(5_000_000, state.allowanceMovedIn(MONTH));
    LedgerState read = LedgerSnapshot.of(state).toState();
    assertEquals(state, read);
    assertEquals(-2_000_000, read.allowanceMovedIn(DAY));
    assertEquals(state.allowanceOut("t-1"), read.allowanceOut("t-1"));
    assertEquals("alice", read.allowanceIn("t-2").orElseThrow().operator());
    // Books differing only in a transfer are different books.
    assertTrue(!spent(1_000_000).equals(state));
  }
}
