package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import dev.spendgateway.ledger.LedgerEvents.Compacted;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerProtocol.CloseReply;
import dev.spendgateway.ledger.LedgerProtocol.Closed;
import dev.spendgateway.ledger.LedgerProtocol.Command;
import dev.spendgateway.ledger.LedgerProtocol.Compact;
import dev.spendgateway.ledger.LedgerProtocol.Conflict;
import dev.spendgateway.ledger.LedgerProtocol.GetReservation;
import dev.spendgateway.ledger.LedgerProtocol.IdReused;
import dev.spendgateway.ledger.LedgerProtocol.Refused;
import dev.spendgateway.ledger.LedgerProtocol.ReservationReply;
import dev.spendgateway.ledger.LedgerProtocol.ReservationView;
import dev.spendgateway.ledger.LedgerProtocol.Reserve;
import dev.spendgateway.ledger.LedgerProtocol.ReserveReply;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.LedgerProtocol.Settle;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapLimits;
import dev.spendgateway.policy.caps.CapName;
import java.time.Duration;
import java.util.Optional;
import java.util.stream.Stream;
import org.apache.pekko.actor.testkit.typed.annotations.JUnit5TestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.JUnit5TestKitBuilder;
import org.apache.pekko.actor.testkit.typed.javadsl.LogCapturingExtension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestKitJUnit5Extension;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResultWithReply;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A reservation id answers the same for the idempotency window (here 1h, scaled down from 24h)
 * whatever compaction did, and after the window it is answered id_reused: never a second
 * reservation under the same id.
 */
@ExtendWith({TestKitJUnit5Extension.class, LogCapturingExtension.class})
class IdempotencyWindowTest {

  @JUnit5TestKit
  final ActorTestKit testKit =
      new JUnit5TestKitBuilder()
          .withCustomConfig(EventSourcedBehaviorTestKit.config().withFallback(ConfigFactory.load()))
          .build();

  static final CapLimits CAPS =
      new CapLimits(40_000_000, 600_000_000, 3_000_000, 25_000_000, 600_000);

  /** Retention 2h (cap windows), window 1h (ids), horizon 1d (past-id filters). */
  static LedgerSettings settings(int snapshotEvery) {
    return new LedgerSettings(
            CAPS,
            Duration.ofMinutes(15),
            Duration.ofHours(1),
            snapshotEvery,
            Duration.ofHours(2),
            Duration.ofHours(1),
            Duration.ofSeconds(5),
            1000,
            false,
            1_000_000_000L)
        .withIdempotency(Duration.ofHours(1), Duration.ofDays(1));
  }

  private final TestClock clock = TestClock.at("2026-11-30T10:00:00Z");
  private EventSourcedBehaviorTestKit<Command, Event, LedgerState> kit;

  @BeforeEach
  void setUp() {
    kit =
        EventSourcedBehaviorTestKit.create(
            testKit.system(),
            GlobalBudget.create(settings(1000), clock),
            EventSourcedBehaviorTestKit.enabledSerializationSettings().withVerifyCommands(false));
    kit.clear();
  }

  private CommandResultWithReply<Command, Event, LedgerState, ReserveReply> reserve(
      String id, Lane lane, String subject, long amount) {
    long brandDaily = lane == Lane.APP ? 5_000_000 : 0;
    long brandMonthly = lane == Lane.APP ? 50_000_000 : 0;
    return kit.runCommand(
        replyTo ->
            new Reserve(
                id, lane, subject, amount, brandDaily, brandMonthly, Owner.LEDGER_API, replyTo));
  }

  private CommandResultWithReply<Command, Event, LedgerState, CloseReply> settle(
      String id, long actual) {
    return kit.runCommand(replyTo -> new Settle(id, actual, Owner.LEDGER_API, replyTo));
  }

  private void compactAt(Duration later) {
    clock.advance(later);
    kit.runCommand(new Compact());
  }

  @Test
  void aRepeatAfterTheWindowIsIdReusedNeverASecondReservation() {
    assertInstanceOf(Reserved.class, reserve("svc-1", Lane.FREE, null, 300_000).reply());
    settle("svc-1", 100_000);
    compactAt(Duration.ofHours(3)); // past the window (1h) and the retention (2h)

    var repeat = reserve("svc-1", Lane.FREE, null, 300_000);
    assertEquals(new IdReused("svc-1"), repeat.reply());
    assertTrue(repeat.hasNoEvents(), "a second reservation was made under a reused id");
    // And after a restart (snapshot + journal, then journal only) the same.
    kit.restart();
    assertEquals(new IdReused("svc-1"), reserve("svc-1", Lane.FREE, null, 300_000).reply());
    kit.snapshotTestKit().orElseThrow().clearAll();
    kit.restart();
    assertTrue(reserve("svc-1", Lane.FREE, null, 300_000).hasNoEvents());
  }

  @Test
  void theProviderRoutesFreshIdsAreNeverAnsweredIdReused() {
    String id = Owner.newGatewayId();
    kit.<ReserveReply>runCommand(
        r -> new Reserve(id, Lane.FREE, null, 300_000, 0, 0, Owner.GATEWAY, r));
    kit.<CloseReply>runCommand(r -> new Settle(id, 100_000, Owner.GATEWAY, r));
    compactAt(Duration.ofHours(3));
    assertTrue(
        !kit.getState().probablyUsedBeforeWindow(id), "provider-route ids stay out of the filters");
    var again =
        kit.<ReserveReply>runCommand(
            r -> new Reserve(id, Lane.FREE, null, 300_000, 0, 0, Owner.GATEWAY, r));
    assertInstanceOf(Reserved.class, again.reply());
  }

