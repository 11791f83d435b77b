package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.spendgateway.ledger.Decider.Decision;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerEvents.ReservationRefused;
import dev.spendgateway.ledger.LedgerEvents.ReservationSettled;
import dev.spendgateway.ledger.LedgerEvents.ReservationVoided;
import dev.spendgateway.ledger.LedgerProtocol.Batchable;
import dev.spendgateway.ledger.LedgerProtocol.Closed;
import dev.spendgateway.ledger.LedgerProtocol.Conflict;
import dev.spendgateway.ledger.LedgerProtocol.Forbidden;
import dev.spendgateway.ledger.LedgerProtocol.Invalid;
import dev.spendgateway.ledger.LedgerProtocol.NotFound;
import dev.spendgateway.ledger.LedgerProtocol.NotOpen;
import dev.spendgateway.ledger.LedgerProtocol.Refused;
import dev.spendgateway.ledger.LedgerProtocol.Reserve;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.LedgerProtocol.Settle;
import dev.spendgateway.ledger.LedgerProtocol.VoidReservation;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapName;
import dev.spendgateway.policy.money.Micros;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The ledger's decisions without an actor: given the events so far, when a command arrives, then
 * this reply and these events. Each row reads as a sentence.
 */
class DeciderTest {
  static final Instant NOW = Instant.parse("2026-11-30T10:00:00Z");
  static final Instant EARLIER = NOW.minus(Duration.ofMinutes(1));
  static final LedgerSettings SETTINGS = GlobalBudgetTest.settings(1000);
  static final Decider DECIDER = new Decider(SETTINGS);

  static long usd(String amount) {
    return Micros.ofUsdExact(new BigDecimal(amount));
  }

  /** A reservation made a minute ago. */
  static Event made(String id, Lane lane, String subject, String amount, Owner owner) {
    return new ReservationMade(id, lane, subject, usd(amount), 0, 0, EARLIER, EARLIER.plus(Duration.ofMinutes(15)),
        owner);
  }

  static Event apiMade(String id, String amount) {
    return made(id, Lane.FREE, null, amount, Owner.LEDGER_API);
  }

  static Event settled(String id, String reserved, String actual) {
    return new ReservationSettled(id, Lane.FREE, null, EARLIER, usd(reserved), usd(actual), EARLIER);
  }

  /** A ledger API reserve refused a minute ago by the free pool with $0.20 left. */
  static Event refused(String id, String amount) {
    return new ReservationRefused(id, Lane.FREE, null, usd(amount), 0, 0, CapName.FREE_DAILY, null, "2026-11-30",
        usd("3"), usd("0.20"), EARLIER, Owner.LEDGER_API);
  }

  static Reserve reserveFree(String id, String amount, Owner owner) {
    return new Reserve(id, Lane.FREE, null, usd(amount), 0, 0, owner, null);
  }

  static Settle apiSettle(String id, String actual) {
    return new Settle(id, usd(actual), Owner.LEDGER_API, null);
  }

  static Settle gatewaySettle(String id, String actual) {
    return new Settle(id, usd(actual), Owner.GATEWAY, null);
  }

  static LedgerState given(List<Event> events) {
    LedgerState state = LedgerState.empty();
    for (Event e : events) {
      state = state.applied(e);
    }
    return state;
  }

