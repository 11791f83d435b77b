package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.spendgateway.ledger.LedgerEvents.Compacted;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.GroupCommit;
import dev.spendgateway.ledger.LedgerEvents.ReservationExpired;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerEvents.ReservationRefused;
import dev.spendgateway.ledger.LedgerEvents.ReservationSettled;
import dev.spendgateway.ledger.LedgerEvents.ReservationVoided;
import dev.spendgateway.ledger.LedgerEvents.SpendAdjusted;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapName;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A journal row (a group commit) is folded with its cap-window totals gathered until the row ends
 * (see {@code LedgerState#appliedInOrder}); the books must come out exactly as when its facts are
 * applied one by one, whatever the row mixes: reservations closed in the row that made them,
 * refusals, adjustments and compactions between them, several days and brands.
 */
class GroupCommitFoldTest {
  private static final Instant START = Instant.parse("2026-12-01T22:00:00Z");

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8})
  void aRowFoldsToTheSameBooksAsItsFactsOneByOne(long seed) {
    Random random = new Random(seed);
    LedgerState byRow = LedgerState.empty();
    LedgerState byFact = LedgerState.empty();
    List<ReservationMade> open = new ArrayList<>();
    Instant at = START;
    int next = 0;
    for (int row = 0; row < 400; row++) {
      List<Event> facts = new ArrayList<>();
      int size = 1 + random.nextInt(random.nextBoolean() ? 4 : 40);
      for (int f = 0; f < size; f++) {
        at = at.plusSeconds(random.nextInt(60));
        int kind = random.nextInt(100);
        if (kind < 55 || open.isEmpty()) {
          ReservationMade made = made(random, next++, at);
          open.add(made);
          facts.add(made);
        } else if (kind < 85) {
          ReservationMade r = open.remove(random.nextInt(open.size()));
          facts.add(closing(random, r, at));
        } else if (kind < 93) {
          facts.add(refused(random, next++, at));
        } else if (kind < 98) {
          facts.add(adjusted(random, next++, at));
        } else {
          facts.add(
              new Compacted(at.minus(Duration.ofDays(1)), at, at.minus(Duration.ofHours(2)), null));
        }
      }
      byRow = byRow.applied(GroupCommit.of(facts));
      for (Event fact : facts) {
        byFact = byFact.applied(fact);
      }
    }
    assertEquals(byFact, byRow);
    assertEquals(byFact.spendByKey().asMap(), byRow.spendByKey().asMap(), "every total, 0 too");
    assertEquals(byFact.brandCapsBySubject().asMap(), byRow.brandCapsBySubject().asMap());
    assertEquals(
        byFact.dueForExpiry(at.plus(Duration.ofDays(1))),
        byRow.dueForExpiry(at.plus(Duration.ofDays(1))));
  }

  @Test
  void aRowThatClosesAReservationItDidNotOpenFailsLikeTheFactAlone() {
    ReservationMade made = made(new Random(1), 1, START);
    List<Event> row =
        List.of(
            made,
            new ReservationSettled(
                made.id(), made.lane(), made.subject(), START, made.amountMicros(), 1, START),
            new ReservationVoided(
                made.id(), made.lane(), made.subject(), START, made.amountMicros(), START));
    assertThrows(
        IllegalStateException.class, () -> LedgerState.empty().applied(GroupCommit.of(row)));
  }

  private static ReservationMade made(Random random, int n, Instant at) {
    Lane lane = Lane.values()[random.nextInt(Lane.values().length)];
    String id = (random.nextBoolean() ? "gw-" : "svc-") + n;
    long brandDaily = random.nextBoolean() ? 5_000_000 : 7_000_000;
    return new ReservationMade(
        id,
        lane,
        subject(random, lane),
        1 + random.nextInt(100_000),
        lane == Lane.APP ? brandDaily : 0,
        lane == Lane.APP ? 50_000_000 : 0,
        at,
        at.plus(Duration.ofMinutes(15 + random.nextInt(60))));
  }

  private static String subject(Random random, Lane lane) {
    return switch (lane) {
      case FREE -> null;
      case TRIAL -> "p" + random.nextInt(3);
      case APP -> "b" + random.nextInt(4);
    };
  }

  private static Event closing(Random random, ReservationMade r, Instant at) {
    return switch (random.nextInt(3)) {
      case 0 ->
          new ReservationSettled(
              r.id(),
              r.lane(),
              r.subject(),
              r.at(),
              r.amountMicros(),
              random.nextInt((int) r.amountMicros() + 1),
              at);
      case 1 -> new ReservationVoided(r.id(), r.lane(), r.subject(), r.at(), r.amountMicros(), at);
      default ->
          new ReservationExpired(r.id(), r.lane(), r.subject(), r.at(), r.amountMicros(), at);
    };
  }

  private static Event refused(Random random, int n, Instant at) {
    ReservationMade asked = made(random, n, at);
    return new ReservationRefused(
        asked.id(),
        asked.lane(),
        asked.subject(),
        asked.amountMicros(),
        asked.brandDailyMicros(),
        asked.brandMonthlyMicros(),
        CapName.GLOBAL_DAILY,
        null,
        "2026-12-01",
        1_000_000,
        random.nextInt(1_000),
        at);
  }

  private static Event adjusted(Random random, int n, Instant at) {
    Lane lane = Lane.values()[random.nextInt(Lane.values().length)];
    return new SpendAdjusted(
        "adj-" + n,
        "ops",
        "test",
        lane,
        lane == Lane.FREE ? null : subject(random, lane),
        random.nextInt(20_000) - 5_000,
        at);
  }
}