  @Test
  void anOpenReservationIsNeverForgottenWhateverTheWindow() {
    reserve("svc-open", Lane.FREE, null, 300_000);
    clock.advance(Duration.ofMinutes(10));
    compactAt(Duration.ofMinutes(1));
    var repeat = reserve("svc-open", Lane.FREE, null, 300_000);
    assertEquals(new Reserved("svc-open", 300_000), repeat.reply());
    assertTrue(repeat.hasNoEvents());
  }

  /** One row per answer a repeat inside the window must get again, after a compaction ran. */
  static Stream<String> firstAnswers() {
    return Stream.of("reserved-then-settled", "refused", "conflicting-repeat");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("firstAnswers")
  void aRepeatInsideTheWindowGetsTheFirstAnswerAfterCompaction(String kind) {
    switch (kind) {
      case "reserved-then-settled" -> {
        reserve("svc-2", Lane.APP, "b1", 200_000);
        settle("svc-2", 150_000);
      }
      case "refused", "conflicting-repeat" ->
          reserve("svc-2", Lane.TRIAL, "p1", 700_000); // > preview lifetime
      default -> throw new IllegalArgumentException(kind);
    }
    ReserveReply first =
        kind.equals("reserved-then-settled")
            ? new Reserved("svc-2", 200_000)
            : reserve("svc-2", Lane.TRIAL, "p1", 700_000).reply();
    clock.advance(Duration.ofMinutes(50));
    var compacted = kit.runCommand(new Compact()); // cap windows of another day would go; ids stay
    assertTrue(compacted.hasNoEvents() || compacted.event() instanceof Compacted);

    var repeat =
        kind.equals("reserved-then-settled")
            ? reserve("svc-2", Lane.APP, "b1", 200_000)
            : kind.equals("refused")
                ? reserve("svc-2", Lane.TRIAL, "p1", 700_000)
                : reserve("svc-2", Lane.TRIAL, "p1", 100_000);
    assertTrue(repeat.hasNoEvents());
    if (kind.equals("conflicting-repeat")) {
      assertInstanceOf(Conflict.class, repeat.reply());
    } else {
      assertEquals(first, repeat.reply());
    }
    if (kind.equals("refused")) {
      Refused r = (Refused) repeat.reply();
      assertEquals(CapName.PREVIEW_LIFETIME, r.cap());
      assertEquals("p1", r.subject());
    }
  }

  @Test
  void aSettledIdInTheWindowStillAnswersSettleRepeatsAndLookups() {
    reserve("svc-3", Lane.APP, "b1", 200_000);
    settle("svc-3", 150_000);
    kit.restart(); // the compact index survives a snapshot round trip
    assertEquals(new Closed("svc-3", Status.SETTLED, 150_000), settle("svc-3", 150_000).reply());
    assertInstanceOf(Conflict.class, settle("svc-3", 160_000).reply());
    ReservationReply view =
        kit.<ReservationReply>runCommand(r -> new GetReservation("svc-3", r)).reply();
    assertEquals(
        new ReservationView(
            "svc-3",
            Status.SETTLED,
            Lane.APP,
            "b1",
            200_000,
            Optional.of(150_000L),
            Owner.LEDGER_API),
        view);
  }

  @Test
  void idsLeaveTheWindowInBoundedSlices() {
    int ids = RecentIds.CHUNK * (Decider.MAX_CHUNKS_PER_COMPACTION + 2);
    LedgerState state = LedgerState.empty();
    for (int i = 0; i < ids; i++) {
      state =
          state.applied(
              new ReservationMade(
                  "s-" + i,
                  Lane.FREE,
                  null,
                  1,
                  0,
                  0,
                  clock.instant(),
                  clock.instant().plusSeconds(900)));
      state =
          state.applied(
              new LedgerEvents.ReservationVoided(
                  "s-" + i, Lane.FREE, null, clock.instant(), 1, clock.instant().plusMillis(i)));
    }
    Decider decider = new Decider(settings(1000));
    var later = clock.instant().plus(Duration.ofHours(2));
    Compacted first = (Compacted) decider.compact(state, later).orElseThrow();
    long started = System.nanoTime();
    LedgerState sliced = state.applied(first);
    long tookMicros = (System.nanoTime() - started) / 1000;
    System.out.printf(
        "one compaction slice: %d ids moved in %d us%n",
        state.knownReservations() - sliced.knownReservations(), tookMicros);
    assertEquals(
        ids - RecentIds.CHUNK * Decider.MAX_CHUNKS_PER_COMPACTION, sliced.knownReservations());
    assertTrue(decider.moreToCompact(sliced, later));
    LedgerState rest = sliced;
    int slices = 1;
    long slowestMicros = 0;
    while (decider.moreToCompact(rest, later)) {
      long sliceStarted = System.nanoTime();
      rest = rest.applied(decider.compact(rest, later).orElseThrow());
      slowestMicros = Math.max(slowestMicros, (System.nanoTime() - sliceStarted) / 1000);
      slices++;
    }
    System.out.printf("later slices: slowest %d us%n", slowestMicros);
    assertEquals(ids / (RecentIds.CHUNK * Decider.MAX_CHUNKS_PER_COMPACTION), slices);
    assertEquals(0, rest.knownReservations());
    assertTrue(rest.probablyUsedBeforeWindow("s-0"));
    assertTrue(rest.probablyUsedBeforeWindow("s-" + (ids - 1)));
  }
}
