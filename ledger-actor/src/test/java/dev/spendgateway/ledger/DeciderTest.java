package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.spendgateway.ledger.Decider.Decision;
import dev.spendgateway.ledger.LedgerEvents.Event;
import dev.spendgateway.ledger.LedgerEvents.ReservationMade;
import dev.spendgateway.ledger.LedgerEvents.ReservationRefused;
import dev.spendgateway.ledger.LedgerEvents.ReservationSettled;
import dev.spendgateway.ledger.LedgerEvents.ReservationVoided;
import dev.spendgateway.ledger.LedgerEvents.SpendAdjusted;
import dev.spendgateway.ledger.LedgerProtocol.Adjust;
import dev.spendgateway.ledger.LedgerProtocol.AdjustRefused;
import dev.spendgateway.ledger.LedgerProtocol.AdjustReply;
import dev.spendgateway.ledger.LedgerProtocol.Adjusted;
import dev.spendgateway.ledger.LedgerProtocol.Batchable;
import dev.spendgateway.ledger.LedgerProtocol.Closed;
import dev.spendgateway.ledger.LedgerProtocol.Command;
import dev.spendgateway.ledger.LedgerProtocol.Conflict;
import dev.spendgateway.ledger.LedgerProtocol.Forbidden;
import dev.spendgateway.ledger.LedgerProtocol.Invalid;
import dev.spendgateway.ledger.LedgerProtocol.NotFound;
import dev.spendgateway.ledger.LedgerProtocol.NotOpen;
import dev.spendgateway.ledger.LedgerProtocol.OperatorSettle;
import dev.spendgateway.ledger.LedgerProtocol.Refused;
import dev.spendgateway.ledger.LedgerProtocol.Reserve;
import dev.spendgateway.ledger.LedgerProtocol.Reserved;
import dev.spendgateway.ledger.LedgerProtocol.Settle;
import dev.spendgateway.ledger.LedgerProtocol.VoidReservation;
import dev.spendgateway.ledger.Reservation.Owner;
import dev.spendgateway.ledger.Reservation.Status;
import dev.spendgateway.policy.access.Lane;
import dev.spendgateway.policy.caps.CapKey;
import dev.spendgateway.policy.caps.CapName;
import dev.spendgateway.policy.caps.Spend;
import dev.spendgateway.policy.money.Micros;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
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
    return new ReservationMade(
        id, lane, subject, usd(amount), 0, 0, EARLIER, EARLIER.plus(Duration.ofMinutes(15)), owner);
  }

  static Event apiMade(String id, String amount) {
    return made(id, Lane.FREE, null, amount, Owner.LEDGER_API);
  }

  static Event settled(String id, String reserved, String actual) {
    return new ReservationSettled(
        id, Lane.FREE, null, EARLIER, usd(reserved), usd(actual), EARLIER);
  }

  /** A ledger API reserve refused a minute ago by the free pool with $0.20 left. */
  static Event refused(String id, String amount) {
    return new ReservationRefused(
        id,
        Lane.FREE,
        null,
        usd(amount),
        0,
        0,
        CapName.FREE_DAILY,
        null,
        "2026-11-30",
        usd("3"),
        usd("0.20"),
        EARLIER,
        Owner.LEDGER_API);
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
        Arguments.of(
            "a free-lane reserve within every cap is held for the reservation timeout",
            List.of(),
            reserveFree("r-1", "0.50", Owner.LEDGER_API),
            new Reserved("r-1", usd("0.50")),
            List.of(ReservationMade.class)),
        Arguments.of(
            "a reserve above the free pool's headroom is refused and the refusal journaled",
            List.of(apiMade("r-0", "2.80")),
            reserveFree("r-1", "0.50", Owner.LEDGER_API),
            new Refused("r-1", CapName.FREE_DAILY, null, usd("0.20")),
            List.of(ReservationRefused.class)),
        Arguments.of(
            "a repeat of an admitted reserve answers Reserved again and writes nothing",
            List.of(apiMade("r-1", "0.50")),
            reserveFree("r-1", "0.50", Owner.LEDGER_API),
            new Reserved("r-1", usd("0.50")),
            List.of()),
        Arguments.of(
            "a reserve reusing an id for another amount is a conflict and writes nothing",
            List.of(apiMade("r-1", "0.50")),
            reserveFree("r-1", "0.60", Owner.LEDGER_API),
            new Conflict("r-1", "reservation id r-1 was already used for a different request"),
            List.of()),
        Arguments.of(
            "a ledger API reserve of zero is invalid",
            List.of(),
            reserveFree("r-1", "0", Owner.LEDGER_API),
            new Invalid("r-1", "amountUsd", "amountUsd must be greater than 0"),
            List.of()),
        Arguments.of(
            "a ledger API reserve in the gateway's id namespace is invalid",
            List.of(),
            reserveFree("gw-1", "0.10", Owner.LEDGER_API),
            new Invalid(
                "gw-1", "id", "ids starting with gw- are the gateway's own; choose another id"),
            List.of()),
        Arguments.of(
            "a settle of an open reservation closes it at the actual cost",
            List.of(apiMade("r-1", "0.50")),
            apiSettle("r-1", "0.20"),
            new Closed("r-1", Status.SETTLED, usd("0.20")),
            List.of(ReservationSettled.class)),
        Arguments.of(
            "a settle of an unknown id is not found",
            List.of(),
            apiSettle("r-9", "0.20"),
            new NotFound("r-9"),
            List.of()),
        Arguments.of(
            "a settle of a refused id finds nothing open",
            List.of(refused("r-1", "0.50")),
            apiSettle("r-1", "0.10"),
            new NotOpen("r-1", Status.REFUSED),
            List.of()),
        Arguments.of(
            "a ledger API settle of a gateway reservation is forbidden",
            List.of(made("gw-1", Lane.FREE, null, "0.50", Owner.GATEWAY)),
            apiSettle("gw-1", "0.20"),
            new Forbidden(
                "gw-1",
                "reservations made by the gateway's provider routes are settled and voided by the gateway only"),
            List.of()),
        Arguments.of(
            "a void closes an open reservation at zero",
            List.of(apiMade("r-1", "0.50")),
            new VoidReservation("r-1", Owner.LEDGER_API, null),
            new Closed("r-1", Status.VOIDED, 0),
            List.of(ReservationVoided.class)),
        Arguments.of(
            "a gateway settle above its reserve (the provider billed more) is booked as billed",
            List.of(made("gw-1", Lane.FREE, null, "0.50", Owner.GATEWAY)),
            gatewaySettle("gw-1", "0.70"),
            new Closed("gw-1", Status.SETTLED, usd("0.70")),
            List.of(ReservationSettled.class)),
        Arguments.of(
            "a gateway settle far above its reserve (an audio floor) is booked as the provider billed",
            List.of(made("gw-1", Lane.FREE, null, "0.0001", Owner.GATEWAY)),
            gatewaySettle("gw-1", "0.06"),
            new Closed("gw-1", Status.SETTLED, usd("0.06")),
            List.of(ReservationSettled.class)),
        Arguments.of(
            "an operator settle at exactly ten times the reserve is still booked",
            List.of(apiMade("r-1", "0.50")),
            operatorSettle("r-1", "5.00"),
            new Closed("r-1", Status.SETTLED, usd("5.00")),
            List.of(ReservationSettled.class)),
        Arguments.of(
            "an operator settle above ten times the reserve (cents typed as dollars) is refused naming the bound",
            List.of(apiMade("r-1", "0.50")),
            operatorSettle("r-1", "50.00"),
            new Invalid(
                "r-1",
                "actualUsd",
                "actualUsd 50 is above the reserved amountUsd 0.5 and more than"
                    + " ledger.max-settle-multiple (10) times it; a settle that large is refused as a likely units mistake"
                    + " (cents sent as dollars) and the reservation stays open"),
            List.of()),
        Arguments.of(
            "a ledger API settle above ten times the reserve is refused naming the bound",
            List.of(apiMade("r-1", "0.50")),
            apiSettle("r-1", "50.00"),
            new Invalid(
                "r-1",
                "actualUsd",
                "actualUsd 50 is above the reserved amountUsd 0.5 and more than"
                    + " ledger.max-settle-multiple (10) times it; a settle that large is refused as a likely units mistake"
                    + " (cents sent as dollars) and the reservation stays open"),
            List.of()),
        Arguments.of(
            "a settle repeating the first amount answers the first close and writes nothing",
            List.of(apiMade("r-1", "0.50"), settled("r-1", "0.50", "0.20")),
            apiSettle("r-1", "0.20"),
            new Closed("r-1", Status.SETTLED, usd("0.20")),
            List.of()),
        Arguments.of(
            "a repeated settle with a different amount is a conflict and the first amount stays",
            List.of(apiMade("r-1", "0.50"), settled("r-1", "0.50", "0.20")),
            apiSettle("r-1", "0.30"),
            new Conflict(
                "r-1",
                "reservation r-1 was already settled at actualUsd 0.2; a repeated settle must send"
                    + " the same actualUsd"),
            List.of()),
        Arguments.of(
            "a void after a settle answers the settle (the books keep the first close)",
            List.of(apiMade("r-1", "0.50"), settled("r-1", "0.50", "0.20")),
            new VoidReservation("r-1", Owner.LEDGER_API, null),
            new Closed("r-1", Status.SETTLED, usd("0.20")),
            List.of()),
        // A void is a settle at $0. Any token holder can void a ledger API reservation whose id it
        // knows; the service that reserved it must learn that the cost it settles is not booked.
        Arguments.of(
            "a ledger API settle above $0 after a void is a conflict and the books keep $0",
            List.of(apiMade("r-1", "0.50"), voided("r-1", "0.50")),
            apiSettle("r-1", "0.20"),
            new Conflict("r-1", SETTLE_AFTER_VOID),
            List.of()),
        Arguments.of(
            "an operator settle above $0 after a void is a conflict too",
            List.of(apiMade("r-1", "0.50"), voided("r-1", "0.50")),
            operatorSettle("r-1", "0.20"),
            new Conflict("r-1", SETTLE_AFTER_VOID),
            List.of()),
        Arguments.of(
            "a settle at $0 after a void repeats it",
            List.of(apiMade("r-1", "0.50"), voided("r-1", "0.50")),
            apiSettle("r-1", "0"),
            new Closed("r-1", Status.VOIDED, 0),
            List.of()));
  }

  static final String SETTLE_AFTER_VOID =
      "reservation r-1 was voided (booked at $0); actualUsd 0.2 was not booked: settle"
          + " a reservation that is still open, or ask an operator to book the cost as an adjustment";

  static Event voided(String id, String reserved) {
    return new ReservationVoided(id, Lane.FREE, null, EARLIER, usd(reserved), EARLIER);
  }

  /** An operator's settle, decided like the group-committed commands (it carries who and why). */
  static Command operatorSettle(String id, String actual) {
    return new OperatorSettle(id, usd(actual), "alice", "invoice", null);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void decides(
      String sentence, List<Event> given, Command when, Object reply, List<Class<?>> eventTypes) {
    LedgerState state = given(given);
    Decision<?> decision =
        when instanceof OperatorSettle o
            ? DECIDER.operatorSettle(state, o, NOW)
            : DECIDER.decide(state, (Batchable) when, NOW);

    assertEquals(reply, decision.reply());
    assertEquals(eventTypes, decision.events().stream().map(Object::getClass).toList());
  }

  // --- workflow tags, models and providers -----------------------------------------------------

  static Reserve labelled(String id, String amount, String tag, String model, String provider) {
    return new Reserve(
        id, Lane.FREE, null, usd(amount), 0, 0, Owner.LEDGER_API, null, tag, model, provider, null);
  }

  @ParameterizedTest(name = "tag {0}, model {1}, provider {2}: journaled as sent")
  @org.junit.jupiter.params.provider.CsvSource(
      nullValues = "null",
      value = {
        "onboarding, gpt-6.1-sol, openai",
        "null, claude-haiku-5-5, anthropic",
        "onboarding, null, null",
        "null, null, null"
      })
  void aReservationAndARefusalKeepTheCallersTagModelAndProvider(
      String tag, String model, String provider) {
    Decision<?> made =
        DECIDER.decide(LedgerState.empty(), labelled("r-t", "0.50", tag, model, provider), NOW);
    ReservationMade reservation = (ReservationMade) made.events().get(0);
    assertEquals(
        Arrays.asList(tag, model, provider),
        Arrays.asList(reservation.tag(), reservation.model(), reservation.provider()));

    // $3 free pool, $0.20 left: the refusal of the next one is journaled with them too.
    LedgerState full = given(List.of(made("r-f", Lane.FREE, null, "2.80", Owner.LEDGER_API)));
    Decision<?> refused = DECIDER.decide(full, labelled("r-u", "0.50", tag, model, provider), NOW);
    ReservationRefused refusal = (ReservationRefused) refused.events().get(0);
    assertEquals(
        Arrays.asList(tag, model, provider),
        Arrays.asList(refusal.tag(), refusal.model(), refusal.provider()));
  }

  @ParameterizedTest(name = "{0}: refused before the books, naming {4}")
  @org.junit.jupiter.params.provider.CsvSource(
      delimiter = '|',
      nullValues = "null",
      value = {
        "a comma in the tag        | a,b  | null        | null    | tag",
        "a space in the model      | null | 'gpt 6'     | openai  | model",
        "a quote in the provider   | null | gpt-6.1-sol | open\"ai | provider"
      })
  void aMalformedLabelIsRefusedBeforeTheBooksAndNamed(
      String sentence, String tag, String model, String provider, String field) {
    Decision<?> d =
        DECIDER.decide(LedgerState.empty(), labelled("r-t", "0.50", tag, model, provider), NOW);
    assertEquals(List.of(), d.events());
    Invalid invalid = assertInstanceOf(Invalid.class, d.reply());
    assertEquals(field, invalid.field());
  }

  // --- adjustments by window ------------------------------------------------------------------

  static final Instant YESTERDAY = Instant.parse("2026-11-29T15:00:00Z");

  /**
   * Brand b1 (caps $100 a day, $1000 a month) spent {@code amount} at {@code at}, settled at once.
   */
  static List<Event> b1Spent(String id, String amount, Instant at) {
    return List.of(
        new ReservationMade(
            id,
            Lane.APP,
            "b1",
            usd(amount),
            usd("100"),
            usd("1000"),
            at,
            at.plus(Duration.ofMinutes(15)),
            Owner.GATEWAY),
        new ReservationSettled(id, Lane.APP, "b1", at, usd(amount), usd(amount), at));
  }

  static Adjust adjust(String id, String delta, String window, AdjustmentScope scope) {
    return new Adjust(id, "alice", "ticket 812", Lane.APP, "b1", usd(delta), window, scope, null);
  }

  static Reserve reserveB1(String id, String amount) {
    return new Reserve(
        id, Lane.APP, "b1", usd(amount), usd("100"), usd("1000"), Owner.GATEWAY, null);
  }

  static LedgerState applied(LedgerState state, Decision<?> decision) {
    for (Event e : decision.events()) {
      state = state.applied(e);
    }
    return state;
  }

  /**
   * Yesterday $30 was spent and refunded; today the global day is full: the refund must not reopen
   * it.
   */
  @Test
  void aRefundForYesterdayNeverGivesTodaysCapsRoom() {
    List<Event> history = new java.util.ArrayList<>(b1Spent("gw-y", "30", YESTERDAY));
    history.addAll(b1Spent("gw-t", "40", EARLIER));
    LedgerState state = given(history);

    Decision<AdjustReply> refund =
        DECIDER.adjust(
            state, adjust("ticket-812", "-30", "2026-11-29", AdjustmentScope.REFUND), NOW);
    assertEquals(
        new Adjusted(
            "ticket-812",
            Lane.APP,
            "b1",
            -usd("30"),
            "alice",
            "ticket 812",
            "2026-11-29",
            AdjustmentScope.REFUND),
        refund.reply());
    state = applied(state, refund);

    assertEquals(
        new Refused("gw-1", CapName.GLOBAL_DAILY, null, 0),
        DECIDER.reserve(state, reserveB1("gw-1", "1"), NOW).reply());
    assertEquals(
        0, state.spendOn(new CapKey(CapName.GLOBAL_DAILY, null, "2026-11-29")).settledMicros());
    assertEquals(
        usd("40"),
        state.spendOn(new CapKey(CapName.GLOBAL_DAILY, null, "2026-11-30")).settledMicros());
    // The month holds what was really spent in it: 30 + 40 - 30.
    assertEquals(
        usd("40"),
        state.spendOn(new CapKey(CapName.GLOBAL_MONTHLY, null, "2026-11")).settledMicros());
  }

  /**
   * A grant is the company's gift to one brand: the provider's bill, and so the global caps, stay.
   */
  @Test
  void aGrantMovesOnlyTheBrandsOwnCaps() {
    LedgerState state = given(b1Spent("gw-t", "20", EARLIER));

    state =
        applied(
            state,
            DECIDER.adjust(
                state, adjust("goodwill-1", "-5", "2026-11-30", AdjustmentScope.GRANT), NOW));

    assertEquals(
        usd("15"),
        state.spendOn(new CapKey(CapName.BRAND_DAILY, "b1", "2026-11-30")).settledMicros());
    assertEquals(
        usd("15"),
        state.spendOn(new CapKey(CapName.BRAND_MONTHLY, "b1", "2026-11")).settledMicros());
    assertEquals(
        usd("20"),
        state.spendOn(new CapKey(CapName.GLOBAL_DAILY, null, "2026-11-30")).settledMicros());
    assertEquals(
        usd("20"),
        state.spendOn(new CapKey(CapName.GLOBAL_MONTHLY, null, "2026-11")).settledMicros());
  }

  static Stream<Arguments> adjustmentRows() {
    List<Event> spentToday = b1Spent("gw-t", "20", EARLIER);
    return Stream.of(
        Arguments.of(
            "a refund naming a month that has not begun is invalid",
            spentToday,
            adjust("a-1", "-1", "2026-12", AdjustmentScope.REFUND),
            "window"),
        Arguments.of(
            "a refund naming no window is invalid",
            spentToday,
            adjust("a-1", "-1", null, AdjustmentScope.REFUND),
            "window"),
        Arguments.of(
            "a refund naming a day that does not exist is invalid",
            spentToday,
            adjust("a-1", "-1", "2026-11-31", AdjustmentScope.REFUND),
            "window"),
        Arguments.of(
            "an adjustment that says neither grant nor refund is invalid",
            spentToday,
            adjust("a-1", "-1", "2026-11-30", null),
            "scope"),
        Arguments.of(
            "a grant on the free lane (no brand caps to move) is invalid",
            spentToday,
            new Adjust(
                "a-1",
                "alice",
                "x",
                Lane.FREE,
                null,
                -1,
                "2026-11-30",
                AdjustmentScope.GRANT,
                null),
            "scope"),
        Arguments.of(
            "a credit on a month that ended and is gone from the books has nothing to correct",
            spentToday,
            adjust("a-1", "-1", "2026-10", AdjustmentScope.REFUND),
            "window"),
        Arguments.of(
            "a credit on today above the brand's spend today is refused below zero",
            spentToday,
            adjust("a-1", "-21", "2026-11-30", AdjustmentScope.GRANT),
            "brand_daily"),
        Arguments.of(
            "a credit on yesterday (its day gone) above the month's spend is refused below zero",
            spentToday,
            adjust("a-1", "-21", "2026-11-29", AdjustmentScope.REFUND),
            "global_monthly"),
        Arguments.of(
            "the same id again with another window is a conflict",
            List.of(
                spentToday.get(0),
                spentToday.get(1),
                new SpendAdjusted(
                    "a-1",
                    "alice",
                    "x",
                    Lane.APP,
                    "b1",
                    -usd("1"),
                    EARLIER,
                    "2026-11-30",
                    AdjustmentScope.REFUND)),
            adjust("a-1", "-1", "2026-11", AdjustmentScope.REFUND),
            "conflict"),
        Arguments.of(
            "the same id again with another scope is a conflict",
            List.of(
                spentToday.get(0),
                spentToday.get(1),
                new SpendAdjusted(
                    "a-1",
                    "alice",
                    "x",
                    Lane.APP,
                    "b1",
                    -usd("1"),
                    EARLIER,
                    "2026-11-30",
                    AdjustmentScope.REFUND)),
            adjust("a-1", "-1", "2026-11-30", AdjustmentScope.GRANT),
            "conflict"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("adjustmentRows")
  void refusesAdjustmentsThatNameNoRealWindowOrGoBelowZero(
      String sentence, List<Event> given, Adjust when, String refusedOn) {
    Decision<AdjustReply> decision = DECIDER.adjust(given(given), when, NOW);

    String actual =
        decision.reply() instanceof Invalid i
            ? i.field()
            : decision.reply() instanceof AdjustRefused r
                ? r.cap().wireName()
                : decision.reply() instanceof Conflict ? "conflict" : decision.reply().toString();
    assertEquals(refusedOn, actual);
    assertEquals(List.of(), decision.events());
  }

  /**
   * Yesterday's day window is no longer in the books (compacted, or never spent in): a refund for
   * yesterday moves this month, which is what still decides reserves, and leaves no trace in a day.
   */
  @Test
  void aRefundForADayNoLongerInTheBooksMovesItsMonthOnly() {
    LedgerState state = given(b1Spent("gw-t", "20", EARLIER));

    Decision<AdjustReply> refund =
        DECIDER.adjust(state, adjust("a-1", "-5", "2026-11-29", AdjustmentScope.REFUND), NOW);
    state = applied(state, refund);

    assertInstanceOf(Adjusted.class, refund.reply());
    assertEquals(
        usd("15"),
        state.spendOn(new CapKey(CapName.GLOBAL_MONTHLY, null, "2026-11")).settledMicros());
    assertEquals(
        usd("15"),
        state.spendOn(new CapKey(CapName.BRAND_MONTHLY, "b1", "2026-11")).settledMicros());
    assertEquals(
        usd("20"),
        state.spendOn(new CapKey(CapName.GLOBAL_DAILY, null, "2026-11-30")).settledMicros());
    assertEquals(Spend.NONE, state.spendOn(new CapKey(CapName.GLOBAL_DAILY, null, "2026-11-29")));
  }

  /** An adjustment journaled before adjustments named a window replays as it always applied. */
  @Test
  void anOldAdjustmentReadsAsARefundOnTheDayItWasMade() {
    SpendAdjusted old =
        new SpendAdjusted("adj-1", "alice", "refund", Lane.APP, "b1", -usd("1"), EARLIER);
    assertEquals("2026-11-30", old.window());
    assertEquals(AdjustmentScope.REFUND, old.scope());

    LedgerState state = given(b1Spent("gw-t", "3", EARLIER)).applied(old);
    for (CapKey k :
        List.of(
            new CapKey(CapName.BRAND_DAILY, "b1", "2026-11-30"),
            new CapKey(CapName.BRAND_MONTHLY, "b1", "2026-11"),
            new CapKey(CapName.GLOBAL_DAILY, null, "2026-11-30"),
            new CapKey(CapName.GLOBAL_MONTHLY, null, "2026-11"))) {
      assertEquals(usd("2"), state.spendOn(k).settledMicros(), k.toString());
    }
  }

  // --- deadlines
  // ----------------------------------------------------------------------------------

  static Stream<Arguments> deadlineRows() {
    Instant justPast = NOW.minusMillis(1);
    return Stream.of(
        Arguments.of(
            "a reserve reaching the writer after its caller gave up is dropped: nothing booked, no reply",
            List.of(),
            new Reserve(
                "r-1", Lane.FREE, null, usd("0.50"), 0, 0, Owner.LEDGER_API, justPast, null),
            true),
        Arguments.of(
            "a settle past its deadline is dropped and the reservation stays open",
            List.of(apiMade("r-1", "0.50")),
            new Settle("r-1", usd("0.20"), Owner.LEDGER_API, justPast, null),
            true),
        Arguments.of(
            "a void past its deadline is dropped",
            List.of(apiMade("r-1", "0.50")),
            new VoidReservation("r-1", Owner.LEDGER_API, justPast, null),
            true),
        Arguments.of(
            "a reserve decided exactly at its deadline is still decided",
            List.of(),
            new Reserve("r-1", Lane.FREE, null, usd("0.50"), 0, 0, Owner.LEDGER_API, NOW, null),
            false),
        Arguments.of(
            "a command without a deadline is always decided",
            List.of(),
            reserveFree("r-1", "0.50", Owner.LEDGER_API),
            false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("deadlineRows")
  void dropsWhatItsCallerGaveUpOn(
      String sentence, List<Event> given, Batchable when, boolean dropped) {
    Decision<?> decision = DECIDER.decide(given(given), when, NOW);

    assertEquals(dropped, decision.isDropped());
    assertEquals(dropped, decision.events().isEmpty());
  }

  @Test
  void aBatchCountsWhatItDropped() {
    var batch =
        DECIDER.decideBatch(
            LedgerState.empty(),
            List.of(
                new Reserve(
                    "late",
                    Lane.FREE,
                    null,
                    usd("1"),
                    0,
                    0,
                    Owner.LEDGER_API,
                    NOW.minusSeconds(1),
                    null),
                new Reserve(
                    "on-time",
                    Lane.FREE,
                    null,
                    usd("1"),
                    0,
                    0,
                    Owner.LEDGER_API,
                    NOW.plusSeconds(1),
                    null)),
            NOW);

    assertEquals(1, batch.dropped());
    assertEquals(
        List.of(ReservationMade.class), batch.events().stream().map(Object::getClass).toList());
  }

  @Test
  void aBatchDecidesEachCommandAgainstTheStateTheOnesBeforeItLeft() {
    var batch =
        DECIDER.decideBatch(
            LedgerState.empty(),
            List.of(
                reserveFree("r-1", "2.00", Owner.LEDGER_API),
                reserveFree("r-2", "2.00", Owner.LEDGER_API),
                apiSettle("r-1", "0.50")),
            NOW);

    assertEquals(new Reserved("r-1", usd("2.00")), batch.decided().get(0).decision().reply());
    assertEquals(
        new Refused("r-2", CapName.FREE_DAILY, null, usd("1.00")),
        batch.decided().get(1).decision().reply());
    assertEquals(
        new Closed("r-1", Status.SETTLED, usd("0.50")), batch.decided().get(2).decision().reply());
    assertEquals(3, batch.events().size());
  }
}
