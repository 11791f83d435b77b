package dev.spendgateway.ledger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.spendgateway.policy.access.Lane;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class OpenReservationsTest {
  private static final Instant T0 = Instant.parse("2026-11-30T10:00:00Z");

  private static Reservation open(String id, int expiresInSeconds) {
    return new Reservation(
        id,
        Lane.FREE,
        null,
        1_000,
        0,
        0,
        T0,
        T0.plusSeconds(expiresInSeconds),
        Reservation.Status.RESERVED,
        0,
        null,
        null,
        Reservation.Owner.LEDGER_API);
  }

  private static List<String> ids(List<Reservation> rs) {
    return rs.stream().map(Reservation::id).toList();
  }

  @Test
  void dueReservationsComeOldestFirstAndOnlyThoseWhoseTimeHasCome() {
    OpenReservations open =
        OpenReservations.empty()
            .with("c", open("c", 30))
            .with("a", open("a", 10))
            .with("b", open("b", 20));
    assertEquals(List.of(), ids(open.dueBy(T0.plusSeconds(9))));
    assertEquals(List.of("a", "b"), ids(open.dueBy(T0.plusSeconds(20))));
    assertEquals(List.of("a", "b", "c"), ids(open.dueBy(T0.plusSeconds(3600))));
  }

  @Test
  void twoReservationsExpiringAtTheSameInstantAreBothKept() {
    OpenReservations open =
        OpenReservations.empty().with("x", open("x", 10)).with("y", open("y", 10));
    assertEquals(List.of("x", "y"), ids(open.dueBy(T0.plusSeconds(10))));
  }

  @Test
  void aClosedReservationLeavesBothTheMapAndTheIndex() {
    OpenReservations before =
        OpenReservations.empty().with("a", open("a", 10)).with("b", open("b", 20));
    OpenReservations after = before.without("a");
    assertNull(after.get("a"));
    assertEquals(1, after.size());
    assertEquals(List.of("b"), ids(after.dueBy(T0.plusSeconds(3600))));
    assertEquals(2, before.size(), "the previous state is unchanged");
    assertEquals(after, after.without("missing") == after ? after : null);
  }

  @Test
  void builtInOneGoFromAnyOrderItIsTheSameAsOneAtATime() {
    List<Reservation> listed =
        List.of(open("c", 30), open("a", 10), open("x", 10), open("b", 20), open("y", 10));
    OpenReservations oneAtATime = OpenReservations.empty();
    for (Reservation r : listed) {
      oneAtATime = oneAtATime.with(r.id(), r);
    }
    for (List<Reservation> order :
        List.of(listed, oneAtATime.inExpiryOrder(), reversed(oneAtATime.inExpiryOrder()))) {
      OpenReservations built = OpenReservations.of(order);
      assertEquals(oneAtATime.asMap(), built.asMap());
      assertEquals(List.of("a", "x", "y", "b", "c"), ids(built.inExpiryOrder()));
      assertEquals(List.of("a", "x", "y"), ids(built.dueBy(T0.plusSeconds(10))));
      assertEquals(4, built.without("x").size());
      assertEquals(6, built.with("d", open("d", 5)).size());
    }
  }

  @Test
  void anIdListedTwiceKeepsTheLaterAsOneAtATimeDoes() {
    OpenReservations built = OpenReservations.of(List.of(open("a", 10), open("a", 40)));
    assertEquals(1, built.size());
    assertEquals(T0.plusSeconds(40), built.get("a").expiresAt());
    assertEquals(List.of(), built.dueBy(T0.plusSeconds(39)));
    assertEquals(List.of("a"), ids(built.dueBy(T0.plusSeconds(40))));
  }

  private static List<Reservation> reversed(List<Reservation> rs) {
    List<Reservation> out = new java.util.ArrayList<>(rs);
    java.util.Collections.reverse(out);
    return out;
  }
}