  static Stream<Arguments> rows() {
    return Stream.of(
        Arguments.of("a free-lane reserve within every cap is held for the reservation timeout",
            List.of(), reserveFree("r-1", "0.50", Owner.LEDGER_API),
            new Reserved("r-1", usd("0.50")), List.of(ReservationMade.class)),
        Arguments.of("a reserve above the free pool's headroom is refused and the refusal journaled",
            List.of(apiMade("r-0", "2.80")), reserveFree("r-1", "0.50", Owner.LEDGER_API),
            new Refused("r-1", CapName.FREE_DAILY, null, usd("0.20")), List.of(ReservationRefused.class)),
        Arguments.of("a repeat of an admitted reserve answers Reserved again and writes nothing",
            List.of(apiMade("r-1", "0.50")), reserveFree("r-1", "0.50", Owner.LEDGER_API),
            new Reserved("r-1", usd("0.50")), List.of()),
        Arguments.of("a reserve reusing an id for another amount is a conflict and writes nothing",
            List.of(apiMade("r-1", "0.50")), reserveFree("r-1", "0.60", Owner.LEDGER_API),
            new Conflict("r-1", "reservation id r-1 was already used for a different request"), List.of()),
        Arguments.of("a ledger API reserve of zero is invalid",
            List.of(), reserveFree("r-1", "0", Owner.LEDGER_API),
            new Invalid("r-1", "amountUsd", "amountUsd must be greater than 0"), List.of()),
        Arguments.of("a ledger API reserve in the gateway's id namespace is invalid",
            List.of(), reserveFree("gw-1", "0.10", Owner.LEDGER_API),
            new Invalid("gw-1", "id", "ids starting with gw- are the gateway's own; choose another id"), List.of()),
        Arguments.of("a settle of an open reservation closes it at the actual cost",
            List.of(apiMade("r-1", "0.50")), apiSettle("r-1", "0.20"),
            new Closed("r-1", Status.SETTLED, usd("0.20")), List.of(ReservationSettled.class)),
        Arguments.of("a settle of an unknown id is not found",
            List.of(), apiSettle("r-9", "0.20"), new NotFound("r-9"), List.of()),
        Arguments.of("a settle of a refused id finds nothing open",
            List.of(refused("r-1", "0.50")), apiSettle("r-1", "0.10"), new NotOpen("r-1", Status.REFUSED), List.of()),
        Arguments.of("a ledger API settle of a gateway reservation is forbidden",
            List.of(made("gw-1", Lane.FREE, null, "0.50", Owner.GATEWAY)), apiSettle("gw-1", "0.20"),
            new Forbidden("gw-1",
                "reservations made by the gateway's provider routes are settled and voided by the gateway only"),
            List.of()),
        Arguments.of("a void closes an open reservation at zero",
            List.of(apiMade("r-1", "0.50")), new VoidReservation("r-1", Owner.LEDGER_API, null),
            new Closed("r-1", Status.VOIDED, 0), List.of(ReservationVoided.class)),
        Arguments.of("a gateway settle above its reserve (the provider billed more) is booked as billed",
            List.of(made("gw-1", Lane.FREE, null, "0.50", Owner.GATEWAY)), gatewaySettle("gw-1", "0.70"),
            new Closed("gw-1", Status.SETTLED, usd("0.70")), List.of(ReservationSettled.class)),
        Arguments.of("a gateway settle at exactly ten times its reserve is still booked",
            List.of(made("gw-1", Lane.FREE, null, "0.50", Owner.GATEWAY)), gatewaySettle("gw-1", "5.00"),
            new Closed("gw-1", Status.SETTLED, usd("5.00")), List.of(ReservationSettled.class)),
        Arguments.of("a gateway settle above ten times its reserve (cents sent as dollars) is refused naming the bound",
            List.of(made("gw-1", Lane.FREE, null, "0.50", Owner.GATEWAY)), gatewaySettle("gw-1", "50.00"),
            new Invalid("gw-1", "actualUsd", "actualUsd 50 is above the reserved amountUsd 0.5 and more than"
                + " ledger.max-settle-multiple (10) times it; a settle that large is refused as a likely units mistake"
                + " (cents sent as dollars) and the reservation stays open"),
            List.of()),
        Arguments.of("a settle repeating the first amount answers the first close and writes nothing",
            List.of(apiMade("r-1", "0.50"), settled("r-1", "0.50", "0.20")), apiSettle("r-1", "0.20"),
            new Closed("r-1", Status.SETTLED, usd("0.20")), List.of()),
        Arguments.of("a repeated settle with a different amount is a conflict and the first amount stays",
            List.of(apiMade("r-1", "0.50"), settled("r-1", "0.50", "0.20")), apiSettle("r-1", "0.30"),
            new Conflict("r-1", "reservation r-1 was already settled at actualUsd 0.2; a repeated settle must send"
                + " the same actualUsd"),
            List.of()),
        Arguments.of("a void after a settle answers the settle (the books keep the first close)",
            List.of(apiMade("r-1", "0.50"), settled("r-1", "0.50", "0.20")),
            new VoidReservation("r-1", Owner.LEDGER_API, null),
            new Closed("r-1", Status.SETTLED, usd("0.20")), List.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void decides(String sentence, List<Event> given, Batchable when, Object reply, List<Class<?>> eventTypes) {
    LedgerState state = given(given);
    Decision<?> decision = DECIDER.decide(state, when, NOW);

    assertEquals(reply, decision.reply());
    assertEquals(eventTypes, decision.events().stream().map(Object::getClass).toList());
  }

  @Test
  void aBatchDecidesEachCommandAgainstTheStateTheOnesBeforeItLeft() {
    var batch = DECIDER.decideBatch(LedgerState.empty(), List.of(
        reserveFree("r-1", "2.00", Owner.LEDGER_API),
        reserveFree("r-2", "2.00", Owner.LEDGER_API),
        apiSettle("r-1", "0.50")), NOW);

    assertEquals(new Reserved("r-1", usd("2.00")), batch.decided().get(0).decision().reply());
    assertEquals(new Refused("r-2", CapName.FREE_DAILY, null, usd("1.00")), batch.decided().get(1).decision().reply());
    assertEquals(new Closed("r-1", Status.SETTLED, usd("0.50")), batch.decided().get(2).decision().reply());
    assertEquals(3, batch.events().size());
  }
}
